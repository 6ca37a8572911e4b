"""The footnote an estimate adds where a flat compressing transport runs on nodes of several GPUs.

A flat transport's collectives run over all N = M x g GPUs: an all-to-all reduce-scatter (or an
all-gather) combines nothing inside a node, so each of a node's g GPUs sends its own share across
the node's inter link. fp8-allreduce on 8 GPUs a node: g (M-1)/M n of fp8 codes per node for the
all-to-all, where a ring all-reduce of fp32 carries 2 (N-1)/N n x 4 through the node's one hop
out, nearly the same bytes (`across`), so 1 byte a value buys nothing there. Its hierarchical
form (hier:TRANSPORT, lionsim.transports.hierarchy) sums inside the node first and sends one
node payload across. The note prices that form, for the same strategy on the same network, and
is given only where it is faster: a figure, not a guess.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from lionsim.errors import LionsimError
from lionsim.estimate.config import Resolved
from lionsim.estimate.table import estimate_rows
from lionsim.numbers import TIE, ms_text, speedup_text, step_bytes
from lionsim.runs import parse_runs
from lionsim.transports import TRANSPORTS
from lionsim.transports.allreduce_float import FloatAllReduce
from lionsim.transports.hierarchy import PREFIX


def flat_compressing(transport: str) -> bool:
    """Whether `transport` runs flat over every GPU and compresses: not hier:/hier-* already, and not a
    float all-reduce (NCCL's ring and tree already cross each node once with the node's sums)."""
    if transport.startswith("hier"):
        return False
    return not issubclass(TRANSPORTS.get(transport), FloatAllReduce)


def faster_forms(r: Resolved, rows: list[dict]) -> list[tuple[str, str, dict]]:
    """(the run, its hier: form, that form's priced row) for each run of `rows` (an estimate on `r`,
    the resolved config: strategy, transport, step_s) whose flat compressing transport runs on nodes
    of several GPUs across nodes and whose hier: form, priced here as the table prices a run, is
    faster and not already among the runs."""
    network = r.network
    if network.workers_per_node < 2 or r.workers <= network.workers_per_node:
        return []
    labels = {f"{row['strategy']}@{row['transport']}" for row in rows}
    faster = []
    for row in rows:
        hier = f"{row['strategy']}@{PREFIX}{row['transport']}"
        if not flat_compressing(row["transport"]) or hier in labels:
            continue
        try:
            runs = parse_runs([hier])
        except LionsimError:  # a payload no node can combine (hierarchy.UNCARRIED)
            continue
        # alone, so its own baseline (--baseline names a run of the table, not this form)
        (priced,) = estimate_rows(dataclasses.replace(r, runs=runs, baseline=None, convergence=None, run_steps=None,
                                                     run_tokens=None), r.workers, network)
        if priced["step_s"] < row["step_s"] * (1 - TIE):
            faster.append((f"{row['strategy']}@{row['transport']}", hier, priced))
    return faster


def faster_text(hier: str) -> str:
    """The note a sweep gives a run at the points where its hier: form `hier` is faster
    (lionsim.estimate.point_notes): the same whatever the point, so said once for all of them."""
    return (f"its hierarchical form {hier} steps faster: it combines inside each node first and sends one node "
            f"payload across (-s {hier}).")


def hier_notes(r: Resolved, frame: pd.DataFrame, faster: list | None = None) -> list[str]:
    """The caption's line (or none) on the runs of `frame` with a faster hier: form (`faster`:
    faster_forms', worked out here where not given): each form's step, across and speedup."""
    faster = faster_forms(r, frame.to_dict("records")) if faster is None else faster
    if not faster:
        return []
    base = frame[frame["strategy"] + "@" + frame["transport"] == frame["baseline"]].iloc[0]
    said = [f"{hier} {ms_text(priced['step_s'] * 1e3)} ms, across {step_bytes(priced['inter_bytes'])}, "
            f"{speedup_text(base['step_s'] / priced['step_s'])}" for _, hier, priced in faster]
    unit = "GPUs" if r.replica_gpus == 1 else "workers"  # a worker of --replica-gpus G is G devices
    return [f"Flat transports run over all {r.workers:,} {unit}; on nodes of {r.network.workers_per_node} their "
            f"hierarchical forms combine inside each node first and send one node payload across (priced; -s "
            f"NAME@hier:TRANSPORT): {'; '.join(said)}."]
