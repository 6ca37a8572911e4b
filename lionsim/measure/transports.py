"""Measured comm per step of each vote transport against fp32-allreduce on real gloo ranks
(`python -m lionsim.perf transports`): the figures behind "1-bit votes are 32x cheaper".

Each rank runs every transport's real `aggregate` through ProcessGroupComm on a payload of
`numel` parameters (random +1/-1 int8 votes, or float32 gradients for fp32-allreduce).
Per iteration it records the collectives' own time (each between aligning barriers, summed)
and the whole aggregate's wall time (packing and unpacking included, the barriers' time taken
out); both are max-reduced
over ranks, the first `warmup` iterations dropped, the median kept. Beside them: the bytes a
worker sends and what the network model predicts on `profile` for the same plan, both by
the algorithms the model priced (the cheapest for each call).
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import statistics
import time
from dataclasses import dataclass

VOTE_TRANSPORTS = ("int8-allreduce", "allgather-1bit", "a2a-1bit", "pbit-allreduce", "param-server")
BASELINE = "fp32-allreduce"


@dataclass(frozen=True, kw_only=True, slots=True)
class TransportConfig:
    """One transports benchmark."""

    numel: int = 25_000_000
    """Parameters in the payload."""
    ranks: int = 2
    """gloo ranks (the N of every transport)."""
    warmup: int = 1
    """Iterations dropped per transport."""
    iters: int = 5
    """Timed iterations per transport."""
    timeout_s: float = 120.0
    """Seconds a rank may wait in one collective, and the parent for the ranks' results."""
    transports: tuple[str, ...] = (BASELINE, *VOTE_TRANSPORTS)
    """Transports to run, the baseline first."""


def _rank(rank: int, cfg: TransportConfig, port: int, messages) -> None:
    import torch
    import torch.distributed as dist

    from lionsim.aggregators import VOTE_RULES
    from lionsim.backends import ProcessGroupComm
    from lionsim.group.env import Rendezvous
    from lionsim.group.join import join, leave
    from lionsim.transports import TRANSPORTS, Payload, PayloadSpec

    torch.set_num_threads(1)
    join("gloo", Rendezvous(rank=rank, world_size=cfg.ranks, local_rank=rank, addr="127.0.0.1", port=port),
         cfg.timeout_s)
    g = torch.Generator().manual_seed(rank)
    votes = (torch.randint(0, 2, (1, cfg.numel), generator=g, dtype=torch.int8) * 2 - 1).to(torch.int8)
    grads = torch.randn(1, cfg.numel, generator=g)
    comm, results = ProcessGroupComm(), {}
    for name in cfg.transports:
        transport = TRANSPORTS.get(name)()
        kind = transport.carries[0]
        spec = PayloadSpec(kind=kind, numel=cfg.numel, rule=VOTE_RULES.get("mavo")() if kind == "votes" else None)
        transport.check(spec, cfg.ranks)
        payload = Payload(spec, votes if kind == "votes" else grads)
        rows = []
        for _ in range(cfg.warmup + cfg.iters):
            comm.take_log()
            dist.barrier()
            t0 = time.perf_counter()
            transport.aggregate(payload, comm)
            total = time.perf_counter() - t0
            calls = comm.take_log()  # the aggregate without the barriers that align each call
            rows.append([sum(c.seconds for c in calls), total - sum(c.wait_s + c.trail_s for c in calls)])
        slowest = torch.tensor(rows[cfg.warmup:], dtype=torch.float64)
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        results[name] = slowest.tolist()
    leave()
    if rank == 0:
        messages.put(("done", results))


def measure_transports(cfg: TransportConfig) -> dict[str, list[list[float]]]:
    """{transport: [[comm_s, aggregate_s] per timed iteration]}, each the slowest rank's."""
    from lionsim.group.env import free_port

    ctx = mp.get_context("spawn")
    messages = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=_rank, args=(r, cfg, port, messages), daemon=True) for r in range(cfg.ranks)]
    for p in procs:
        p.start()
    try:
        deadline = time.monotonic() + 120.0 + cfg.timeout_s * len(cfg.transports)
        while time.monotonic() < deadline:
            try:
                return messages.get(timeout=0.5)[1]
            except queue.Empty:
                if any(p.exitcode not in (None, 0) for p in procs):
                    raise RuntimeError(f"a rank failed: exit codes {[p.exitcode for p in procs]}") from None
        raise RuntimeError("the transports benchmark ran past its time limit")
    finally:
        for p in procs:
            p.join(10)
            if p.is_alive():
                p.kill()
                p.join(5)


def transport_table(cfg: TransportConfig, measured: dict[str, list[list[float]]], network) -> list[dict]:
    """One row per transport: measured comm and aggregate (medians), wire bytes, the model's comm."""
    from lionsim.aggregators import VOTE_RULES
    from lionsim.steptime.timeline import price_calls
    from lionsim.transports import TRANSPORTS, PayloadSpec

    rows = []
    for name in cfg.transports:
        transport = TRANSPORTS.get(name)()
        kind = transport.carries[0]
        spec = PayloadSpec(kind=kind, numel=cfg.numel, rule=VOTE_RULES.get("mavo")() if kind == "votes" else None)
        calls = transport.plan(spec, cfg.ranks)
        model = price_calls(calls, cfg.ranks, network)  # bytes and seconds of the same algorithms
        rows.append({
            "transport": name,
            "calls": "+".join(c.op for c in calls),
            "wire_bytes": model.sent_bytes,
            "comm_s": statistics.median(r[0] for r in measured[name]),
            "aggregate_s": statistics.median(r[1] for r in measured[name]),
            "model_s": model.time_s,
        })
    base = rows[0]
    for row in rows:
        row["bytes_ratio"] = base["wire_bytes"] / row["wire_bytes"]
        row["comm_ratio"] = base["comm_s"] / row["comm_s"]
        row["aggregate_ratio"] = base["aggregate_s"] / row["aggregate_s"]
        row["model_ratio"] = base["model_s"] / row["model_s"]
        row["model_error"] = row["model_s"] / row["comm_s"] - 1
    return rows
