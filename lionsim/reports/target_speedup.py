"""A run's time-to-target speedup in words: the one rule of the bench table, report.md, the docs'
generated tables and the sweep plots' legends, so that none calls a run that got there "not reached".

The speedup is the baseline's time to target / this run's, so a figure needs both to get there:

- "n/a": no target was set (the baseline diverged under the default rule);
- "not reached": this run never got there;
- ">2.06x": this run got there and the baseline never did, in its whole run: it would have needed
  longer than that, so the speedup is more than the baseline's modelled time (its sim_time_s) /
  this run's time to target (summary.csv's time_to_target_speedup_above);
- "2.06x": both got there (time_to_target_speedup).
"""

from __future__ import annotations

import math

from lionsim.numbers import speedup_text

NO_BASELINE, NO_TARGET, NOT_REACHED = "no baseline", "no target", "not reached"
BASELINE_NOT_REACHED, REACHED = "baseline not reached", "reached"
"""The kinds of to_target_kind, the last the one with a speedup."""
ABOVE_NOTE = ">: at least this, the baseline's whole run's time / this run's (the baseline never got there)"
"""What the ">" of to_target_text means, in every caption that shows one."""


def _missing(value) -> bool:
    """Whether a summary cell holds nothing (NaN, None: a CSV's empty cell, or no column)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def speedup_above(baseline_time_s: float, baseline_reached: bool, time_to_target_s: float) -> float:
    """The lower bound on a run's speedup where it got there and the baseline did not: the baseline's
    whole run's time / this run's time to target; NaN otherwise (the speedup itself, or none)."""
    if baseline_reached or not math.isfinite(time_to_target_s) or not time_to_target_s > 0:
        return math.nan
    return baseline_time_s / time_to_target_s


def to_target_kind(row) -> str:
    """Which of the module's cases a summary row is (a namedtuple or a Series: summary.csv's columns
    target_loss, target_reached and time_to_target_speedup; where a frame lacks target_reached,
    time_to_target_s decides, and one without target_loss has a target), or "no baseline": a
    sweep's cell whose baseline has not finished (its baseline column empty)."""
    if _missing(getattr(row, "baseline", "")):
        return NO_BASELINE
    if _missing(getattr(row, "target_loss", 0.0)):
        return NO_TARGET
    reached = getattr(row, "target_reached", None)
    if _missing(reached):
        reached = not _missing(getattr(row, "time_to_target_s", None))
    if not bool(reached):
        return NOT_REACHED
    return REACHED if math.isfinite(getattr(row, "time_to_target_speedup", math.nan)) else BASELINE_NOT_REACHED


def to_target_text(row) -> str:
    """A summary row's "to target" cell (module doc): "2.06x", ">2.06x", "not reached" or "n/a";
    "baseline not reached" where a row has no lower bound (a summary written before it), "no
    baseline" in a sweep's cell whose baseline has not finished."""
    kind = to_target_kind(row)
    if kind == REACHED:
        return speedup_text(row.time_to_target_speedup)
    if kind == BASELINE_NOT_REACHED:
        above = getattr(row, "time_to_target_speedup_above", math.nan)
        return f">{speedup_text(above)}" if not _missing(above) and math.isfinite(above) else BASELINE_NOT_REACHED
    return {NO_TARGET: "n/a", NO_BASELINE: NO_BASELINE}.get(kind, NOT_REACHED)


def shows_above(summary) -> bool:
    """Whether any row of a summary frame shows a ">" lower bound (its caption then says what it means)."""
    return any(to_target_text(row).startswith(">") for row in summary.itertuples(index=False))
