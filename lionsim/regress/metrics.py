"""The metrics a regression case checks, computed from one run's step records.

Per run (strategy@transport):
- final_loss: trailing mean of the training loss over the last 10% of steps (as summary.csv).
- best_loss: lowest training loss of any step.
- eval_loss, eval_acc: held-out loss and accuracy at the last step (accuracy is next-token
  accuracy for a language model; left out where the workload reports none). A workload whose
  own metric is better lower (an error rate: steps.csv's eval_higher_is_better 0) has it as
  eval_acc_lower_is_better instead, which regresses when it rises.
- loss@STEP: the same trailing mean at 25%, 50% and 75% of the run: the shape of the curve,
  so a run that gets to the same end by a worse path still shows.
- gap_to_lion: final_loss minus global Lion's final_loss on the same seed (Lion-family runs
  in cases that also run lion). Both runs see the same initial model and batches, so the
  difference cancels much of the seed-to-seed variation: on the i.i.d. mlp and gpt cases its
  spread is 2-10x smaller than the loss's own, so a change to one strategy shows there long
  before its absolute loss leaves its tolerance (not on vit, whose 150 steps end in the
  steep part of the curve, nor under label skew, where the split itself moves the gap).
"""

from __future__ import annotations

import math

import pandas as pd

from lionsim.reports.columns import eval_metric
from lionsim.reports.summary import final_window, smooth

CHECKPOINTS = (0.25, 0.5, 0.75)
"""Fractions of the run where loss@STEP is read."""
LOWER_EVAL = "eval_acc_lower_is_better"
"""eval_acc of a workload whose metric is better lower: a name of its own, so a baseline never
compares it in the other direction."""
HIGHER_IS_BETTER = frozenset({"eval_acc"})
"""Metrics that regress when they fall; every other metric regresses when it rises."""
ACCURACY_METRICS = frozenset({"eval_acc", LOWER_EVAL})


def worst_reading(metric: str, untrained: float) -> float | None:
    """The worst value `metric` can read and still mean something: 0 for an accuracy, the
    untrained model's held-out loss `untrained` for a loss (a run above it did not train); None
    where no bound is known (a gap to Lion, an error rate of unknown range)."""
    if metric == "eval_acc":
        return 0.0
    if metric in ("final_loss", "best_loss", "eval_loss") or metric.startswith("loss@"):
        return untrained
    return None


def checkpoint_steps(steps: int) -> list[int]:
    """The steps loss@STEP is read at (distinct, at least 1)."""
    return list(dict.fromkeys(max(1, round(f * steps)) for f in CHECKPOINTS))


def run_metrics(rows: pd.DataFrame) -> dict[str, float]:
    """Metrics of one run from its step rows (one strategy@transport, any order)."""
    rows = rows.sort_values("step").reset_index(drop=True)
    window = final_window(len(rows))
    curve = smooth(rows["loss"], window)
    evals = rows.dropna(subset=["eval_loss"])
    metrics = {
        "final_loss": float(curve.iloc[-1]),
        "best_loss": float(rows["loss"].min()),
        "eval_loss": float(evals["eval_loss"].iloc[-1]),
    }
    acc = float(evals["eval_acc"].iloc[-1])
    if not math.isnan(acc):
        metrics["eval_acc" if eval_metric(rows)[1] else LOWER_EVAL] = acc
    for step in checkpoint_steps(len(rows)):
        metrics[f"loss@{step}"] = float(curve.iloc[step - 1])
    return metrics


def add_gaps(metrics: dict[str, dict[str, float]], lion_label: str | None, paired: list[str]) -> None:
    """Add gap_to_lion to every run in `paired` (in place), when the case has a lion run."""
    if lion_label is None or lion_label not in metrics:
        return
    lion = metrics[lion_label]["final_loss"]
    for label in paired:
        if label in metrics:
            metrics[label]["gap_to_lion"] = metrics[label]["final_loss"] - lion


def is_worse(metric: str, baseline: float, now: float, tol: float) -> bool:
    """True when `now` is worse than `baseline` by more than `tol` (a NaN is always worse)."""
    if math.isnan(now):
        return True
    return now < baseline - tol if metric in HIGHER_IS_BETTER else now > baseline + tol


def is_better(metric: str, baseline: float, now: float, tol: float) -> bool:
    """True when `now` is better than `baseline` by more than `tol`."""
    return now > baseline + tol if metric in HIGHER_IS_BETTER else now < baseline - tol
