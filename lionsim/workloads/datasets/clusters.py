"""Synthetic tabular classification: each class a mixture of Gaussian blobs.

Several blobs per class make the classes not linearly separable, and blob centres are
drawn close enough that neighbouring classes overlap: a small MLP learns it well above
chance in a few hundred steps but does not reach 100%.
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.workloads.datasets.chunks import balanced_labels, generate
from lionsim.workloads.seeding import torch_generator

DIM = 32
"""Input features."""
CLASSES = 10
BLOBS = 3
"""Gaussian blobs per class."""
SPREAD = 0.6
"""Standard deviation of the blob centres per feature; the noise has standard deviation 1."""


def make_clusters(n: int, seed: int, stream: str) -> tuple[Tensor, Tensor]:
    """`n` samples (float32 (n, DIM), int64 (n,)) of stream "train" or "eval"; centres depend only on seed."""
    centres = SPREAD * torch.randn(CLASSES, BLOBS, DIM, generator=torch_generator(seed, "clusters", "centres"))

    def make(m: int, gen: torch.Generator) -> tuple[Tensor, Tensor]:
        y = balanced_labels(m, CLASSES, gen)
        blob = torch.randint(0, BLOBS, (m,), generator=gen)
        x = centres[y, blob] + torch.randn(m, DIM, generator=gen)
        return x, y

    return generate(make, n, seed, f"clusters/{stream}")
