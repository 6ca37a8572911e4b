"""One rank of a measured sweep: time every (collective, dtype, size), report.

Every iteration starts after a barrier, so all ranks start it together, and the next
iteration's barrier follows it before any other work (so no rank's CPU work overlaps a peer
still inside the call); a CPU collective is timed with perf_counter around the blocking call,
a CUDA one with CUDA events. The first `warmup` iterations of each size are dropped. The
sizes of one case are interleaved: iteration i of every size runs before iteration i + 1 of
any, so load that comes and goes on a shared machine falls on every size alike instead of
bending the curve at the sizes that happened to run during it. Then the per-iteration times
are max-reduced over ranks (untimed): an iteration lasts until its slowest rank is done, as
nccl-tests reports it.

Two ways to be a rank: `rank_main`, a process lionsim spawned on this machine (it reports to
the parent through a queue), and `measure_in_group`, a process a launcher started (torchrun,
any number of nodes): it joins the launcher's group and rank 0 returns the points.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from lionsim.backends.timed import time_call
from lionsim.errors import LionsimError
from lionsim.group.env import Rendezvous
from lionsim.group.join import check_same, join, leave
from lionsim.group.hosts import gather_hosts
from lionsim.measure.config import MeasureConfig
from lionsim.measure.ops import prepare, sized
from lionsim.measure.table import Point


def _time_once(run, device: torch.device) -> float:
    dist.barrier()
    return time_call(run, device)


def sweep(cfg: MeasureConfig, device: torch.device, report, beat=lambda: None) -> None:
    """Measure every (collective, dtype, size) of `cfg`; `report(Point)` on rank 0."""
    sweep_cases([(op, dtype, cfg.sizes) for op, dtype in cfg.cases()], cfg.ranks, cfg.warmup, cfg.iters, device,
                report, beat)


def sweep_cases(cases, ranks: int, warmup: int, iters: int, device: torch.device, report,
                beat=lambda: None, before=lambda: None) -> None:
    """Measure each (op, dtype, sizes) case, sizes interleaved (module doc); `report(Point)` on rank 0.
    `before()` runs untimed before every call (a training step's compute, so each call meets the
    library as a step's calls do: lionsim.measure.calibrate)."""
    for op, dtype, asked in cases:
        sizes = list(dict.fromkeys(sized(op, size, ranks, dtype).nbytes for size in asked))  # 1 B and 4 B
        runs = [prepare(op, size, ranks, device, dtype) for size in sizes]                  # may be one size
        times = torch.zeros(iters, len(runs), dtype=torch.float64)  # [iteration, size]
        for i in range(warmup + iters):
            for j, run in enumerate(runs):
                before()
                t = _time_once(run, device)
                if i >= warmup:
                    times[i - warmup, j] = t
            beat()
        dist.barrier()  # the last call is over everywhere before the untimed reduction
        slowest = times.to(device)
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        if dist.get_rank() == 0:
            for j, size in enumerate(sizes):
                report(Point(op=op, size=size, times=tuple(slowest[:, j].cpu().tolist()), dtype=dtype))
        del runs


def device_for(backend: str, local_rank: int) -> torch.device:
    """Where a rank's buffers live: one GPU per rank on NCCL (set as current), else the CPU."""
    if backend != "nccl":
        return torch.device("cpu")
    device = torch.device("cuda", local_rank % torch.cuda.device_count())
    torch.cuda.set_device(device)
    return device


def measure_in_group(cfg: MeasureConfig, rv, iface: str | None = None) -> tuple[list[Point], list[dict]] | None:
    """As one rank of a launcher's job: join its group, check every rank runs the same sweep and
    lionsim, measure; rank 0 gets (points, hosts), the others None."""
    torch.set_num_threads(1)
    device = device_for(cfg.backend, rv.local_rank)
    join(cfg.backend, rv, cfg.timeout_s, iface)
    try:
        check_same(cfg.to_dict(), device, "sweep")
        hosts = gather_hosts(device, iface)
        points: list[Point] = []
        sweep(cfg, device, points.append)
        dist.barrier()  # gloo: no rank tears the group down while a peer still uses it
    finally:
        leave()
    return (points, hosts) if rv.rank == 0 else None


def rank_main(rank: int, cfg: MeasureConfig, port: int, messages) -> None:
    """A spawned rank's process: its whole life, every outcome sent to the parent as one message."""
    import sys

    torch.set_num_threads(1)  # R ranks share the cores: no oversubscription
    device = device_for(cfg.backend, rank)
    rv = Rendezvous(rank=rank, world_size=cfg.ranks, local_rank=rank, addr="127.0.0.1", port=port,
                    source="a loopback port lionsim picked for the ranks it started")
    try:
        join(cfg.backend, rv, cfg.timeout_s)
        try:
            hosts = gather_hosts(device)
            if rank == 0:
                messages.put(("hosts", rank, hosts))
            sweep(cfg, device, lambda point: messages.put(("point", rank, point)),
                  lambda: messages.put(("beat", rank)) if rank == 0 else None)
            dist.barrier()  # gloo: no rank tears the group down while a peer still uses it
        finally:
            leave()
    except LionsimError as e:
        messages.put(("error", rank, 2, str(e)))
        sys.exit(2)
    except RuntimeError as e:  # a collective failed: a peer died, the timeout passed
        messages.put(("error", rank, 1, " ".join(str(e).encode("ascii", "ignore").decode().split())[:300]))
        sys.exit(1)
    messages.put(("done", rank))
