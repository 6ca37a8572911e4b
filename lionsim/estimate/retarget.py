"""`estimate --from-run DIR --target-loss X`: DIR's steps to target measured again at the loss X, from
the loss curves DIR holds, without training again.

Steps to target are read off the recorded loss curves (the first step whose smoothed loss is <= the
target: lionsim.reports.summary.summarize), so another target needs no new training: each run is
summarised again under its own rule with X in place of its
target. A bench run from its steps.csv; a sweep from sweep_steps.csv, each group of cells (one
workload, worker count, network and seed) summarised again with X as its target (the steps to a
given target need no baseline: only steps_to_target is taken back). X is one loss for every
cell, as `bench --target-loss` and `sweep --target-loss` set it.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from lionsim.errors import LionsimError
from lionsim.ranges import TARGET_LOSS, refusal

if TYPE_CHECKING:
    import pandas as pd

SWEEP_STEPS = "sweep_steps.csv"


def check_target(value: object) -> float:
    """--target-loss as a finite loss above 0, else one LionsimError line (a NaN is no loss)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and value > 0):
        raise LionsimError(refusal("--target-loss", value, TARGET_LOSS))
    return float(value)


def bench_meta(meta: dict, target: float) -> dict:
    """A bench run's run.json with its rule's target replaced by `target` (run_summary reads the rest)."""
    return {**meta, "config": {**(meta.get("config") or {}), "target_loss": target}}


def sweep_summary(where: Path, summary: pd.DataFrame, target: float, given: str) -> pd.DataFrame:
    """`summary` (sweep_summary.csv's rows of some cells) with steps_to_target, target_loss and
    target_rule measured again at `target` from the cells' steps in sweep_steps.csv."""
    import pandas as pd  # check_target runs before pandas is needed (lionsim.estimate.plain)

    from lionsim.reports.files import read_csv
    from lionsim.reports.summary import SummaryRule, summarize

    path = where / SWEEP_STEPS
    if not path.is_file():
        raise LionsimError(f"bad --from-run {given}: --target-loss re-reads the loss curves, and it holds no "
                           f"{SWEEP_STEPS}; accepted: a sweep root as `lionsim sweep` writes it")
    steps = read_csv(path, ["cell"])  # a bad file is one line naming it
    by_cell = dict(tuple(steps.groupby("cell", sort=False)))
    missing = [cell for cell in summary["cell"] if cell not in by_cell]
    if missing:
        raise LionsimError(f"bad --from-run {given}: {SWEEP_STEPS} has no steps of cell {missing[0]}")
    out = summary.copy()
    rule = SummaryRule(target_loss=target)  # a given target: the steps to it need no baseline
    for _, group in summary.groupby(["workload", "workers", "network", "seed"], sort=False):
        cells = list(group["cell"])
        again = summarize(pd.concat([by_cell[c].drop(columns="cell") for c in cells], ignore_index=True), rule)
        reached = dict(zip(again["run"], again["steps_to_target"]))
        for index, label in zip(group.index, group["label"]):
            out.loc[index, ["steps_to_target", "target_loss", "target_rule"]] = [reached[label], target,
                                                                                 "--target-loss"]
    return out


def _smoothed(steps: pd.DataFrame, label: str) -> pd.Series | None:
    """Run `label`'s smoothed loss curve in `steps` (one cell's runs) under summarize's rule: a trailing
    mean over final_window of the cell's longest run; None where the run is not there."""
    from lionsim.reports.summary import final_window, smooth, split_runs

    runs = split_runs(steps)
    window = final_window(max(len(rows) for _, rows in runs))
    return next((smooth(rows["loss"], window) for name, rows in runs if name == label), None)


def lowest_reached(steps: pd.DataFrame, label: str) -> float:
    """The lowest loss run `label` of `steps` (one cell's runs) reaches under summarize's rule: the
    least of its smoothed curve (_smoothed), so every target at or above it is reached; NaN where the
    run is not there or never finite."""
    curve = _smoothed(steps, label)
    return math.nan if curve is None or curve.isna().all() else float(curve.min())


def first_loss(steps: pd.DataFrame, label: str) -> float:
    """Run `label`'s smoothed loss at its first step (one cell's runs in `steps`): the step is the
    first one counted to a target at or above it, so every such target is reached at once; NaN where
    the run is not there or its first loss is not finite."""
    curve = _smoothed(steps, label)
    return math.nan if curve is None or not len(curve) else float(curve.iloc[0])


