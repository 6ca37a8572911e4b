"""How far a lossy transport's aggregate is from the exact mean: steps.csv's aggregate_rel_error.

    ||aggregate - mean_i g_i|| / ||mean_i g_i||,  the mean in float64

Computed only where every worker's payload is in the process (the simulator, or one process
holding all workers): there the exact mean costs no communication. On a real multi-rank run it
would cost an fp32 all-reduce that the run does not make, so the column is empty (NaN) there.
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.transports.payloads import Payload

KEY = "aggregate_rel_error"
"""The payload.extra entry a transport sets (lionsim.engine reads it into the step's record)."""


def relative_error(aggregate: Tensor, values: Tensor) -> float:
    """aggregate [n] against the float64 mean of values [N, n] (a zero mean: the absolute error)."""
    exact = values.sum(0, dtype=torch.float64) / values.shape[0]
    norm = float(exact.norm())
    diff = float((aggregate.double() - exact).norm())
    return diff / norm if norm > 0 else diff


def note_error(payload: Payload, aggregate: Tensor, comm: Comm) -> None:
    """Record aggregate [w, n]'s error in payload.extra where every worker's values are here."""
    if payload.values.shape[0] == comm.world_size:
        payload.extra[KEY] = relative_error(aggregate[0], payload.values)
