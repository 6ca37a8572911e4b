"""One rank of a measured sweep: join the group, time every (collective, size), report.

Every iteration starts after a barrier, so all ranks start it together; a CPU collective is
timed with perf_counter around the blocking call, a CUDA one with CUDA events. The first
`warmup` iterations of each size are dropped. The sizes of one collective are interleaved:
iteration i of every size runs before iteration i + 1 of any, so load that comes and goes on
a shared machine falls on every size alike instead of bending the curve at the sizes that
happened to run during it. Then the per-iteration times are max-reduced over ranks
(untimed): an iteration lasts until its slowest rank is done, as nccl-tests reports it.
Rank 0 sends a heartbeat per round and one message per size to the parent.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from lionsim.backends.dist import time_call
from lionsim.measure.config import MeasureConfig
from lionsim.measure.ops import prepare


def _time_once(run, device: torch.device) -> float:
    dist.barrier()
    return time_call(run, device)


def sweep(cfg: MeasureConfig, device: torch.device, report, beat=lambda: None) -> None:
    """Measure every (collective, size) of `cfg`; `report(op, nbytes, times)` on rank 0."""
    for op in cfg.collectives:
        runs = [prepare(op, size, cfg.ranks, device) for size in cfg.sizes]
        times = torch.zeros(cfg.iters, len(runs), dtype=torch.float64)  # [iteration, size]
        for i in range(cfg.warmup + cfg.iters):
            for j, run in enumerate(runs):
                t = _time_once(run, device)
                if i >= cfg.warmup:
                    times[i - cfg.warmup, j] = t
            beat()
        slowest = times.to(device)
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        if dist.get_rank() == 0:
            for j, size in enumerate(cfg.sizes):
                report(op, size, slowest[:, j].cpu().tolist())
        del runs


def rank_main(rank: int, cfg: MeasureConfig, port: int, messages) -> None:
    """A spawned rank's process: its whole life, every outcome sent to the parent as one message."""
    import sys

    from lionsim.errors import LionsimError
    from lionsim.launch.env import Rendezvous
    from lionsim.launch.rank import join

    torch.set_num_threads(1)  # R ranks share the cores: no oversubscription
    device = torch.device("cpu")
    if cfg.backend == "nccl":
        device = torch.device("cuda", rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
    rv = Rendezvous(rank=rank, world_size=cfg.ranks, local_rank=rank, addr="127.0.0.1", port=port)
    try:
        join(cfg.backend, rv, cfg.timeout_s)
        try:
            sweep(cfg, device, lambda op, size, times: messages.put(("point", rank, op, size, times)),
                  lambda: messages.put(("beat", rank)) if rank == 0 else None)
            dist.barrier()  # gloo: no rank tears the group down while a peer still uses it
        finally:
            dist.destroy_process_group()
    except LionsimError as e:
        messages.put(("error", rank, 2, str(e)))
        sys.exit(2)
    except RuntimeError as e:  # a collective failed: a peer died, the timeout passed
        messages.put(("error", rank, 1, " ".join(str(e).encode("ascii", "ignore").decode().split())[:300]))
        sys.exit(1)
    messages.put(("done", rank))
