"""Measured hyperparameter defaults per (strategy, workload) pair.

A strategy's own `defaults` (its module) were tuned on the default `vit` bench; a workload
listed here overrides them for the strategies it names. Every entry says what was measured.
`lionsim strategies --workload NAME` shows the defaults a run on NAME gets.
"""

from __future__ import annotations

from lionsim.strategies.base import Hyper

LION_FAMILY = ("lion", "dlion-mavo", "dlion-avg", "lioncub-l1", "signum-mv")

WORKLOAD_DEFAULTS: dict[str, dict[str, Hyper]] = {}
"""workload -> strategy -> Hyper; filled below, one block per workload with its measurement."""


def workload_defaults(strategy: str, workload: str | None) -> Hyper | None:
    """The measured override for (strategy, workload), or None to keep the strategy's own."""
    return WORKLOAD_DEFAULTS.get(workload or "", {}).get(strategy)
