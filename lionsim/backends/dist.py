"""A real rank's communicator over a torch.distributed process group (gloo or NCCL).

The rank holds w virtual workers (w = W / R), the rows of every tensor a transport passes:
each collective first combines the local rows (the sum of the rank's votes, its rows of a
gather), then runs ONE real collective among the R ranks, then hands every local row the
result, so transports written for the simulator run unchanged. With w = 1 this is one
worker per rank. Each collective is timed and logged as lionsim.backends.timed says (between
two barriers, the second untimed); `exchange_control` carries the loop's own bookkeeping
(losses, divergence flags) untimed and unlogged.

gloo facts (checked on torch 2.13): SUM/MAX work for float32, bfloat16, int8, uint8, int32; AVG and
int16 do not; gathering empty tensors hangs (empty payloads are skipped on every rank alike).
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch import Tensor

from lionsim.backends.dist_nodes import process_group_nodes
from lionsim.backends.local import local_sum
from lionsim.backends.timed import GATHER, OPS, TimedGroup, faulted, group_device


class ProcessGroupComm(TimedGroup):
    """This process holds `local_workers` consecutive workers of the W = R * w in `group`."""

    def nodes(self):
        """Node-local and cross-node subgroups (lionsim.backends.dist_nodes), created once, together
        on every rank of the group."""
        if self._nodes is None:
            self._nodes = process_group_nodes(self)
        return self._nodes

    def _rows(self, x: Tensor) -> Tensor:
        """The rank's result handed to each of its w rows."""
        return x.unsqueeze(0).expand(self.local_workers, *x.shape)

    def all_reduce(self, x: Tensor, op: str = "sum") -> Tensor:
        """x [w, *s] -> [w, *s]: the local rows combined, then summed (or max) over ranks."""
        out = local_sum(x, op).contiguous()
        if out.numel():
            self._timed("all_reduce", out, out.numel() * out.element_size(),
                        lambda: dist.all_reduce(out, op=OPS[op], group=self.group))
        return self._rows(out)

    def all_gather(self, x: Tensor) -> Tensor:
        """x [w, *s] -> [w, W, *s]: every worker's row, in worker order."""
        x = x.contiguous()
        out = faulted((self.ranks, *x.shape), x)  # [R, w, *s]: the same single-tensor call `lionsim comm` times
        if x.numel():
            self._timed("all_gather", x, out.numel() * out.element_size(),
                        lambda: GATHER(out.view(-1), x.view(-1), group=self.group))
        return self._rows(out.reshape(self.world_size, *x.shape[1:]))  # [R*w = W, *s]

    def all_to_all(self, x: Tensor) -> Tensor:
        """x [w, W, *s] -> [w, W, *s]: out[i][j] = x[j][i] over global workers i, j."""
        w, shape = self.local_workers, x.shape[2:]
        send = x.transpose(0, 1).contiguous()  # [W dest, w src, *s]: rank q's block is rows q*w..q*w+w
        recv = faulted(send.shape, send)  # [R src, w dest (mine), w src, *s] once reshaped
        if send.numel():
            self._timed("all_to_all", send, send.numel() * send.element_size(),
                        lambda: dist.all_to_all_single(recv, send, group=self.group))
        recv = recv.reshape(self.ranks, w, w, *shape).transpose(0, 1)  # [w mine, R src, w src, *s]
        return recv.reshape(w, self.world_size, *shape)

    def gather(self, x: Tensor, root: int = 0) -> Tensor | None:
        """x [w, *s] -> [W, *s] on the rank holding worker `root`, None elsewhere."""
        x = x.contiguous()
        dst = root // self.local_workers  # a rank of the group
        parts = [faulted(x.shape, x) for _ in range(self.ranks)] if self.rank == dst else None
        if x.numel():
            self._timed("ps_push", x, x.numel() * x.element_size(),
                        lambda: dist.gather(x, parts, dst=self._global(dst), group=self.group))
        return torch.cat(parts) if parts is not None else None

    def broadcast(self, x: Tensor | None, root: int = 0, like: Tensor | None = None) -> Tensor:
        """The root worker's x [*s] -> [w, *s] on every rank; other ranks pass `like`."""
        src = root // self.local_workers  # a rank of the group
        buf = x.contiguous() if self.rank == src else faulted(like.shape, like)
        if buf.numel():
            self._timed("ps_pull", buf, buf.numel() * buf.element_size(),
                        lambda: dist.broadcast(buf, src=self._global(src), group=self.group))
        return self._rows(buf)

    def _global(self, group_rank: int) -> int:
        """The global rank of a rank of this group: gather's dst and broadcast's src take global
        ranks, even with a group (a subgroup without global rank 0 would otherwise fail)."""
        return group_rank if self.group is None else dist.get_global_rank(self.group, group_rank)

    def exchange_control(self, x: Tensor) -> Tensor:
        """x [w, k] -> [W, k]: every worker's row, untimed (the loop's losses and flags)."""
        x = x.to(group_device(self.group)).contiguous()
        parts = [torch.empty_like(x) for _ in range(self.ranks)]
        dist.all_gather(parts, x, group=self.group)
        return torch.cat(parts)

    def max_over_ranks(self, x: Tensor) -> Tensor:
        """Element-wise maximum of x over ranks, untimed (per-rank timings -> the slowest)."""
        out = x.to(group_device(self.group), copy=True)
        dist.all_reduce(out, op=dist.ReduceOp.MAX, group=self.group)
        return out.to(x.device)