def loss_down(value: float) -> str:
    """`value` in 4 significant digits, rounded down: a target typed as printed lies below it."""
    exact = Decimal(repr(value))
    return f"{float(exact.quantize(Decimal(1).scaleb(exact.adjusted() - 3), rounding=ROUND_FLOOR)):g}"


def check_not_at_once(target: float, baseline: str, first: list[float], lowest: list[float], cells: int = 0) -> None:
    """One line refusing --target-loss `target` at or above the baseline's first loss (`first`: its
    first_loss in each cell; the least counts, where that cell's baseline reaches it at step 1), where
    every run reaches it at once and nothing is compared; it accepts a loss below that and at least
    the lowest the baseline reached (`lowest`, as unreached reads it)."""
    starts = [v for v in first if math.isfinite(v)]
    if not starts or target < min(starts):
        return
    where = " (the lowest of its cells')" if cells > 1 else ""
    reached = [v for v in lowest if math.isfinite(v)]
    if reached and float(loss_up(min(reached))) >= float(loss_down(min(starts))):  # nothing to offer between
        raise LionsimError(refusal("--target-loss", target, "a loss the baseline reached below its first, after "
                                   "training it longer",
                                   f"the baseline {baseline}'s loss never fell below its first, "
                                   f"{loss_down(min(starts))}{where}, so no target compares the runs"))
    floor = f" and at least {loss_up(min(reached))}" if reached else ""
    raise LionsimError(refusal("--target-loss", target, f"a loss below {loss_down(min(starts))}{floor}",
                               f"the baseline {baseline}'s first loss is {loss_down(min(starts))}{where}, so every "
                               "run reaches it at once and nothing is compared"))


def loss_up(value: float) -> str:
    """`value` in 4 significant digits, rounded up: a target typed as printed is still reached."""
    exact = Decimal(repr(value))
    return f"{float(exact.quantize(Decimal(1).scaleb(exact.adjusted() - 3), rounding=ROUND_CEILING)):g}"


def unreached(target: float, baseline: str, lowest: list[float], cells: int = 0) -> LionsimError:
    """The one line refusing --target-loss `target`, which the baseline reached in none of a sweep's
    `cells` (0: a bench run, one cell), `lowest` the least loss it reached in each (lowest_reached):
    a target at or above the highest of them is reached in every cell, one at or above the lowest
    in some (priced from those), so the line accepts from the lowest."""
    missed = ("did not reach it" if not cells else "did not reach it in the sweep's one cell" if cells == 1
              else f"reached it in none of the sweep's {cells:,} cells")
    finite = [v for v in lowest if math.isfinite(v)]
    if not finite:  # no finite smoothed loss anywhere: no target helps
        return LionsimError(refusal("--target-loss", target, "a loss the baseline reached; it reached none",
                                    f"the baseline {baseline} {missed}"))
    every, some = loss_up(max(finite)), loss_up(min(finite))
    if some != every:  # a target reached in some cells is priced from those (fewer points in the fit)
        accepted = f"at least {some} (the baseline reached that in some cells; at least {every} in every cell)"
    else:
        accepted = f"a loss the baseline reached{' in every cell' if cells > 1 else ''} (at least {every})"
    return LionsimError(refusal("--target-loss", target, accepted, f"the baseline {baseline} {missed}"))


def sweep_readings(where: Path, summary: pd.DataFrame, baseline: str, *reads) -> list[list[float]]:
    """Each of `reads` (lowest_reached, first_loss) of the baseline in each (workers, seed) cell group
    of `summary` (sweep_summary's rows: the steps of each group's cells summarised together, as
    sweep_summary does), one list per read; sweep_steps.csv is read once for all of them."""
    import pandas as pd

    from lionsim.reports.files import read_csv

    steps = read_csv(where / SWEEP_STEPS, ["cell"])
    by_cell = dict(tuple(steps.groupby("cell", sort=False)))
    groups = [pd.concat([by_cell[c].drop(columns="cell") for c in group["cell"] if c in by_cell], ignore_index=True)
              for _, group in summary.groupby(["workers", "seed"], sort=True)]
    return [[read(group, baseline) for group in groups] for read in reads]
