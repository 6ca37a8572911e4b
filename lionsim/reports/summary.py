"""Per-run summary of the step records: losses, mean time breakdown, bits, speedups, time to target.

Definitions (also printed under the summary table):
- final_loss: the trailing mean of the last ceil(10%) of a run's steps (at least one step),
  so one noisy step does not decide the ranking; NaN for a diverged run.
- speedup: baseline mean step_s / this run's mean step_s.
- target_loss: `--target-loss` if given; else the baseline run's smoothed loss at
  TARGET_POINT (90%) of its steps (step 90 of 100): a loss the baseline itself reaches, late in
  its run, so "to target" asks which runs get where the baseline got, and how much sooner. It
  depends on the baseline alone: adding a strategy that trains badly moves nothing (a target
  set by the worst run did: one poor run made every speedup meaningless). Smoothing is a
  trailing mean over final_window(the longest run) steps, the same window for every run. A
  diverged baseline sets no target (NaN). `target_rule` says in words where it came from.
- time_to_target_s / steps_to_target: modelled wall clock and steps at the first step whose
  smoothed loss is <= target_loss; target_reached: whether that step exists. A run that never
  gets there has NaN times and NaN speedup, shown as "not reached" (never a speedup);
  time_to_target_speedup: the baseline's time to target / this run's (NaN where either never got
  there). time_to_target_speedup_above: where this run got there and the baseline never did, a
  lower bound on it: the baseline's whole modelled time (its sim_time_s) / this run's time to
  target (it would have needed longer); NaN otherwise. The tables show it as ">2.06x"
  (lionsim.reports.target_speedup, the one rule of every "to target" cell).
- final_eval_acc / best_eval_acc: the workload's metric (eval_metric names it: accuracy for the
  built-ins) at the last evaluation, and its best in the metric's own direction
  (eval_higher_is_better: 1 the largest, 0 the smallest, e.g. of an error rate).
- diverged_at_step: the step a run diverged at (NaN: it did not): a loss or gradient went
  non-finite, or the loss passed 100x its first step's (lionsim.divergence).
  That step ran no exchange (steps.csv books it with no times and 0 bytes), so a diverged
  run's times, bytes and bits are means over the steps before it (ran_steps).
- comm_measured_s, comm_model_error: on a real backend, the mean measured comm per step (each
  call's slowest rank, summed: steps.csv's comm_measured_s) over the steps past the warm-up
  (--warmup-steps, 3), and the model's mean over the same steps against it: mean
  comm_model_s / mean comm_measured_s - 1 (the model predicts the mean a step pays, which is
  what a run's time adds up to); NaN on sim, where comm_s is the model, and NaN where the
  model priced a default --network on a measured backend (run.json's network_given false,
  uncalibrated: model_describes_link), which is no link the ranks crossed. barrier_wait_s:
  the mean rank imbalance per step.
- step_p50_s / step_p99_s: the median and 99th percentile of a run's step times, each a
  step that happened (nearest rank: the smallest step time at or below which at least that
  share of the steps lie, never a point between two steps): with uneven workers
  (--compute-spread) steps differ. The step times (step_spread): on sim step_s; on gloo/nccl
  step_s with its booked comm (comm_exposed_s, the comm term step_s adds: each kind of step's
  median) replaced by the comm that step measured (comm_measured_s), past the warm-up. The rest
  is as step_s books it (lionsim.training.booking): encode, decode and update each kind of
  step's median; compute the bench's one figure, or under --compute-spread that step's own
  compute and wait for the slowest rank.
- compute_median_s, compute_max_s, wait_s, vote_agreement: their means over the steps (the
  agreement of a vote of votes with the flat vote; NaN for every other transport).
"""

from __future__ import annotations

import math
import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lionsim.errors import LionsimError
from lionsim.timing import DEFAULT_WARMUP  # noqa: F401 (re-exported)
from lionsim.reports.columns import (RUN_CONSTANT_COLUMNS, STEP_COLUMNS, TIME_COLUMNS, check_columns, eval_metric,
                                     run_label)
