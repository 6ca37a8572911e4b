"""The column contract of a run's records: names, order, kinds, and the check that enforces it."""

from __future__ import annotations

import pandas as pd

from lionsim.errors import LionsimError

# One row per (strategy, transport, step); this is also the column order of steps.csv.
STEP_COLUMNS: list[str] = [
    "strategy",
    "transport",
    "workers",
    "network",
    "backend",
    "workload",
    "seed",
    "step",  # 1-based
    "loss",  # mean training loss over workers this step
    "compute_s",
    "encode_s",
    "comm_s",
    "decode_s",
    "update_s",
    "step_s",  # as modelled: may be less than the sum of the parts where overlap is modelled
    "sim_time_s",  # cumulative modelled wall clock
    "wire_bytes",  # bytes one worker sends this step
    "bits_per_param_up",
    "bits_per_param_down",
    "params",
    "eval_loss",  # NaN on steps without evaluation
    "eval_acc",  # a fraction in [0, 1]; NaN on steps without evaluation; may be NaN throughout
]

# Columns read back as text whatever they look like (a network named "10" stays "10").
TEXT_COLUMNS: list[str] = ["strategy", "transport", "network", "backend", "workload", "cell"]

# The per-step time components, in the order they happen and are stacked in plots.
TIME_COLUMNS: list[str] = ["compute_s", "encode_s", "comm_s", "decode_s", "update_s"]

# Columns that describe a run rather than a step: constant within one (strategy, transport).
RUN_CONSTANT_COLUMNS: list[str] = ["workers", "network", "backend", "workload", "seed", "params"]

# What summary.csv must hold for `load_run` to accept it.
SUMMARY_REQUIRED: list[str] = [
    "strategy",
    "transport",
    "workers",
    "network",
    "steps",
    "final_loss",
    "best_loss",
    "final_eval_loss",
    "final_eval_acc",
    "best_eval_acc",
    *TIME_COLUMNS,
    "step_s",
    "sim_time_s",
    "wire_bytes",
    "bits_per_param_up",
    "bits_per_param_down",
    "speedup",
    "time_to_target_speedup",
]


def run_label(strategy: str, transport: str) -> str:
    """How a run is named in plots, tables and `--baseline`: "strategy@transport"."""
    return f"{strategy}@{transport}"


def check_columns(df: pd.DataFrame, required: list[str], source: str) -> None:
    """Fail with one line naming every missing column, and every non-numeric numeric one."""
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise LionsimError(f"{source} is missing column(s): {', '.join(missing)}; required: {', '.join(required)}")
    not_numeric = [c for c in required if c not in TEXT_COLUMNS and not pd.api.types.is_numeric_dtype(df[c])]
    if not_numeric:
        col = not_numeric[0]
        numbers = pd.to_numeric(df[col], errors="coerce")
        bad = df[col][numbers.isna() & df[col].notna()]
        row, value = (bad.index[0], bad.iloc[0]) if len(bad) else (None, None)
        where = f" (first: {value!r} in data row {row + 1})" if row is not None else ""
        if isinstance(value, str) and value.strip().lower().lstrip("+-") in ("nan", "inf", "infinity"):
            raise LionsimError(f"{source} has a value that is not a finite number in column {col}{where}; "
                               "a lionsim CSV writes a missing value as an empty cell")
        raise LionsimError(f"{source} has non-numeric values in column(s): {', '.join(not_numeric)}{where}")


ESTIMATE_SWEEP_VARIABLES = ("workers", "bandwidth")
"""What `lionsim estimate --sweep` sweeps: crossover.csv's `variable`."""


def model_text(row) -> str:
    """estimate.csv's model of a row as text: "transformer-3b (2,651,553,280 params)", or
    "3,000,000,000 params" when sized by --params."""
    count = f"{int(row['params']):,} params"
    return count if row["model"] == "params" else f"{row['model']} ({count})"


def per_worker_text(row) -> str:
    """estimate.csv's work per worker and step in its unit: "1,024 tokens/worker", "1 sample/worker"
    (an estimate.csv written before samples_per_worker held a counted model's samples in
    tokens_per_worker)."""
    unit = row.get("unit", "tokens") if isinstance(row.get("unit", "tokens"), str) else "tokens"
    count = row.get(f"{unit}_per_worker")
    if count is None or count != count:  # absent or empty
        count = row.get("tokens_per_worker")
    count = int(count)
    return f"{count:,} {unit if count != 1 else unit.removesuffix('s')}/worker"
