"""Measured timings -> comm.csv rows (source "measured") beside the model's (source "model").

Measured rows carry nccl-tests' columns as well: count (elements of n), type (nccl-tests'
dtype name), redop, root, and the spread over the timed iterations (mean, p10, p90, min, max
of the per-iteration time, each the slowest rank's). time_s is the median; algbw = bytes /
time_mean_s and busbw = algbw times nccl-tests' factor (lionsim.network.table): the bandwidths
come from the mean, as nccl-tests computes them from its average time, so they compare with the
model's (a mean too) and with err (model / mean - 1) in the same rows. Model rows price the
same (op, bytes, dtype, N) on the chosen network, so the two kinds compare row by row: their
time_s is the model's mean (what a run adds up), time_mean_s the same, and time_p10_s /
time_p90_s the model's spread (the slow mode of its traits).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from lionsim.network import COMM_COLUMNS, CollectiveCall, Network, bandwidths, price
from lionsim.measure.ops import REDOPS, ROOTS, TYPE_NAMES, sized

MEASURED_COLUMNS = (*COMM_COLUMNS, "count", "type", "redop", "root", "iters", "time_mean_s",
                    "time_p10_s", "time_p90_s", "time_min_s", "time_max_s", "dtype")
"""comm.csv's columns when a sweep was measured (model rows leave the measured-only ones empty)."""


@dataclass(frozen=True, slots=True)
class Point:
    """One measured (collective, size): the slowest rank's time of every timed iteration."""

    op: str
    size: int
    """The size asked for (bytes); the row reports the whole-element size."""
    times: tuple[float, ...]
    dtype: str = "float32"

    def nbytes(self, ranks: int) -> int:
        """The bytes actually moved (whole elements)."""
        return sized(self.op, self.size, ranks, self.dtype).nbytes


def measured_rows(points: list[Point], ranks: int, backend: str) -> pd.DataFrame:
    """One comm.csv row per point, columns MEASURED_COLUMNS."""
    rows = []
    for p in points:
        s = sized(p.op, p.size, ranks, p.dtype)
        t = np.asarray(p.times)
        mean = float(t.mean())
        algbw, busbw = bandwidths(p.op, s.nbytes, ranks, mean)  # nccl-tests: from the average time
        rows.append((p.op, backend, ranks, s.nbytes, float(np.median(t)), algbw, busbw, "measured", backend,
                     s.count, TYPE_NAMES[p.dtype], REDOPS[p.op], ROOTS.get(p.op, -1), len(t), mean,
                     float(np.percentile(t, 10)), float(np.percentile(t, 90)), float(t.min()), float(t.max()),
                     p.dtype))
    return pd.DataFrame(rows, columns=list(MEASURED_COLUMNS))


def with_model(measured: pd.DataFrame, network: Network, algorithm: str = "auto") -> pd.DataFrame:
    """The model's row for every measured one (same op, bytes, N), then the measured rows."""
    model = []
    for r in measured.itertuples(index=False):
        cost = price(CollectiveCall(r.collective, int(r.bytes), dtype=r.dtype), int(r.workers), network, algorithm)
        algbw, busbw = bandwidths(r.collective, r.bytes, r.workers, cost.time_s)
        modes = cost.modes
        model.append((r.collective, cost.algorithm, r.workers, r.bytes, cost.time_s, algbw, busbw, "model",
                      network.name, cost.time_s, modes.quantile(0.1), modes.quantile(0.9), r.dtype))
    frame = pd.DataFrame(model, columns=[*COMM_COLUMNS, "time_mean_s", "time_p10_s", "time_p90_s", "dtype"])
    return pd.concat([frame, measured], ignore_index=True)[list(MEASURED_COLUMNS)]


def compared(frame: pd.DataFrame) -> pd.DataFrame:
    """Measured rows joined with the model's row of the same (collective, workers, bytes, dtype):
    model_time_s (the model's mean) and error = model / measured mean - 1."""
    keys = ["collective", "workers", "bytes", "dtype"]
    model = frame[frame.source == "model"].drop_duplicates(keys)[[*keys, "time_s", "algorithm"]]
    model = model.rename(columns={"time_s": "model_time_s", "algorithm": "model_algorithm"})
    out = frame[frame.source == "measured"].merge(model, on=keys, how="left")
    return out.assign(error=out.model_time_s / out.time_mean_s - 1)
