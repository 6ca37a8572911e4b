"""Combining the rows a process holds: what one all-reduce hop adds, shared by every communicator."""

from __future__ import annotations

import torch
from torch import Tensor


def local_sum(x: Tensor, op: str = "sum") -> Tensor:
    """x [w, *s] -> [*s]: the rows combined, in x's dtype (what one all-reduce hop adds).

    Low-precision floats are summed in float32 and rounded once: the rows one process holds
    combined before its collective (the simulator's all-reduce of all W rows models the ring
    instead, lionsim.backends.ring). Integer sums are exact and refuse to leave the container's
    range.
    """
    if op == "max":
        return x.amax(0)
    if op != "sum":
        raise ValueError(f"unknown reduce op {op!r}; choose from: sum, max")
    if x.dtype.is_floating_point:
        return x.sum(0, dtype=torch.float32).to(x.dtype)
    out = x.sum(0, dtype=torch.int64)
    info = torch.iinfo(x.dtype)
    if out.numel() and (out.min() < info.min or out.max() > info.max):
        raise OverflowError(f"all_reduce sum overflows the {x.dtype} container")
    return out.to(x.dtype)
