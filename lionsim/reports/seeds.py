"""The spread over seeds of a sweep's cells: one seed's accuracy does not rank strategies
(docs/time-model.md, "What is deterministic")."""

from __future__ import annotations

import pandas as pd

SEED_GROUP = ["workload", "workers", "network", "run"]
"""The cells that differ only by seed (and, where the sweep has an lr column, of one lr)."""


def seed_spread(summary: pd.DataFrame) -> pd.DataFrame:
    """`summary` (a row per cell) with, on each row, the spread over its SEED_GROUP's finished
    seeds: seed_count, and the sample standard deviation of final_loss and final_eval_acc
    (NaN with one seed)."""
    by = summary.groupby([*SEED_GROUP, *(["lr"] if "lr" in summary.columns else [])], sort=False, dropna=False)
    return summary.assign(seed_count=by["seed"].transform("nunique"),
                          final_loss_seed_sd=by["final_loss"].transform(lambda v: v.std(ddof=1)),
                          final_eval_acc_seed_sd=by["final_eval_acc"].transform(lambda v: v.std(ddof=1)))
