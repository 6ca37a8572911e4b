"""Timing real collectives, as a dedicated host would see them (`align`, on by default):

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
seconds, waits, scope) with the op and size convention of lionsim.network.calls, so the
network model can price exactly the collectives that ran; the run bills each call as the
slowest rank's time of that call (lionsim.training.booking).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch import Tensor

OPS = {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX}
"""lionsim's reduce op names -> torch's."""


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
    start_s: float = 0.0
    """perf_counter on this rank when the call began (after the aligning barrier): the
    measured timeline of --trace (lionsim.training.spans)."""


class TimedGroup:
    """A process's place in a torch.distributed group and the log of the collectives it timed
    there (module doc); ProcessGroupComm and the cross-node communicator build on it."""

    def __init__(self, group: dist.ProcessGroup | None = None, local_workers: int = 1, *,
                 align: bool = True, workers_per_node: int = 1, scope: str = "world",
                 parent: TimedGroup | None = None) -> None:
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
        start = time.perf_counter()
        seconds = time_call(run, group_device(self.group))
        trail = 0.0
        if self.align:
            t0 = time.perf_counter()
            dist.barrier(group=self.group)  # untimed: nobody works while a peer is still in the call
            trail = time.perf_counter() - t0
        log = self.parent.log if self.parent is not None else self.log  # a subgroup logs in its parent's
        log.append(MeasuredCall(op, nbytes, seconds, str(x.dtype).removeprefix("torch."), wait, trail, self.scope,
                                start))


GATHER = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor  # renamed in torch 2.13


def faulted(shape, like: Tensor) -> Tensor:
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


def group_device(group: dist.ProcessGroup | None) -> torch.device:
    """Where this group's collectives run: CUDA for NCCL, CPU otherwise."""
    return torch.device("cuda", torch.cuda.current_device()) if dist.get_backend(group) == "nccl" else torch.device("cpu")
