"""Each collective as nccl-tests runs it: buffers of one dtype sized by the calls.py convention.

    op              n (bytes, calls.py)          buffers (elements of the dtype; R ranks)   redop
    all_reduce      the full vector               in-place [n/e]                             sum
    reduce          the full vector               in-place [n/e], root 0                     sum
    broadcast       the full vector               in-place [n/e], root 0                     none
    reduce_scatter  the full input                in [n/e] -> out [n/e/R]                    sum
    all_gather      the total output              in [n/e/R] -> out [n/e]                    none
    all_to_all      one rank's whole send buffer  in [n/e] -> out [n/e], n/e/R per peer      none
    ps_push         one rank's push               gather of [n/e] to rank 0                  none
    ps_pull         the vector pulled             broadcast of [n/e] from rank 0             none

(ps_push and ps_pull are how lionsim's ranks run the parameter server: `bench --calibrate`
measures them; `lionsim comm` measures the nccl-tests ops.)

e is the dtype's element size. A size that is not a whole number of elements (per rank, for
the ops that split) is rounded down, as nccl-tests does, but never below one element (per
rank): a 1-byte all-reduce of uint8 is one element, a 1-byte all-gather among 2 ranks moves
2 bytes. The row reports the bytes actually moved; `count` is the elements of n.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
import torch.distributed as dist

from lionsim.errors import LionsimError
from lionsim.registry import did_you_mean

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16,
          "int8": torch.int8, "uint8": torch.uint8, "int32": torch.int32}
"""Wire dtypes a sweep may measure (torch names; gloo sums each of them)."""
TYPE_NAMES = {"float32": "float", "bfloat16": "bfloat16", "float16": "half", "int8": "int8", "uint8": "uint8",
              "int32": "int32"}
"""nccl-tests' names for them (its `type` column)."""
_SPLIT = ("all_gather", "all_to_all", "reduce_scatter")
"""Ops whose buffer splits into R equal parts."""
REDOPS = {"all_reduce": "sum", "reduce": "sum", "reduce_scatter": "sum",
          "broadcast": "none", "all_gather": "none", "all_to_all": "none", "ps_push": "none", "ps_pull": "none"}
ROOTS = {"broadcast": 0, "reduce": 0, "ps_push": 0, "ps_pull": 0}
"""nccl-tests prints root -1 for rootless ops."""


@dataclass(frozen=True, slots=True)
class Sized:
    count: int
    """Elements of n."""
    nbytes: int
    """n actually moved, calls.py convention."""


def check_dtype(name: str) -> str:
    if name not in DTYPES:
        raise LionsimError(f"unknown dtype {name!r} to measure; accepted: {', '.join(DTYPES)}{did_you_mean(name, DTYPES)}")
    return name


def sized(op: str, nbytes: int, ranks: int, dtype: str = "float32") -> Sized:
    """The whole-element size of `op` on about `nbytes` of `dtype` among `ranks` ranks."""
    if op not in REDOPS:
        raise LionsimError(f"cannot measure collective {op!r}; accepted: {', '.join(REDOPS)}")
    word = DTYPES[check_dtype(dtype)].itemsize
    per = ranks if op in _SPLIT else 1  # elements come in whole sets of one per rank
    count = max(1, nbytes // (word * per)) * per
    return Sized(count=count, nbytes=count * word)


def prepare(op: str, nbytes: int, ranks: int, device: torch.device, dtype: str = "float32",
            group: dist.ProcessGroup | None = None) -> Callable[[], None]:
    """The buffers of one measurement, and a call that runs the collective once on them."""
    count = sized(op, nbytes, ranks, dtype).count
    full = torch.ones(count, dtype=DTYPES[dtype], device=device)
    part = torch.ones(count // ranks, dtype=full.dtype, device=device) if op in _SPLIT else None
    if op == "all_reduce":
        return lambda: dist.all_reduce(full, group=group)
    if op == "reduce":
        return lambda: dist.reduce(full, dst=dist.get_global_rank(group, 0) if group else 0, group=group)
    if op in ("broadcast", "ps_pull"):
        return lambda: dist.broadcast(full, src=dist.get_global_rank(group, 0) if group else 0, group=group)
    if op == "ps_push":
        root = dist.get_global_rank(group, 0) if group else 0
        parts = [torch.empty_like(full) for _ in range(ranks)] if dist.get_rank() == root else None
        return lambda: dist.gather(full, parts, dst=root, group=group)
    if op == "reduce_scatter":
        return lambda: dist.reduce_scatter_tensor(part, full, group=group)
    if op == "all_gather":
        gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor  # renamed in torch 2.13
        return lambda: gather(full, part, group=group)
    out = torch.empty_like(full)
    return lambda: dist.all_to_all_single(out, full, group=group)