from lionsim.reports.target_speedup import speedup_above
from lionsim.reports.titles import model_describes_link

UNEVEN_COLUMNS = ("compute_median_s", "compute_max_s", "wait_s", "vote_agreement")
"""steps.csv columns a summary averages when a run has them."""
FINAL_FRACTION = 0.1  # final_loss averages this fraction of the last steps
TARGET_POINT = 0.9  # the default target: the baseline's smoothed loss this far through its steps


@dataclass(frozen=True, slots=True)
class SummaryRule:
    """How a run is summarised: the one rule every summary of it uses (when it finishes, fails,
    is interrupted, resumed, redrawn by `lionsim plot` or reported), read from its plan or its
    run.json (`of_run`), so a summary never depends on which of those wrote it."""

    baseline: str | None = None
    """The run speedups are against: "strategy@transport" or a strategy name (its first run);
    None: the first run."""
    target_loss: float | None = None
    """--target-loss; None: the baseline's smoothed loss at TARGET_POINT of its steps."""
    warmup_steps: int | None = DEFAULT_WARMUP
    """Leading steps left out of the comm model's error (comm_measured_s, comm_model_error); None: a
    run that measured nothing (sim on a --compute device), none left out."""

    @classmethod
    def of_run(cls, meta: dict | None) -> SummaryRule:
        """The rule a bench's run.json records (its `config`); the defaults where it names none
        (a run.json written before the option existed, or none at all)."""
        config = (meta or {}).get("config") or {}
        warmup = config.get("warmup_steps", DEFAULT_WARMUP)  # null: a run that measured nothing
        return cls(baseline=config.get("baseline"), target_loss=config.get("target_loss"),
                   warmup_steps=None if warmup is None else int(warmup))


DEFAULT_RULE = SummaryRule()
NO_BASELINE = ("speedup", "time_to_target_speedup", "time_to_target_speedup_above", "baseline")
"""The columns against the baseline: left empty in a sweep's group whose baseline cell has not finished."""


def final_window(n_steps: int) -> int:
    """Number of trailing steps averaged into final_loss: ceil(10%), at least 1."""
    return max(1, math.ceil(FINAL_FRACTION * n_steps))


def smooth(values: pd.Series, window: int) -> pd.Series:
    """Trailing mean over `window` steps; the first steps average what exists so far.

    A NaN loss (a diverged step) makes every window holding it NaN: pandas would skip it and
    report a finite final_loss for a run that blew up.
    """
    values = values.reset_index(drop=True)
    mean = values.rolling(window, min_periods=1).mean()
    valid = values.notna().astype(float).rolling(window, min_periods=1).sum()
    expected = pd.Series(range(1, len(values) + 1), dtype=float).clip(upper=window)
    return mean.where(valid == expected)


def ran_steps(rows: pd.DataFrame) -> pd.DataFrame:
    """A run's steps that ran to their exchange: all but a diverged run's last, which stopped at
    a divergence (lionsim.divergence) before it (booked with no times and 0 bytes: averaging its 0
    in would halve a 2-step run's bytes per step). A step that exchanged nothing by design (a
    local step of DiLoCo) ran: it stays."""
    if "diverged_at_step" not in rows:
        return rows
    return rows[~(rows["step"] >= rows["diverged_at_step"])]


