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
    """The first `n` samples (inputs, labels) of the generated stream (seed, stream).

    Each chunk is written into the result as it is made, so the peak is the set and one chunk
    (the memory guard counts the set once); joining a list of chunks held the set twice."""
    x = y = None
    for k in range(max(1, -(-n // CHUNK))):  # one chunk at least: its shape and dtype
        cx, cy = make(CHUNK, torch_generator(seed, stream, k))
        if x is None:
            x, y = cx.new_empty((n, *cx.shape[1:])), cy.new_empty((n, *cy.shape[1:]))
        start = k * CHUNK
        take = min(CHUNK, n - start)
        x[start:start + take], y[start:start + take] = cx[:take], cy[:take]
    return x, y


def balanced_labels(n: int, classes: int, gen: torch.Generator) -> Tensor:
    """`n` labels, each class equally often (up to one), in seeded random order."""
    return (torch.arange(n) % classes)[torch.randperm(n, generator=gen)]
