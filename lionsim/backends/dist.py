"""A real rank's communicator over a torch.distributed process group (gloo or NCCL).

Tensors carry a leading local-worker dimension of 1, so transports written for the
simulator run unchanged on a real rank. gloo facts (REFERENCE.md 7): SUM/MAX work for
float32, bfloat16, int8, uint8, int32; AVG does not; gathering empty tensors hangs.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch import Tensor

_OPS = {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX}


class ProcessGroupComm:
    """This process is one worker of `group` (None: the default group)."""

    def __init__(self, group: dist.ProcessGroup | None = None) -> None:
        self.group = group
        self.world_size = dist.get_world_size(group)
        self.rank = dist.get_rank(group)
        self.local_workers = 1

    def all_reduce(self, x: Tensor, op: str = "sum") -> Tensor:
        out = x[0].clone()
        if out.numel():
            dist.all_reduce(out, op=_OPS[op], group=self.group)
        return out.unsqueeze(0)

    def all_gather(self, x: Tensor) -> Tensor:
        parts = [torch.empty_like(x[0]) for _ in range(self.world_size)]
        if x[0].numel():
            dist.all_gather(parts, x[0].contiguous(), group=self.group)
        return torch.stack(parts).unsqueeze(0)

    def all_to_all(self, x: Tensor) -> Tensor:
        send = x[0].contiguous()
        out = torch.empty_like(send)
        if send.numel():
            dist.all_to_all_single(out, send, group=self.group)
        return out.unsqueeze(0)

    def gather(self, x: Tensor, root: int = 0) -> Tensor | None:
        parts = [torch.empty_like(x[0]) for _ in range(self.world_size)] if self.rank == root else None
        if x[0].numel():
            dist.gather(x[0].contiguous(), parts, dst=root, group=self.group)
        return torch.stack(parts) if parts is not None else None

    def broadcast(self, x: Tensor | None, root: int = 0, like: Tensor | None = None) -> Tensor:
        buf = x.contiguous() if self.rank == root else torch.empty_like(like)
        if buf.numel():
            dist.broadcast(buf, src=root, group=self.group)
        return buf.unsqueeze(0)