def split_runs(steps: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(label, rows sorted by step) per (strategy, transport), in first-appearance order.

    Fails if a run repeats a step or mixes values of a per-run column (two runs pasted together).
    """
    check_columns(steps, STEP_COLUMNS, "steps")
    if steps.empty:
        raise LionsimError("steps has no rows; a run needs at least one step")
    for col in ("strategy", "transport", "step"):
        if steps[col].isna().any():
            raise LionsimError(f"steps has empty {col} values; every row needs a strategy, transport and step")
    runs = []
    for (strategy, transport), rows in steps.groupby(["strategy", "transport"], sort=False):
        label = run_label(strategy, transport)
        rows = rows.sort_values("step", kind="stable").reset_index(drop=True)
        if rows["step"].duplicated().any():
            dup = rows.loc[rows["step"].duplicated(), "step"].iloc[0]
            raise LionsimError(f"run {label} has step {dup} more than once; each step must appear once per run")
        for col in RUN_CONSTANT_COLUMNS:
            values = rows[col].unique()
            if len(values) > 1:
                raise LionsimError(
                    f"run {label} mixes {col} values {', '.join(map(str, values))}; one value per run is accepted"
                )
        runs.append((label, rows))
    return runs


def pick_baseline(labels: list[str], strategies: list[str], baseline: str | None) -> int:
    """Index of the baseline run: exact "strategy@transport", else the one run of that strategy (a
    strategy that several runs share names none of them: refused, naming them). Every --baseline
    (bench, sweep, plot, report, estimate) resolves here."""
    if baseline is None:
        return 0
    if baseline in labels:
        return labels.index(baseline)
    matches = [label for label, strategy in zip(labels, strategies) if strategy == baseline]
    if len(matches) > 1:
        raise LionsimError(f"ambiguous baseline {baseline!r}: {len(matches)} runs are {baseline} "
                           f"({', '.join(matches)}); give one of them in full")
    if matches:
        return strategies.index(baseline)
    raise LionsimError(f"unknown baseline {baseline!r}; choose from: {', '.join(labels)}")


def _last_valid(values: pd.Series) -> float:
    valid = values.dropna()
    return float(valid.iloc[-1]) if len(valid) else math.nan


def _ratio(num: float, den: float) -> float:
    """num / den with IEEE semantics: a zero denominator gives inf (or NaN), not an exception."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(num) / np.float64(den))


def reach(rows: pd.DataFrame, target: float, window: int) -> tuple[float, float, float]:
    """(modelled time, step, smoothed loss there) at the first step whose smoothed loss (a
    trailing mean over `window` steps) is <= target; NaNs if none."""
    curve = smooth(rows["loss"], window)
    reached = curve <= target
    if not reached.any():
        return math.nan, math.nan, math.nan
    first = reached.idxmax()
    return float(rows.loc[first, "sim_time_s"]), float(rows.loc[first, "step"]), float(curve.loc[first])


def _reach(rows: pd.DataFrame, target: float, window: int) -> tuple[float, float]:
    """(modelled time, step) at the first step whose smoothed loss is <= target; NaNs if none."""
    return reach(rows, target, window)[:2]


def target_step(n_steps: int) -> int:
    """The step whose smoothed loss the default target is: ceil(TARGET_POINT x steps), at least 1."""
    return max(1, math.ceil(TARGET_POINT * n_steps - 1e-9))


def default_target(label: str, rows: pd.DataFrame, window: int) -> tuple[float, str]:
    """(target, rule): the baseline's smoothed loss at target_step of its steps; NaN if it diverged."""
    if _diverged(rows):
        return math.nan, f"none: the baseline {label} diverged"
    at = target_step(len(rows))
    curve = smooth(rows["loss"], window)
    return float(curve.iloc[at - 1]), f"{label}'s loss at step {int(rows['step'].iloc[at - 1])} of {len(rows)}"


def target_words(targets, baseline: str) -> str:
    """Cells' target losses in words, the one wording of `lionsim report` and `lionsim estimate
    --from-run`: one figure "in every cell", or where each cell's baseline set its own (the
    default rule, whose loss differs by seed and worker count) "each cell's own" with their range."""
    values = pd.Series(targets, dtype=float).dropna()
    if values.nunique() <= 1:
        return f"{values.iloc[0]:.4g} in every cell" if len(values) else "none"
    # both ends to 4 decimals, as the report's table of targets shows each ("2 to 2.124" beside "2.0005")
    return f"each cell's own ({baseline}'s loss late in its run: {values.min():.4f} to {values.max():.4f})"


def _diverged(rows: pd.DataFrame) -> bool:
    return "diverged_at_step" in rows and bool(rows["diverged_at_step"].notna().any())


def nearest_rank(values, q: float) -> float:
    """The q-quantile (0 < q <= 1) of `values` as one of them: the smallest value at or below
    which at least q of the values lie (the nearest-rank percentile, sorted[ceil(q n) - 1]), so
    the p50 of two kinds of step is the faster kind, not a step between them. NaN: no values."""
    ordered = np.sort(np.asarray(values, dtype=float))
    if not len(ordered):
        return math.nan
    return float(ordered[max(0, math.ceil(q * len(ordered) - 1e-9) - 1)])


def measured_run(rows: pd.DataFrame) -> bool:
    """Whether a real backend measured comm in these steps (one run's, or a bench's): some row off
    the simulator has a comm_measured_s. The one test step_spread, comm_model_error and the step-time
    plot's subtitle share, so a run is measured for all of them or for none."""
    if "comm_measured_s" not in rows or "backend" not in rows:
        return False
    return bool(((rows["backend"] != "sim") & rows["comm_measured_s"].notna()).any())


def step_spread(rows: pd.DataFrame, warmup: int) -> pd.Series:
    """One run's step times as steps took them (module doc: step_p50_s): step_s on sim; on
    gloo/nccl step_s less its booked comm (comm_exposed_s, the term step_s adds; comm_s in a
    steps.csv without it) plus the comm that step measured, over the steps past the warm-up (all
    of them where none is past it)."""
    times = rows["step_s"]
    if measured_run(rows):
        booked = rows["comm_exposed_s"] if "comm_exposed_s" in rows else rows["comm_s"]
        own = rows["step_s"] - booked + rows["comm_measured_s"]
        past = own[rows["step"] > warmup].dropna()
        times = past if len(past) else own
    return times.dropna()


def _model_error(rows: pd.DataFrame, warmup: int) -> dict[str, float]:
    """comm_measured_s, comm_model_error and barrier_wait_s on a real backend (module doc); NaN on sim."""
    nan = {"comm_measured_s": math.nan, "comm_model_error": math.nan, "barrier_wait_s": math.nan}
    if not measured_run(rows):
        return nan
    past = rows[(rows["step"] > warmup) & rows["comm_measured_s"].notna()]
    past = past if len(past) else rows[rows["comm_measured_s"].notna()]
    measured = float(past["comm_measured_s"].mean()) if len(past) else math.nan
    if not measured > 0:
        return nan
    model = float(past["comm_model_s"].mean())  # over the same steps as the measurement
    return {"comm_measured_s": measured, "comm_model_s": model, "comm_model_error": model / measured - 1,
            "barrier_wait_s": float(past["barrier_wait_s"].mean())}


def summarize(steps: pd.DataFrame, rule: SummaryRule = DEFAULT_RULE) -> pd.DataFrame:
    """One row per run (first-appearance order) under `rule`; see the module docstring for
    definitions. An unknown baseline fails with the list of run labels."""
    baseline, target_loss, warmup = rule.baseline, rule.target_loss, rule.warmup_steps or 0
    runs = split_runs(steps)
    labels = [label for label, _ in runs]
    strategies = [rows["strategy"].iloc[0] for _, rows in runs]
    base = pick_baseline(labels, strategies, baseline)
    window = final_window(max(len(rows) for _, rows in runs))
    if target_loss is None:
        target, rule = default_target(*runs[base], window)
    else:
        target, rule = float(target_loss), "--target-loss"
    base_rows = runs[base][1]
    base_step_s = float(base_rows["step_s"].mean())
    base_ttt, _ = _reach(base_rows, target, window)
    base_time = float(base_rows["sim_time_s"].max())

    records = []
    for label, rows in runs:
        own_window = final_window(len(rows))
        live = rows[rows["loss"].notna() & np.isfinite(rows["loss"])]
        metric, higher = eval_metric(rows)
        record = {
            "run": label,
            "strategy": rows["strategy"].iloc[0],
            "transport": rows["transport"].iloc[0],
            **{col: rows[col].iloc[0] for col in RUN_CONSTANT_COLUMNS},
            "steps": len(rows),
            # a diverged run has none: a blown-up finite loss is no result (nor was a non-finite one)
            "final_loss": math.nan if _diverged(rows) else float(smooth(rows["loss"], own_window).iloc[-1]),
            "best_loss": float(live["loss"].min()) if len(live) else math.nan,
            "final_eval_loss": _last_valid(rows["eval_loss"]),
            "best_eval_loss": float(rows["eval_loss"].min()),  # NaN if never evaluated
            "final_eval_acc": _last_valid(rows["eval_acc"]),
            "best_eval_acc": float(rows["eval_acc"].max() if higher else rows["eval_acc"].min()),
            "eval_metric": metric,
            "eval_higher_is_better": int(higher),
            **{col: float(rows[col].mean()) for col in [*TIME_COLUMNS, "step_s"]},
            **{col: float(rows[col].mean()) for col in ("comm_exposed_s", "comm_model_s") if col in rows},
            "step_p50_s": nearest_rank(step_spread(rows, warmup), 0.5),
            "step_p99_s": nearest_rank(step_spread(rows, warmup), 0.99),
            **{col: float(rows[col].mean()) for col in UNEVEN_COLUMNS if col in rows},
            **_model_error(rows, warmup),
            "sim_time_s": float(rows["sim_time_s"].max()),
            "wire_bytes": float(ran_steps(rows)["wire_bytes"].mean()),
            "bits_per_param_up": float(rows["bits_per_param_up"].mean()),
            "bits_per_param_down": float(rows["bits_per_param_down"].mean()),
        }
        ttt, steps_to = _reach(rows, target, window)
        record["speedup"] = _ratio(base_step_s, record["step_s"])
        record["target_loss"] = target
        record["target_rule"] = rule
        record["target_reached"] = not math.isnan(ttt)
        record["time_to_target_s"] = ttt
        record["steps_to_target"] = steps_to
        record["time_to_target_speedup"] = _ratio(base_ttt, ttt)
        record["time_to_target_speedup_above"] = speedup_above(base_time, not math.isnan(base_ttt), ttt)
        record["diverged_at_step"] = float(rows["diverged_at_step"].max()) if "diverged_at_step" in rows else math.nan
        record["baseline"] = labels[base]
        records.append(record)
    return pd.DataFrame.from_records(records)


def leave_out_unchecked_error(summary: pd.DataFrame, meta: dict | None) -> pd.DataFrame:
    """comm_model_error set to NaN (the column kept) where the model describes no link measured."""
    if not model_describes_link(meta) and "comm_model_error" in summary.columns:
        summary["comm_model_error"] = math.nan
    return summary


def run_summary(steps: pd.DataFrame, meta: dict | None, baseline: str | None = None) -> pd.DataFrame:
    """A bench run's summary made again from its files, as the bench made it: under its own rule
    (run.json's; `baseline`, where given, replaces the run's: `lionsim plot --baseline`), with
    `comm_priced_by` where run.json says what priced comm_model_s (a real backend's run), and
    no comm_model_error where that model describes no link measured."""
    rule = SummaryRule.of_run(meta)
    if baseline is not None:
        rule = dataclasses.replace(rule, baseline=baseline)
    summary = summarize(steps, rule)
    priced_by = (meta or {}).get("comm_model")
    if priced_by:
        summary["comm_priced_by"] = priced_by
    return leave_out_unchecked_error(summary, meta)
