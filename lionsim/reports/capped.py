"""A bandwidth sweep past the library's cap (NCCL over sockets: 1.96 GB/s a node whatever the link):
the crossover table's note (terminal and report) that the points above it price the link at the cap,
so their step times and speedups repeat the cap's rather than the swept link's, and the mark the
report's tables by bandwidth put on those rows."""

from __future__ import annotations

import math

import pandas as pd

from lionsim.reports.points import labels, points_text

CAPPED = "capped_above_GBps"
"""crossover.csv's column: the cap where a swept bandwidth passes it, else NaN (lionsim.estimate.sweep)."""

MARK = "(capped)"
"""After a swept bandwidth in the report's tables by bandwidth: the row is priced at the cap."""


def capped_values(crossings: pd.DataFrame, values) -> tuple[float, list]:
    """The cap and the swept values above it; (NaN, []) where none passes it (or a crossover.csv
    written before the column)."""
    caps = crossings[CAPPED].dropna() if CAPPED in crossings.columns else pd.Series(dtype=float)
    if caps.empty or not math.isfinite(cap := float(caps.iloc[0])):
        return math.nan, []
    above = [v for v in values if float(v) > cap]
    return (cap, above) if above else (math.nan, [])


def capped_note(crossings: pd.DataFrame, values) -> str:
    """One line naming the cap and the swept bandwidths above it ("at 3.16, 10, 31.6 GB/s"; past
    points.FEW "at the 569 points from 1.97 to 100 GB/s": a 1,000-point sweep listed 569), "" where
    none passes it."""
    cap, above = capped_values(crossings, values)
    if not above:
        return ""
    values = sorted(float(v) for v in values)
    at = points_text([i for i, v in enumerate(values) if v > cap], labels(values, "bandwidth"), "bandwidth")
    return (f"capped: NCCL moves at most {cap:.3g} GB/s a node on this fabric, so at {at} the link is "
            f"priced at {cap:.3g} GB/s: those points repeat the cap's step times (except where NCCL's algorithm "
            "flips on the link's rate), and their speedups are the cap's, not the swept link's.")


def mark_line(cap: float) -> str:
    """The line under a report table whose rows carry MARK."""
    return (f"{MARK}: the bandwidth passes NCCL's cap of {cap:.3g} GB/s a node, so the link is priced at the cap "
            "(see Crossovers).")
