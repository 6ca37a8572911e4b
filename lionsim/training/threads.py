"""torch's intra-op thread count for a block of work, restored after."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import torch


@contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    """Run the block with `threads` intra-op threads, then restore the caller's count.

    Everything a training does runs under it, building the workload included: with torch's
    default (one thread per core) the data generation of two sweep workers on two cores ran
    four threads that waited on each other, 3-20x slower than on one thread (issue 22)."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)
