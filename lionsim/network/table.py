"""nccl-tests-style tables of collective cost: size, time, algbw, busbw.

algbw = S / t with S the op's size (calls.py convention: the full vector for all_reduce,
reduce_scatter, broadcast, reduce; the total output for all_gather; one rank's send
buffer for all_to_all), and busbw = algbw * factor (nccl-tests doc/PERFORMANCE.md):

    all_reduce                              2 (N-1) / N
    all_gather, reduce_scatter, all_to_all  (N-1) / N
    broadcast, reduce                       1

busbw is comparable across ops and N: it is the bandwidth the busiest link would need.
Rows have `source` "model" here; measured rows (source "measured", from a gloo/nccl run)
use `bandwidths` and COMM_COLUMNS so that both kinds sit in one table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lionsim.errors import LionsimError
from lionsim.registry import did_you_mean
from lionsim.network.calls import CollectiveCall
from lionsim.network.cost import AUTO, price
from lionsim.network.link import GB, Network

if TYPE_CHECKING:  # annotations only: pandas loads when a frame is built
    import pandas as pd

TABLE_OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce")
"""Ops with an nccl-tests bus-bandwidth factor."""

COMM_COLUMNS = (
    "collective", "algorithm", "workers", "bytes", "time_s", "algbw_GBps", "busbw_GBps", "source", "network",
)


def bus_factor(op: str, workers: int) -> float:
    """nccl-tests' busbw / algbw factor for `op` among `workers` ranks."""
    n = workers
    factors = {
        "all_reduce": 2 * (n - 1) / n,
        "all_gather": (n - 1) / n,
        "reduce_scatter": (n - 1) / n,
        "all_to_all": (n - 1) / n,
        "broadcast": 1.0,
        "reduce": 1.0,
    }
    if op not in factors:
        raise LionsimError(f"no bus bandwidth for collective {op!r}; choose from: {', '.join(TABLE_OPS)}")
    return factors[op]


def bandwidths(op: str, nbytes: float, workers: int, time_s: float) -> tuple[float, float]:
    """(algbw, busbw) in GB/s (1e9 bytes/s) for `nbytes` moved by `op` in `time_s` seconds."""
    algbw = nbytes / time_s / GB
    return algbw, algbw * bus_factor(op, workers)


def normalize_op(name: str) -> str:
    """"all-reduce" or "all_reduce" -> "all_reduce"; unknown -> LionsimError listing TABLE_OPS."""
    op = name.strip().lower().replace("-", "_")
    if op not in TABLE_OPS:
        raise LionsimError(f"unknown collective {name!r}; choose from: {', '.join(TABLE_OPS)}"
                           f"{did_you_mean(op, TABLE_OPS)}")
    return op


def comm_table(
    collectives: list[str],
    sizes: list[int],
    workers: list[int],
    network: Network,
    algorithm: str = AUTO,
) -> pd.DataFrame:
    """Modelled cost of every (collective, workers, size), one row each, columns COMM_COLUMNS."""
    return rows_frame(comm_rows(collectives, sizes, workers, network, algorithm))


def rows_frame(rows: list[dict]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame.from_records(rows, columns=list(COMM_COLUMNS))


def comm_rows(
    collectives: list[str],
    sizes: list[int],
    workers: list[int],
    network: Network,
    algorithm: str = AUTO,
) -> list[dict]:
    """comm_table's rows as dicts (the model alone needs no pandas: `lionsim comm` prints these)."""
    ops = [normalize_op(c) for c in collectives]
    for n in workers:
        if isinstance(n, bool) or not isinstance(n, int) or n < 2:
            raise LionsimError(f"workers = {n!r}: a collective table needs integers >= 2")
    rows = []
    for op in ops:
        for n in workers:
            for size in sizes:
                cost = price(CollectiveCall(op, size), n, network, algorithm)
                algbw, busbw = bandwidths(op, size, n, cost.time_s)
                rows.append(dict(zip(COMM_COLUMNS, (op, cost.algorithm, n, size, cost.time_s, algbw, busbw,
                                                    "model", network.name))))
    return rows
