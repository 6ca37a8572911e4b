"""Named random streams derived from one user seed.

Every random thing a workload draws (data, split, batch order, model init) gets its own
stream keyed by (seed, purpose, ...), so changing one (say the worker count) never shifts
the random numbers of another. Keys are hashed with blake2b, not Python's salted hash().
"""

from __future__ import annotations

import hashlib
from contextlib import contextmanager
from typing import Iterator

import numpy as np
import torch


def derive_seed(*key: int | str) -> int:
    """A 63-bit seed that depends only on `key` (stable across processes and platforms)."""
    digest = hashlib.blake2b(repr(key).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") & ((1 << 63) - 1)


def torch_generator(*key: int | str) -> torch.Generator:
    """A CPU torch.Generator seeded from `key`."""
    return torch.Generator().manual_seed(derive_seed(*key))


def numpy_generator(*key: int | str) -> np.random.Generator:
    """A numpy Generator seeded from `key` (numpy has the Dirichlet sampler torch lacks a generator for)."""
    return np.random.default_rng(derive_seed(*key))


@contextmanager
def seeded_torch(*key: int | str) -> Iterator[None]:
    """Run a block (e.g. building a model) with the global CPU RNG seeded from `key`, restoring it after."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derive_seed(*key))
        yield
