"""Flat parameter layout: one [P] vector for the replica, [W, P] for per-worker state.

The model's parameters become views into the flat vector, so strategies update one tensor
and the model sees it. `segment_ids` maps each flat position to its tensor, for per-tensor
statistics (L1 scales, TernGrad maxima) without a Python loop.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn


@dataclass(slots=True)
class ParamLayout:
    names: list[str]
    numels: list[int]
    segment_ids: Tensor
    """int64 [P]: index of the tensor each parameter belongs to."""
    shapes: list[tuple[int, ...]] | None = None
    """Each tensor's shape (PowerSGD compresses matrices); None: unknown, every tensor taken as
    a vector of its numel."""
    named: bool = True
    """Whether `names` are the model's tensors' (False: estimate's stand-in for --params, whose
    names say nothing: Strategy.tensor_names)."""

    @property
    def numel(self) -> int:
        return int(self.segment_ids.numel())

    @property
    def segments(self) -> int:
        return len(self.numels)

    @property
    def slices(self) -> list[slice]:
        """Each tensor's positions in the flat vector, in order (for per-tensor selection)."""
        bounds, start = [], 0
        for n in self.numels:
            bounds.append(slice(start, start + n))
            start += n
        return bounds

    @property
    def device(self) -> torch.device:
        """Where the parameters (and so every per-worker state buffer) live."""
        return self.segment_ids.device

    @classmethod
    def of(cls, named: list[tuple[str, Tensor]], device: torch.device | str = "cpu") -> "ParamLayout":
        numels = [p.numel() for _, p in named]
        ids = torch.repeat_interleave(torch.arange(len(numels)), torch.tensor(numels, dtype=torch.int64)).to(device)
        return cls([n for n, _ in named], numels, ids, [tuple(p.shape) for _, p in named])

    @classmethod
    def meta(cls, named: list[tuple[str, tuple[int, ...]]]) -> "ParamLayout":
        """The layout of tensors of these (name, shape)s on the meta device: a strategy built on it
        makes every buffer with a shape and no storage, so asking what it sends costs nothing."""
        numels = [math.prod(shape) for _, shape in named]
        ids = torch.empty(sum(numels), dtype=torch.int64, device="meta")
        return cls([n for n, _ in named], numels, ids, [tuple(shape) for _, shape in named])

    def shape(self, i: int) -> tuple[int, ...]:
        """Tensor i's shape ((numel,) when the shapes are unknown)."""
        return (self.numels[i],) if self.shapes is None else self.shapes[i]

    def segment_sum(self, x: Tensor) -> Tensor:
        """[w, P] -> [w, T]: per-tensor sums."""
        out = torch.zeros(x.shape[0], self.segments, dtype=x.dtype, device=x.device)
        return out.index_add_(1, self.segment_ids, x)

    def segment_mean(self, x: Tensor) -> Tensor:
        return self.segment_sum(x) / torch.tensor(self.numels, dtype=x.dtype, device=x.device)

    def segment_max(self, x: Tensor) -> Tensor:
        """[w, P] -> [w, T]: per-tensor maxima."""
        out = torch.full((x.shape[0], self.segments), float("-inf"), dtype=x.dtype, device=x.device)
        index = self.segment_ids.expand(x.shape[0], -1)
        return out.scatter_reduce_(1, index, x, reduce="amax")

    def expand(self, per_tensor: Tensor) -> Tensor:
        """[w, T] -> [w, P]: each tensor's value at each of its parameters."""
        return per_tensor[:, self.segment_ids]


def flatten_parameters(model: nn.Module) -> tuple[Tensor, ParamLayout]:
    """Make the model's trainable parameters views of one flat fp32 vector; return it."""
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    flat = torch.cat([p.detach().reshape(-1) for _, p in named]).float().contiguous()
    offset = 0
    for _, p in named:
        p.data = flat[offset : offset + p.numel()].view_as(p)
        offset += p.numel()
    return flat, ParamLayout.of(named, flat.device)


def gather_grads(model: nn.Module, out: Tensor) -> list[bool]:
    """Copy the model's parameter gradients into a flat [P] row (zeros where None); return, per
    tensor, whether it had a gradient."""
    offset, had = 0, []
    for p in model.parameters():
        if not p.requires_grad:
            continue
        n = p.numel()
        if p.grad is None:
            out[offset : offset + n].zero_()
        else:
            out[offset : offset + n].copy_(p.grad.reshape(-1))
        had.append(p.grad is not None)
        offset += n
    return had


def frozen_positions(layout: ParamLayout, used: Tensor) -> Tensor | None:
    """int64 [k]: the flat positions of the tensors no worker has a gradient for (`used` [T] bool),
    which a step leaves alone (lionsim.engine); None when every tensor has one (the fast path)."""
    if bool(used.all()):
        return None
    return torch.nonzero(~used.to(layout.device)[layout.segment_ids]).squeeze(1)
