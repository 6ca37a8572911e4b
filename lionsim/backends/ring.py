"""What a ring all-reduce computes when it adds in the wire dtype (bf16): every partial sum is
rounded to that dtype before it is sent on, so the sum's error grows with the number of hops
(N - 1 for N workers), unlike a sum done in float32 and rounded once.

The model (Patarasuk & Yuan 2009's ring, as NCCL and gloo run it for large messages): the
vector is cut into N equal chunks (the last one shorter); chunk c's partial sum starts at
worker (c + 1) mod N and travels c + 2, c + 3, ..., ending at worker c, each worker adding its
own value to what it received (in float32, then rounded to the wire dtype: what the hop sends);
the all-gather half then only copies the finished sums. A real library cuts and orders chunks
its own way (NCCL: by channels and slices), so its bits differ; the number of rounded hops per
element, and so the error's growth with N, is the ring's.
"""

from __future__ import annotations

import torch
from torch import Tensor


def ring_sum(x: Tensor) -> Tensor:
    """x [N, *s] in a float dtype -> [*s] in that dtype: the ring's sum, rounded to x's dtype at
    every hop. Each hop adds in float32 (as NCCL and gloo convert, add and convert back)."""
    workers = x.shape[0]
    flat = x.reshape(workers, -1)  # [N, n]
    numel = flat.shape[1]
    chunk = max(-(-numel // workers), 1)
    chunks = torch.nn.functional.pad(flat, (0, chunk * workers - numel)).view(workers, workers, chunk)  # [N, C, c]
    index = torch.arange(workers, device=x.device)  # chunk c
    acc = chunks[(index + 1) % workers, index]  # [C, c]: each chunk's first worker's own value
    for hop in range(1, workers):
        own = chunks[(index + 1 + hop) % workers, index]  # the next worker along each chunk's ring
        acc = (acc.float() + own.float()).to(x.dtype)  # one hop: add, round to the wire dtype
    return acc.reshape(-1)[:numel].reshape(x.shape[1:])
