"""Per-run summary of the step records: losses, mean time breakdown, bits, speedups.

Definitions (also printed under the summary table):
- final_loss: the trailing mean of the last ceil(10%) of a run's steps (at least one step),
  so one noisy step does not decide the ranking.
- speedup: baseline mean step_s / this run's mean step_s.
- time_to_target_speedup: baseline time-to-target / this run's time-to-target, where the
  target is the baseline's final_loss and a run reaches it at the first step where its
  smoothed loss (a trailing mean over the baseline's final window, fewer points at the
  start) is <= the target. The baseline's smoothed curve ends exactly at its final_loss,
  so the baseline always reaches its own target; a run that never does gets NaN.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from lionsim.errors import LionsimError
from lionsim.reports.columns import RUN_CONSTANT_COLUMNS, STEP_COLUMNS, TIME_COLUMNS, check_columns, run_label

FINAL_FRACTION = 0.1  # final_loss averages this fraction of the last steps


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
    """Index of the baseline run: exact "strategy@transport", else the first run of that strategy."""
    if baseline is None:
        return 0
    if baseline in labels:
        return labels.index(baseline)
    if baseline in strategies:
        return strategies.index(baseline)
    raise LionsimError(f"unknown baseline {baseline!r}; choose from: {', '.join(labels)}")


def _last_valid(values: pd.Series) -> float:
    valid = values.dropna()
    return float(valid.iloc[-1]) if len(valid) else math.nan


def _ratio(num: float, den: float) -> float:
    """num / den with IEEE semantics: a zero denominator gives inf (or NaN), not an exception."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(num) / np.float64(den))


def _time_to_target(rows: pd.DataFrame, target: float, window: int) -> float:
    """Modelled time at the first step whose smoothed loss is <= target; NaN if none."""
    reached = smooth(rows["loss"], window) <= target
    if not reached.any():
        return math.nan
    return float(rows.loc[reached.idxmax(), "sim_time_s"])


def summarize(steps: pd.DataFrame, baseline: str | None = None) -> pd.DataFrame:
    """One row per run (first-appearance order); see the module docstring for definitions.

    `baseline` is a run label "strategy@transport" or a strategy name (its first run);
    None means the first run. An unknown name fails with the list of run labels.
    """
    runs = split_runs(steps)
    labels = [label for label, _ in runs]
    strategies = [rows["strategy"].iloc[0] for _, rows in runs]
    base = pick_baseline(labels, strategies, baseline)

    base_rows = runs[base][1]
    window = final_window(len(base_rows))
    target = float(smooth(base_rows["loss"], window).iloc[-1])
    base_step_s = float(base_rows["step_s"].mean())
    base_ttt = _time_to_target(base_rows, target, window)

    records = []
    for label, rows in runs:
        own_window = final_window(len(rows))
        record = {
            "run": label,
            "strategy": rows["strategy"].iloc[0],
            "transport": rows["transport"].iloc[0],
            **{col: rows[col].iloc[0] for col in RUN_CONSTANT_COLUMNS},
            "steps": len(rows),
            "final_loss": float(smooth(rows["loss"], own_window).iloc[-1]),
            "best_loss": float(rows["loss"].min()),
            "final_eval_loss": _last_valid(rows["eval_loss"]),
            "best_eval_loss": float(rows["eval_loss"].min()),  # NaN if never evaluated
            "final_eval_acc": _last_valid(rows["eval_acc"]),
            "best_eval_acc": float(rows["eval_acc"].max()),
            **{col: float(rows[col].mean()) for col in [*TIME_COLUMNS, "step_s"]},
            **({"comm_exposed_s": float(rows["comm_exposed_s"].mean())} if "comm_exposed_s" in rows else {}),
            "sim_time_s": float(rows["sim_time_s"].iloc[-1]),
            "wire_bytes": float(rows["wire_bytes"].mean()),
            "bits_per_param_up": float(rows["bits_per_param_up"].mean()),
            "bits_per_param_down": float(rows["bits_per_param_down"].mean()),
        }
        ttt = _time_to_target(rows, target, window)
        record["speedup"] = _ratio(base_step_s, record["step_s"])
        record["target_loss"] = target
        record["time_to_target_s"] = ttt
        record["time_to_target_speedup"] = _ratio(base_ttt, ttt)
        record["baseline"] = labels[base]
        records.append(record)
    return pd.DataFrame.from_records(records)
