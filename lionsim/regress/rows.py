"""One line of a regression report: a case, a run, a metric and its verdict."""

from __future__ import annotations

import math
from dataclasses import dataclass

from lionsim.numbers import sig

PASS = "pass"
IMPROVED = "improved"
"""Better than the baseline by more than the tolerance: passes, but the baseline is stale."""
REGRESSED = "REGRESSED"
MISSING = "missing"
"""Nothing to compare with: the baseline lacks this case, run or metric (or the run lacks it)."""
OUTDATED = "outdated"
"""The case or run is defined differently from when the baseline was written."""
FAILED = "FAILED"
"""The run stopped (diverged) or a cross-check does not hold."""
CHANGED = "CHANGED"
"""Strict mode: differs from the baseline past float noise, either way (fingerprint.py)."""
UNGUARDED = "unguarded"
"""Passes, but would pass whatever it read: its tolerance reaches the worst value the metric
can take (an accuracy of 0, the untrained model's loss), so it guards nothing (vit in float
mode, where float noise alone moves an accuracy by 0.12 rms)."""

FAILING = frozenset({REGRESSED, MISSING, OUTDATED, FAILED, CHANGED})

CROSS_CHECK_PREFIX = "check:"
"""Metric names of cross-check rows start with this."""


@dataclass(frozen=True, slots=True)
class Row:
    case: str
    run: str
    """strategy@transport."""
    metric: str
    verdict: str
    baseline: float = math.nan
    """The baseline value (for a cross-check: the reference it is held to)."""
    now: float = math.nan
    tol: float = math.nan
    """Tolerance (for a cross-check: the margin)."""
    note: str = ""
    """Why, in words, with the numbers."""
    excess: float = math.nan
    """How far `now` is on the worse side of `baseline`, in tolerances (> 1: past it; < 0: better)."""

    @property
    def failed(self) -> bool:
        return self.verdict in FAILING

    @property
    def unguarded(self) -> bool:
        return self.verdict == UNGUARDED

    @property
    def is_cross_check(self) -> bool:
        return self.metric.startswith(CROSS_CHECK_PREFIX)

    def rank(self) -> tuple[bool, float]:
        """Sort key, largest = most worth showing: failing rows first, then by excess."""
        return (self.failed, -math.inf if math.isnan(self.excess) else self.excess)


def group_rows(rows: list[Row]) -> dict[tuple[str, str], list[Row]]:
    """Rows by (case, run), in first-appearance order."""
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        groups.setdefault((row.case, row.run), []).append(row)
    return groups


def shown_rows(rows: list[Row], everything: bool = False) -> list[Row]:
    """The rows a report shows: all of them, or per (case, run) every failing or improved row,
    and the run's closest-to-failing row when all its rows pass."""
    if everything:
        return list(rows)
    shown = []
    for group in group_rows(rows).values():
        notable = [r for r in group if r.failed or r.verdict == IMPROVED]
        shown += notable or [max(group, key=Row.rank)]
    return shown


def fmt(value: float) -> str:
    """A number for a report: 4 significant digits, trailing zeros kept (1.500, 0.02000: a column's
    rows read to one precision), whole and grouped from 10,000 up (9999.7 too: never 1e+04), '-'
    when there is none."""
    return "-" if math.isnan(value) else sig(value, 4)
