"""A real rank's communicator over a torch.distributed process group (gloo or NCCL).

The rank holds w virtual workers (w = W / R), the rows of every tensor a transport passes:
each collective first combines the local rows (the sum of the rank's votes, its rows of a
gather), then runs ONE real collective among the R ranks, then hands every local row the
result, so transports written for the simulator run unchanged. With w = 1 this is one
worker per rank.

Measurement, as a dedicated host would see it (`align`, on by default):

    barrier (its wait is logged: how long this rank waited for its peers, i.e. rank imbalance)
    -> the collective, timed (perf_counter around the blocking call; CUDA events on NCCL)
    -> barrier, untimed

The leading barrier starts every rank together, so a rank still computing does not count
as network time. The trailing one keeps every rank out of CPU work until all have left the
call: on a host whose cores the ranks share, a rank that runs straight into encode or
decode starves a peer still inside the same call (its library's threads wait a scheduler
tick, about 4 ms, for a core), which inflated the 1-bit transports' measured time 2-5x
here. Output buffers are allocated and faulted in before the call, so the call does not
pay the page faults of fresh memory either. Every timed call is logged as (op, bytes, dtype,
seconds, wait) with the op and size convention of lionsim.network.calls, so the network
model can price exactly the collectives that ran; the run bills each call as the slowest
rank's time of that call (lionsim.training.booking). `exchange_control` carries the loop's
own bookkeeping (losses, divergence flags) untimed and unlogged.

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
    dtype: str = "float32"
    """The wire dtype (torch name)."""
    wait_s: float = 0.0
    """This rank's wait in the aligning barrier before the call."""
    trail_s: float = 0.0
    """This rank's time in the untimed barrier after the call (with wait_s: what alignment
    added to this rank's wall clock, which a caller timing a whole aggregate takes out)."""
    scope: str = "world"
    """lionsim.network.calls scope: the whole group, a node-local or a cross-node subgroup."""


class ProcessGroupComm:
    """This process holds `local_workers` consecutive workers of the W = R * w in `group`."""

    def __init__(self, group: dist.ProcessGroup | None = None, local_workers: int = 1, *,
                 align: bool = True, workers_per_node: int = 1, scope: str = "world",
                 parent: ProcessGroupComm | None = None) -> None:
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
        self.workers_per_node = workers_per_node
        """Workers in one node, for hierarchical transports (nodes())."""
        self.scope = scope
        """What this communicator's calls are: the world's, or a node-local / cross-node subgroup's."""
        self.parent = parent
        """A subgroup's communicator logs its calls in its parent's log (take_log sees every call)."""
        self._nodes = None

    def nodes(self):
        """Node-local and cross-node subgroups (lionsim.backends.dist_nodes), created once, together
        on every rank of the group."""
        if self._nodes is None:
            from lionsim.backends.dist_nodes import process_group_nodes

            self._nodes = process_group_nodes(self)
        return self._nodes

    def take_log(self) -> list[MeasuredCall]:
        """The collectives timed since the last call, and start a new log."""
        out, self.log = self.log, []
        return out

    def _timed(self, op: str, x: Tensor, nbytes: int, run) -> None:
        wait = 0.0
        if self.align:
            t0 = time.perf_counter()
            dist.barrier(group=self.group)
            wait = time.perf_counter() - t0
        seconds = time_call(run, _device(self.group))
        trail = 0.0
        if self.align:
            t0 = time.perf_counter()
            dist.barrier(group=self.group)  # untimed: nobody works while a peer is still in the call
            trail = time.perf_counter() - t0
        log = self.parent.log if self.parent is not None else self.log  # a subgroup logs in its parent's
        log.append(MeasuredCall(op, nbytes, seconds, str(x.dtype).removeprefix("torch."), wait, trail, self.scope))

    def _rows(self, x: Tensor) -> Tensor:
        """The rank's result handed to each of its w rows."""
        return x.unsqueeze(0).expand(self.local_workers, *x.shape)

    def all_reduce(self, x: Tensor, op: str = "sum") -> Tensor:
        """x [w, *s] -> [w, *s]: the local rows combined, then summed (or max) over ranks."""
        out = local_sum(x, op).contiguous()
        if out.numel():
            self._timed("all_reduce", out, out.numel() * out.element_size(),
                        lambda: dist.all_reduce(out, op=_OPS[op], group=self.group))
        return self._rows(out)

    def all_gather(self, x: Tensor) -> Tensor:
        """x [w, *s] -> [w, W, *s]: every worker's row, in worker order."""
        x = x.contiguous()
        out = _faulted((self.ranks, *x.shape), x)  # [R, w, *s]: the same single-tensor call `lionsim comm` times
        if x.numel():
            self._timed("all_gather", x, out.numel() * out.element_size(),
                        lambda: _GATHER(out.view(-1), x.view(-1), group=self.group))
        return self._rows(out.reshape(self.world_size, *x.shape[1:]))  # [R*w = W, *s]

    def all_to_all(self, x: Tensor) -> Tensor:
        """x [w, W, *s] -> [w, W, *s]: out[i][j] = x[j][i] over global workers i, j."""
        w, shape = self.local_workers, x.shape[2:]
        send = x.transpose(0, 1).contiguous()  # [W dest, w src, *s]: rank q's block is rows q*w..q*w+w
        recv = _faulted(send.shape, send)  # [R src, w dest (mine), w src, *s] once reshaped
        if send.numel():
            self._timed("all_to_all", send, send.numel() * send.element_size(),
                        lambda: dist.all_to_all_single(recv, send, group=self.group))
        recv = recv.reshape(self.ranks, w, w, *shape).transpose(0, 1)  # [w mine, R src, w src, *s]
        return recv.reshape(w, self.world_size, *shape)

    def gather(self, x: Tensor, root: int = 0) -> Tensor | None:
        """x [w, *s] -> [W, *s] on the rank holding worker `root`, None elsewhere."""
        x = x.contiguous()
        dst = root // self.local_workers
        parts = [_faulted(x.shape, x) for _ in range(self.ranks)] if self.rank == dst else None
        if x.numel():
            self._timed("ps_push", x, x.numel() * x.element_size(),
                        lambda: dist.gather(x, parts, dst=dst, group=self.group))
        return torch.cat(parts) if parts is not None else None

    def broadcast(self, x: Tensor | None, root: int = 0, like: Tensor | None = None) -> Tensor:
        """The root worker's x [*s] -> [w, *s] on every rank; other ranks pass `like`."""
        src = root // self.local_workers
        buf = x.contiguous() if self.rank == src else _faulted(like.shape, like)
        if buf.numel():
            self._timed("ps_pull", buf, buf.numel() * buf.element_size(),
                        lambda: dist.broadcast(buf, src=src, group=self.group))
        return self._rows(buf)

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


_GATHER = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor  # renamed in torch 2.13


def _faulted(shape, like: Tensor) -> Tensor:
    """A fresh buffer whose pages are already mapped (zero-filled), so a collective writing
    into it is not timed paying first-touch page faults."""
    return torch.zeros(tuple(shape), dtype=like.dtype, device=like.device)


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
