"""The kernels a real implementation runs, as the codec kernel table prices them.

`lionsim.steptime.passes` counts the ideal: one fused kernel per pass, every input read once and
every output written once. Real code is not that: a codec is a chain of eager torch ops, each
writing a temporary the next reads back; an optimizer is fused in large-model trainers
(apex/DeepSpeed/Megatron FusedAdam, torch.optim.AdamW(fused=True)) and a chain of ops
elsewhere. Strategies and transports declare what their implementations run as `Op`s (each
with a comment saying what it counts) and their optimizer arithmetic as a `Step` with its
three forms; `estimate --kernels table` prices each op at its kernel's row of the codec kernel
table (lionsim.compute.kernel_table) and `--optimizer` picks the step's form.

A kernel launch costs at least the device's per-kernel floor (compute.Device.kernel_s), which
decides small models: an eager optimizer launches its ops once per parameter tensor, a
multi-tensor one once per list of tensors (MULTI_TENSOR_* below).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

OPTIMIZER_KINDS = ("fused", "foreach", "eager")
"""How an optimizer's elementwise step runs: one fused multi-tensor kernel (apex/DeepSpeed/Megatron
FusedAdam, torch.optim.AdamW(fused=True)), torch's multi-tensor foreach ops (one launch per op per
list of tensors), or its for-loop (every op launched once per parameter tensor)."""
DEFAULT_OPTIMIZER = "fused"
"""What large-model trainers run: Megatron-LM and DeepSpeed use fused Adam, torchtitan
torch.optim.AdamW(fused=True)."""

MULTI_TENSOR_CHUNK = 65536
"""Elements per block of a multi-tensor launch (kChunkSize), PyTorch
aten/src/ATen/native/cuda/MultiTensorApply.cuh (the 4 KB kernel-argument build; apex's is the same)."""
MULTI_TENSOR_BLOCKS = 320
"""Blocks one multi-tensor launch covers at most (depth_to_max_blocks), same file."""
MULTI_TENSOR_TENSORS = {1: 110, 2: 64, 3: 48, 4: 36, 5: 30}
"""Tensors one launch covers at most, by the lists it walks (depth_to_max_tensors), same file."""


SECTOR = 32
"""Bytes of a GPU's smallest memory transaction (NVIDIA CUDA C++ Best Practices Guide, "Coalesced
Access to Global Memory"): a scattered 4-byte add reads and writes a whole sector."""


def multi_tensor_launches(tensors: int, params: int, depth: int) -> int:
    """Launches of one multi-tensor op over `tensors` tensors of `params` elements in all that walks
    `depth` lists: a launch ends when it holds its most tensors or its most blocks."""
    by_tensors = math.ceil(tensors / MULTI_TENSOR_TENSORS[min(max(depth, 1), 5)])
    by_blocks = math.ceil(params / (MULTI_TENSOR_CHUNK * MULTI_TENSOR_BLOCKS))
    return max(1, by_tensors, by_blocks)


@dataclass(frozen=True, slots=True)
class Op:
    """One kernel (or one counted chain) of a real implementation."""

    kernel: str
    """The codec kernel table row that prices it (lionsim.compute.kernel_table.KERNELS)."""
    nbytes: float
    """Bytes it reads and writes per parameter (per sent pair when `per` is "pair"); for a top-k
    selection, the bytes of its input (the row's rate is per input byte)."""
    what: str
    """What it counts."""
    launches: int = 1
    """Kernels it launches per step."""
    per: Literal["param", "pair"] = "param"
    """What nbytes is per: a parameter, or a pair a sparse payload sends (x k / numel)."""
    per_tensor: int = 0
    """Kernels it launches per parameter tensor besides `launches` (a loop over the model's tensors)."""

    def per_param(self, pair_share: float) -> float:
        """Bytes per parameter, with `pair_share` sent pairs per parameter."""
        return self.nbytes * (pair_share if self.per == "pair" else 1.0)

    def kernels(self, tensors: int) -> int:
        """Kernels it launches in a step over `tensors` parameter tensors."""
        return self.launches + self.per_tensor * tensors


def stream(nbytes: float, what: str, launches: int = 1, per_tensor: int = 0) -> Op:
    """An elementwise eager op (or chain of them) on float data: the float-pass row."""
    return Op("float-pass", nbytes, what, launches, per_tensor=per_tensor)


@dataclass(frozen=True, slots=True)
class Step:
    """An optimizer's elementwise step (AdamW's, Lion's, a vote rule's), in the three forms
    OPTIMIZER_KINDS. Byte counts are per parameter, float32 state; the gradient or aggregate the
    step reads is counted at `aggregate` bytes (the pricing swaps in what the transport leaves)."""

    name: str
    fused: float
    """One kernel: every input read once, every output written once."""
    chain: float
    """The op chain the foreach and for-loop forms run (the same ops, so the same bytes)."""
    ops: int
    """Ops in the chain."""
    source: str
    """Whose code the chain is counted from."""
    aggregate: float = 4.0
    """Bytes per parameter of the gradient or aggregate it reads (once, in every form)."""
    depth: int = 4
    """Tensor lists the fused kernel walks (MULTI_TENSOR_TENSORS)."""

    def nbytes(self, kind: str) -> float:
        return self.fused if kind == "fused" else self.chain

    def kernels(self, kind: str, tensors: int, params: int, aggregate: float | None = None) -> tuple[Op, ...]:
        """The step as `kind` runs it over `tensors` parameter tensors of `params` elements in all;
        `aggregate`: the bytes per parameter of what it reads as the gradient (None: its own count)."""
        extra = 0.0 if aggregate is None else aggregate - self.aggregate
        if kind == "fused":
            return (Op("fused-optimizer", self.fused + extra, f"{self.name}, one fused kernel",
                       multi_tensor_launches(tensors, params, self.depth)),)
        if kind == "foreach":
            per_op = multi_tensor_launches(tensors, params, min(self.depth, 3))
            return (stream(self.chain + extra, f"{self.name}, {self.ops} foreach ops", self.ops * per_op),)
        if kind == "eager":
            return (stream(self.chain + extra, f"{self.name}, {self.ops} ops per tensor", self.ops * max(1, tensors)),)
        raise ValueError(f"unknown optimizer kind {kind!r}")
