"""Fitted collectives: a profile's own link for one collective, piecewise in message size.

A real backend does not follow one alpha-beta line over all sizes: gloo, for one, changes
algorithm and protocol with the message size, so a line through small and large messages
misses both (REFERENCE.md 8: a single line per collective left median errors of 18-20%).
A profile may therefore give a collective its own links, one per size regime:

    [collectives.all_reduce]
    algorithm = "ring"                  # the formula the links are parameters of
    fitted_workers = 2                  # N the fit was measured at (a record; optional)
    regimes = [
      {max_bytes = 1048576, alpha_us = 310.0, bandwidth_GBps = 1.1},
      {alpha_us = 95.0, bandwidth_GBps = 2.4},       # the last regime: every larger size
    ]

A call of that op on n bytes (calls.py convention) takes the first regime with
n <= max_bytes (the last has no bound) and is priced flat among its N workers by the
algorithm's own formula with that regime's alpha and beta: ring all_reduce costs
2(N-1) alpha + 2(N-1)/N n beta whatever N is. The fit solves that formula at the N it
measured, so for the same N it reproduces the fitted curve exactly, and for another N it
extrapolates as the algorithm says (alpha per step, beta per byte on the busiest link). The
fitted entry replaces the topology for its op (it is what was measured end to end); ops
without an entry use [inter]/[intra] as before. gamma (reduction) cannot be told apart from
beta at one N, so it is folded into beta.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lionsim.errors import LionsimError
from lionsim.network.link import GB, US, Link

FIT_ALGORITHMS = {
    "all_reduce": "ring",
    "all_gather": "ring",
    "reduce_scatter": "ring",
    "all_to_all": "pairwise",
    "broadcast": "binomial",
    "reduce": "binomial",
}
"""The formula each op is fitted in: all linear in alpha and beta at a given N."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Regime:
    """One size range of a fitted collective."""

    max_bytes: float = math.inf
    """The largest message (calls.py convention, bytes) this regime prices; inf for the last."""
    link: Link
    """alpha and beta of the collective's formula within this range (gamma folded into beta)."""

    def to_dict(self) -> dict[str, float]:
        out: dict[str, float] = {} if math.isinf(self.max_bytes) else {"max_bytes": int(self.max_bytes)}
        out["alpha_us"] = self.link.alpha_s / US
        out["bandwidth_GBps"] = self.link.bandwidth_Bps * self.link.efficiency / GB
        return out


@dataclass(frozen=True, kw_only=True, slots=True)
class FittedCollective:
    """A collective's own links, by size regime (see the module doc)."""

    op: str
    """The collective: a key of FIT_ALGORITHMS."""
    algorithm: str
    """The registered algorithm whose formula prices it (FIT_ALGORITHMS' choice by default)."""
    regimes: tuple[Regime, ...]
    """Ascending max_bytes; the last one is unbounded."""
    fitted_workers: int | None = None
    """N the links were fitted at (a record: pricing works for every N)."""

    def __post_init__(self) -> None:
        if self.op not in FIT_ALGORITHMS:
            raise LionsimError(f"no fitted links for collective {self.op!r}; accepted: {', '.join(FIT_ALGORITHMS)}")
        if not self.regimes:
            raise LionsimError(f"collectives.{self.op}: needs at least one regime")
        bounds = [r.max_bytes for r in self.regimes]
        if not math.isinf(bounds[-1]) or any(math.isinf(b) for b in bounds[:-1]):
            raise LionsimError(f"collectives.{self.op}: every regime but the last needs max_bytes, the last none")
        if any(b <= a for a, b in zip(bounds, bounds[1:])):
            raise LionsimError(f"collectives.{self.op}: regimes' max_bytes must increase, got {bounds[:-1]}")

    def link_for(self, nbytes: float) -> Link:
        """The link of the first regime whose max_bytes holds `nbytes`."""
        return next(r.link for r in self.regimes if nbytes <= r.max_bytes)

    def to_dict(self) -> dict:
        out: dict = {"algorithm": self.algorithm}
        if self.fitted_workers is not None:
            out["fitted_workers"] = self.fitted_workers
        out["regimes"] = [r.to_dict() for r in self.regimes]
        return out
