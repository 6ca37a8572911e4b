"""A real rank's communicator over a torch.distributed process group (gloo or NCCL).

The rank holds w virtual workers (w = W / R), the rows of every tensor a transport passes:
each collective first combines the local rows (the sum of the rank's votes, its rows of a
gather), then runs ONE real collective among the R ranks, then hands every local row the
result, so transports written for the simulator run unchanged. With w = 1 this is one
worker per rank.

Measurement: each real collective is timed on its own, after a barrier so that every rank
starts it together (a rank that is still computing does not count as network time); CUDA
collectives are timed with CUDA events. Every timed call is logged as (op, bytes, seconds)
with the op and size convention of lionsim.network.calls, so the network model can price
exactly the collectives that ran. `exchange_control` carries the loop's own bookkeeping
(losses, divergence flags) untimed and unlogged.

gloo facts (REFERENCE.md 7): SUM/MAX work for float32, bfloat16, int8, uint8, int32; AVG and
int16 do not; gathering empty tensors hangs (empty payloads are skipped on every rank alike).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch import Tensor

from lionsim.backends.sim import local_sum

_OPS = {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX}


@dataclass(frozen=True, slots=True)
class MeasuredCall:
    """One real collective as it ran on this rank."""

    op: str
    """lionsim.network.calls op (gather runs ps_push, broadcast ps_pull)."""
    nbytes: int
    """Size by the calls.py convention, among the R ranks."""
    seconds: float
    """Wall time of the collective on this rank, after the aligning barrier."""


class ProcessGroupComm:
    """This process holds `local_workers` consecutive workers of the W = R * w in `group`."""

    def __init__(self, group: dist.ProcessGroup | None = None, local_workers: int = 1, *,
                 align: bool = True) -> None:
        if local_workers < 1:
            raise ValueError(f"local_workers must be >= 1, got {local_workers}")
        self.group = group
        self.ranks = dist.get_world_size(group)
        self.rank = dist.get_rank(group)
        self.local_workers = local_workers
        self.world_size = self.ranks * local_workers
        self.first_worker = self.rank * local_workers
        self.align = align
        self.log: list[MeasuredCall] = []

    def take_log(self) -> list[MeasuredCall]:
        """The collectives timed since the last call, and start a new log."""
        out, self.log = self.log, []
        return out

    def _timed(self, op: str, nbytes: int, run) -> None:
        if self.align:
            dist.barrier(group=self.group)
        self.log.append(MeasuredCall(op, nbytes, time_call(run, _device(self.group))))

    def _rows(self, x: Tensor) -> Tensor:
        """The rank's result handed to each of its w rows."""
        return x.unsqueeze(0).expand(self.local_workers, *x.shape)

    def all_reduce(self, x: Tensor, op: str = "sum") -> Tensor:
        """x [w, *s] -> [w, *s]: the local rows combined, then summed (or max) over ranks."""
        out = local_sum(x, op).contiguous()
        if out.numel():
            self._timed("all_reduce", out.numel() * out.element_size(),
                        lambda: dist.all_reduce(out, op=_OPS[op], group=self.group))
        return self._rows(out)

    def all_gather(self, x: Tensor) -> Tensor:
        """x [w, *s] -> [w, W, *s]: every worker's row, in worker order."""
        x = x.contiguous()
        parts = [torch.empty_like(x) for _ in range(self.ranks)]
        if x.numel():
            self._timed("all_gather", self.ranks * x.numel() * x.element_size(),
                        lambda: dist.all_gather(parts, x, group=self.group))
        return self._rows(torch.cat(parts))  # [R*w = W, *s]

    def all_to_all(self, x: Tensor) -> Tensor:
        """x [w, W, *s] -> [w, W, *s]: out[i][j] = x[j][i] over global workers i, j."""
        w, shape = self.local_workers, x.shape[2:]
        send = x.transpose(0, 1).contiguous()  # [W dest, w src, *s]: rank q's block is rows q*w..q*w+w
        recv = torch.empty_like(send)  # [R src, w dest (mine), w src, *s] once reshaped
        if send.numel():
            self._timed("all_to_all", send.numel() * send.element_size(),
                        lambda: dist.all_to_all_single(recv, send, group=self.group))
        recv = recv.reshape(self.ranks, w, w, *shape).transpose(0, 1)  # [w mine, R src, w src, *s]
        return recv.reshape(w, self.world_size, *shape)

    def gather(self, x: Tensor, root: int = 0) -> Tensor | None:
        """x [w, *s] -> [W, *s] on the rank holding worker `root`, None elsewhere."""
        x = x.contiguous()
        dst = root // self.local_workers  # a rank of the group
        parts = [torch.empty_like(x) for _ in range(self.ranks)] if self.rank == dst else None
        if x.numel():
            self._timed("ps_push", x.numel() * x.element_size(),
                        lambda: dist.gather(x, parts, dst=self._global(dst), group=self.group))
        return torch.cat(parts) if parts is not None else None

    def broadcast(self, x: Tensor | None, root: int = 0, like: Tensor | None = None) -> Tensor:
        """The root worker's x [*s] -> [w, *s] on every rank; other ranks pass `like`."""
        src = root // self.local_workers  # a rank of the group
        buf = x.contiguous() if self.rank == src else torch.empty_like(like)
        if buf.numel():
            self._timed("ps_pull", buf.numel() * buf.element_size(),
                        lambda: dist.broadcast(buf, src=self._global(src), group=self.group))
        return self._rows(buf)

    def _global(self, group_rank: int) -> int:
        """The global rank of a rank of this group: gather's dst and broadcast's src take global
        ranks, even with a group (a subgroup without global rank 0 would otherwise fail)."""
        return group_rank if self.group is None else dist.get_global_rank(self.group, group_rank)

    def exchange_control(self, x: Tensor) -> Tensor:
        """x [w, k] -> [W, k]: every worker's row, untimed (the loop's losses and flags)."""
        x = x.to(_device(self.group)).contiguous()
        parts = [torch.empty_like(x) for _ in range(self.ranks)]
        dist.all_gather(parts, x, group=self.group)
        return torch.cat(parts)

    def max_over_ranks(self, x: Tensor) -> Tensor:
        """Element-wise maximum of x over ranks, untimed (per-rank timings -> the slowest)."""
        out = x.to(_device(self.group), copy=True)
        dist.all_reduce(out, op=dist.ReduceOp.MAX, group=self.group)
        return out.to(x.device)


def time_call(run, device: torch.device) -> float:
    """Seconds `run()` takes: CUDA events around it on a GPU (the collective's own time on the
    stream), perf_counter around the blocking call on a CPU."""
    if device.type == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3
    t0 = time.perf_counter()
    run()
    return time.perf_counter() - t0


def _device(group: dist.ProcessGroup | None) -> torch.device:
    """Where this group's collectives run: CUDA for NCCL, CPU otherwise."""
    return torch.device("cuda", torch.cuda.current_device()) if dist.get_backend(group) == "nccl" else torch.device("cpu")
