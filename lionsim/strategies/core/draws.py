"""Uniform random numbers per virtual worker, a pure function of (seed, step, worker, index).

A stochastic quantizer (TernGrad, QSGD, DiLoCo's int8 outer gradient) must draw the same
numbers for worker i whether the simulator holds all W workers in one process or a gloo rank
holds W/R of them: a generator per process would hand worker i different draws on each
backend (and a rank would need to advance it by its peers' draws). So each draw is a counter
hash, as the random tie rule's coin (lionsim.aggregators.ties): splitmix64 chains (seed, step,
worker) into a 64-bit key, and two rounds of a 32-bit integer hash of the coordinate index
mixed with the key's halves give 32 bits, of which the top 24 make a float32 in [0, 1) with
every value exactly representable (so u < p is decided exactly). No state, no communication,
one vectorized pass over [w, P].
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.aggregators.ties import mix32, step_key

_M32 = 0xFFFFFFFF


def worker_key(seed: int, step: int, worker: int) -> int:
    """64 well-mixed bits for one worker's draws at one step."""
    return step_key(step_key(seed, step), worker)


def uniforms(seed: int, step: int, workers: range, numel: int, device: torch.device | str = "cpu") -> Tensor:
    """float32 [len(workers), numel] in [0, 1): the draws of each global worker index in `workers`."""
    keys = [worker_key(seed, step, w) for w in workers]
    lo = torch.tensor([k & _M32 for k in keys], dtype=torch.int64, device=device).unsqueeze(1)  # [w, 1]
    hi = torch.tensor([k >> 32 for k in keys], dtype=torch.int64, device=device).unsqueeze(1)
    index = torch.arange(numel, dtype=torch.int64, device=device).unsqueeze(0)  # [1, P]
    x = mix32(mix32(index ^ lo) ^ hi)  # [w, P], 32 bits
    return (x >> 8).to(torch.float32) * 2.0**-24
