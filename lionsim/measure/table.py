"""Measured timings -> comm.csv rows (source "measured") beside the model's (source "model").

Measured rows carry nccl-tests' columns as well: count (float32 elements of n), type,
redop, root, and the spread over the timed iterations (p10, p90, min, max of the per-
iteration time, each the slowest rank's). time_s is the median; algbw = bytes / time_s and
busbw = algbw times nccl-tests' factor (lionsim.network.table). Model rows price the same
(op, bytes, N) on the chosen network, so the two kinds compare row by row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from lionsim.network import COMM_COLUMNS, CollectiveCall, Network, bandwidths, price
from lionsim.measure.ops import REDOPS, ROOTS, TYPE_NAME, sized

MEASURED_COLUMNS = (*COMM_COLUMNS, "count", "type", "redop", "root", "iters",
                    "time_p10_s", "time_p90_s", "time_min_s", "time_max_s")
"""comm.csv's columns when a sweep was measured (model rows leave the measured-only ones empty)."""


@dataclass(frozen=True, slots=True)
class Point:
    """One measured (collective, size): the slowest rank's time of every timed iteration."""

    op: str
    size: int
    """The size asked for (bytes); the row reports the whole-element size."""
    times: tuple[float, ...]


def measured_rows(points: list[Point], ranks: int, backend: str) -> pd.DataFrame:
    """One comm.csv row per point, columns MEASURED_COLUMNS."""
    rows = []
    for p in points:
        s = sized(p.op, p.size, ranks)
        t = np.asarray(p.times)
        median = float(np.median(t))
        algbw, busbw = bandwidths(p.op, s.nbytes, ranks, median)
        rows.append((p.op, backend, ranks, s.nbytes, median, algbw, busbw, "measured", backend,
                     s.count, TYPE_NAME, REDOPS[p.op], ROOTS.get(p.op, -1), len(t),
                     float(np.percentile(t, 10)), float(np.percentile(t, 90)), float(t.min()), float(t.max())))
    return pd.DataFrame(rows, columns=list(MEASURED_COLUMNS))


def with_model(measured: pd.DataFrame, network: Network, algorithm: str = "auto") -> pd.DataFrame:
    """The model's row for every measured one (same op, bytes, N), then the measured rows."""
    model = []
    for r in measured.itertuples(index=False):
        cost = price(CollectiveCall(r.collective, int(r.bytes)), int(r.workers), network, algorithm)
        algbw, busbw = bandwidths(r.collective, r.bytes, r.workers, cost.time_s)
        model.append((r.collective, cost.algorithm, r.workers, r.bytes, cost.time_s, algbw, busbw, "model",
                      network.name))
    frame = pd.DataFrame(model, columns=list(COMM_COLUMNS))
    return pd.concat([frame, measured], ignore_index=True)[list(MEASURED_COLUMNS)]


def compared(frame: pd.DataFrame) -> pd.DataFrame:
    """Measured rows joined with the model's row of the same (collective, workers, bytes):
    model_time_s and error = model / measured - 1."""
    keys = ["collective", "workers", "bytes"]
    model = frame[frame.source == "model"][[*keys, "time_s", "algorithm"]]
    model = model.rename(columns={"time_s": "model_time_s", "algorithm": "model_algorithm"})
    out = frame[frame.source == "measured"].merge(model, on=keys, how="left")
    return out.assign(error=out.model_time_s / out.time_s - 1)
