"""Generated data in fixed-size seeded chunks: a larger set is a superset of a smaller one."""

from __future__ import annotations

from typing import Callable

import torch
from torch import Tensor

from lionsim.workloads.seeding import torch_generator

CHUNK = 1024
"""Samples per generated chunk; chunk k of a stream depends only on (seed, stream, k)."""

Make = Callable[[int, torch.Generator], tuple[Tensor, Tensor]]


def generate(make: Make, n: int, seed: int, stream: str) -> tuple[Tensor, Tensor]:
    """The first `n` samples (inputs, labels) of the generated stream (seed, stream)."""
    parts = [make(CHUNK, torch_generator(seed, stream, k)) for k in range(-(-n // CHUNK))]
    x = torch.cat([p[0] for p in parts])[:n]
    y = torch.cat([p[1] for p in parts])[:n]
    return x, y


def balanced_labels(n: int, classes: int, gen: torch.Generator) -> Tensor:
    """`n` labels, each class equally often (up to one), in seeded random order."""
    return (torch.arange(n) % classes)[torch.randperm(n, generator=gen)]
