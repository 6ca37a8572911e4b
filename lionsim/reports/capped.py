"""A bandwidth sweep past the library's cap (NCCL over sockets: 1.96 GB/s a node whatever the link):
the crossover table's note (terminal and report) that the points above it price the link at the cap,
so their step times and speedups repeat the cap's rather than the swept link's."""

from __future__ import annotations

import math

import pandas as pd

CAPPED = "capped_above_GBps"
"""crossover.csv's column: the cap where a swept bandwidth passes it, else NaN (lionsim.estimate.sweep)."""


def capped_note(crossings: pd.DataFrame, values) -> str:
    """One line naming the cap and the swept bandwidths above it, "" where none passes it (or a
    crossover.csv written before the column)."""
    caps = crossings[CAPPED].dropna() if CAPPED in crossings.columns else pd.Series(dtype=float)
    if caps.empty or not math.isfinite(cap := float(caps.iloc[0])):
        return ""
    above = [float(v) for v in values if float(v) > cap]
    if not above:
        return ""
    at = ", ".join(f"{v:.3g}" for v in above)
    return (f"capped: NCCL moves at most {cap:.3g} GB/s a node on this fabric, so at {at} GB/s the link is "
            f"priced at {cap:.3g} GB/s: those points repeat the cap's step times (except where NCCL's algorithm "
            "flips on the link's rate), and their speedups are the cap's, not the swept link's.")
