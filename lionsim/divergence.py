"""When a run has diverged: the one rule the run loop applies, and its words for every table,
report and doc that says "diverged".

A run diverges at the first step where, on any worker, the loss or gradient is not finite, or
where the mean loss is above BLOWUP times the run's first step's (when that loss is positive).
Non-finite values alone missed runs that plainly blew up: 1-bit Adam frozen after one step
went 2.29, 2.35, 12.9, 9172 in four steps and finished "not diverged". 100x a loss at
initialization is far above any noise a working run shows (a loss that has fallen and bounces
back stays below its start), so no run that trains is cut. A loss that starts at 0 or below (a
plug-in workload's) has no scale to compare with: for it only non-finite values count.
"""

from __future__ import annotations

BLOWUP = 100.0
"""How many times the first step's loss a mean loss may reach before the run counts as diverged."""

RULE = f"a loss or gradient went non-finite, or the loss passed {BLOWUP:.0f}x its first step's"
"""The rule in words (tables' captions, report.md, the regress line)."""


def blew_up(loss: float, first: float) -> bool:
    """Whether a finite mean `loss` is a divergence against the run's `first` step's loss."""
    return first > 0 and loss > BLOWUP * first
