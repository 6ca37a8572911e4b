"""Small steps tables built by hand, in the column contract of steps.csv (lionsim.reports.columns),
for the summary, tables and plots to be checked against numbers worked out here."""

from __future__ import annotations

import math

import pandas as pd

from lionsim.reports import STEP_COLUMNS

NAN = math.nan


def rows(strategy: str, n: int, *, backend: str = "sim", diverged_at: int | None = None, comm: float = 0.002,
         measured: float = NAN, step_s: list[float] | None = None) -> list[dict]:
    """`n` steps of one run: loss 2 - 0.01 k, 4 workers on 1gbe; the last loss NaN when it diverged."""
    out = []
    for k in range(1, n + 1):
        step = (step_s or [0.01] * n)[k - 1]
        loss = NAN if diverged_at is not None and k == n else 2.0 - 0.01 * k
        out.append({"strategy": strategy, "transport": "fp32-allreduce", "workers": 4, "network": "1gbe",
                    "backend": backend, "workload": "mlp", "seed": 0, "step": k, "loss": loss, "compute_s": 0.005,
                    "encode_s": 0.0, "comm_s": comm, "decode_s": 0.0, "update_s": 0.001, "step_s": step,
                    "sim_time_s": step * k, "wire_bytes": 4000, "bits_per_param_up": 32.0, "bits_per_param_down": 32.0,
                    "params": 1000, "eval_loss": NAN, "eval_acc": NAN, "comm_model_s": 0.003,
                    "comm_measured_s": measured, "barrier_wait_s": 0.0 if backend != "sim" else NAN,
                    "wait_s": 0.0004 if backend != "sim" else 0.0,
                    "diverged_at_step": NAN if diverged_at is None else diverged_at})
    return out


def frame(*runs: list[dict]) -> pd.DataFrame:
    """The runs' rows as one steps table, contract columns first."""
    steps = pd.DataFrame([r for run in runs for r in run])
    return steps[STEP_COLUMNS + [c for c in steps.columns if c not in STEP_COLUMNS]]
