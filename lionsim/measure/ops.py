"""Each collective as nccl-tests runs it: float32 buffers sized by the calls.py convention.

    op              n (bytes, calls.py)          buffers (float32 elements; R ranks)       redop
    all_reduce      the full vector               in-place [n/4]                             sum
    reduce          the full vector               in-place [n/4], root 0                     sum
    broadcast       the full vector               in-place [n/4], root 0                     none
    reduce_scatter  the full input                in [n/4] -> out [n/4/R]                    sum
    all_gather      the total output              in [n/4/R] -> out [n/4]                    none
    all_to_all      one rank's whole send buffer  in [n/4] -> out [n/4], n/4/R per peer      none

A size that is not a whole number of elements per rank is rounded down (as nccl-tests does);
the row reports the bytes actually moved. `count` is the elements of n (nccl-tests' count).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
import torch.distributed as dist

from lionsim.errors import LionsimError

DTYPE = torch.float32
TYPE_NAME = "float"
WORD = 4
"""Bytes per float32 element."""
_SPLIT = ("all_gather", "all_to_all", "reduce_scatter")
"""Ops whose buffer splits into R equal parts."""
REDOPS = {"all_reduce": "sum", "reduce": "sum", "reduce_scatter": "sum",
          "broadcast": "none", "all_gather": "none", "all_to_all": "none"}
ROOTS = {"broadcast": 0, "reduce": 0}
"""nccl-tests prints root -1 for rootless ops."""


@dataclass(frozen=True, slots=True)
class Sized:
    count: int
    """float32 elements of n."""
    nbytes: int
    """n actually moved, calls.py convention."""


def sized(op: str, nbytes: int, ranks: int) -> Sized:
    """The whole-element size of `op` on about `nbytes` among `ranks` ranks (LionsimError if none)."""
    if op not in REDOPS:
        raise LionsimError(f"cannot measure collective {op!r}; accepted: {', '.join(REDOPS)}")
    unit = WORD * ranks if op in _SPLIT else WORD
    count = (nbytes // unit) * (unit // WORD)
    if count == 0:
        raise LionsimError(f"size {nbytes} B is too small for {op} among {ranks} ranks: at least {unit} B")
    return Sized(count=count, nbytes=count * WORD)


def prepare(op: str, nbytes: int, ranks: int, device: torch.device) -> Callable[[], None]:
    """The buffers of one measurement, and a call that runs the collective once on them."""
    count = sized(op, nbytes, ranks).count
    full = torch.ones(count, dtype=DTYPE, device=device)
    part = torch.ones(count // ranks, dtype=DTYPE, device=device) if op in _SPLIT else None
    if op == "all_reduce":
        return lambda: dist.all_reduce(full)
    if op == "reduce":
        return lambda: dist.reduce(full, dst=0)
    if op == "broadcast":
        return lambda: dist.broadcast(full, src=0)
    if op == "reduce_scatter":
        return lambda: dist.reduce_scatter_tensor(part, full)
    if op == "all_gather":
        gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor  # renamed in torch 2.13
        return lambda: gather(full, part)
    out = torch.empty_like(full)
    return lambda: dist.all_to_all_single(out, full)
