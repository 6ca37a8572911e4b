"""What strategies hand to transports. Every tensor has a leading local-worker dim [w, ...].

Each payload kind says how its parts combine; a transport declares the kinds it carries
(its `carries`), and a strategy/transport pair is valid only when the kinds match.

    dense         float values, averaged                        (gradients)
    votes         +1/0/-1 int8 votes (0 abstains), combined by a VoteRule  (Distributed Lion, signum)
    levels        small signed ints |l| <= max_level, summed    (Lion Cub L1 levels, TernGrad)
    scaled-signs  +1/-1 signs with a float scale per tensor, averaged  (EF-signSGD)
    sparse        (index, value) pairs, k per worker, averaged over all N workers (DGC) or over
                  the workers that sent each index (DeMo's DCT coefficients)
    scaled-levels signed ints |l| <= max_level with a float scale per tensor, averaged  (QSGD)
    onebit        +1/-1 signs with one float scale per worker, compressed-averaged with
                  server error feedback  (1-bit Adam; its warm-up steps send `dense`)
    lowrank       float matrices averaged through rank-r factors P, Q (two all-reduces) and
                  the tensors not worth compressing averaged whole  (PowerSGD; its warm-up
                  steps send `dense`)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor

from lionsim.aggregators import VoteRule

KINDS = ("dense", "votes", "levels", "scaled-signs", "sparse", "scaled-levels", "onebit", "lowrank")


@dataclass(frozen=True, slots=True, kw_only=True)
class PayloadSpec:
    """The shape of a payload without its data: enough to price it with no training."""

    kind: str
    """One of KINDS."""
    numel: int
    """Parameters carried."""
    rule: VoteRule | None = None
    """votes: how they combine."""
    abstain: bool = False
    """votes: some worker abstained (a zero vote) this step, so the transport also carried who
    voted. Set by the transport (lionsim.transports.abstain) on the spec the step is priced by."""
    max_level: int = 1
    """levels: the largest |level| a worker sends."""
    segments: int = 0
    """scaled-signs: number of tensors (one float scale each)."""
    k: int = 0
    """sparse: pairs each worker sends."""
    over_senders: bool = False
    """sparse: each position is the mean over the workers that sent it (DeMo), not over all N (DGC)."""
    factors: tuple[int, int] = (0, 0)
    """lowrank: floats of P and of Q summed over the compressed matrices (sum n r, sum m r)."""
    uncompressed: int = 0
    """lowrank: parameters averaged whole (vectors, matrices not worth compressing)."""
    columns: int = 0
    """lowrank: factor columns summed over the compressed matrices (sum r): Gram-Schmidt runs its
    kernels column by column, so they and the matrices set its launches."""
    matrices: int = 0
    """lowrank: matrices sent as factors."""
    hidden_steps: int = 0
    """Steps of compute its exchange runs behind: the result is used that many steps after it is
    sent (Streaming DiLoCo's tau), so a step waits only for what those steps do not hide."""


@dataclass(slots=True)
class Payload:
    """One step's payload: the spec plus the tensors (leading dim w)."""

    spec: PayloadSpec
    values: Tensor
    """dense: float [w, n]; votes: int8 [w, n] in {-1, 0, +1}; levels: int [w, n]; scaled-signs: int8 [w, n];
    sparse: float [w, k] values."""
    scales: Tensor | None = None
    """scaled-signs: float32 [w, T], one scale per tensor."""
    segment_ids: Tensor | None = None
    """scaled-signs: int64 [n], the tensor each parameter belongs to."""
    indices: Tensor | None = None
    """sparse: int64 [w, k] positions of `values`."""
    extra: dict = field(default_factory=dict)


# Signed dtypes that both gloo and NCCL can all-reduce, narrowest first: no int16, which
# neither backend sums (gloo raises "Invalid scalar type"), so int8 widens straight to int32.
_REDUCIBLE_INTS = (torch.int8, torch.int32, torch.int64)


def container_dtype(max_abs_sum: int) -> torch.dtype:
    """The narrowest all-reducible signed dtype holding sums up to +/-max_abs_sum:
    int8 while <= 127, then int32 (never int16), int64 past 2**31 - 1."""
    for dtype in _REDUCIBLE_INTS:
        if max_abs_sum <= torch.iinfo(dtype).max:
            return dtype
    raise ValueError(f"no integer container holds sums up to {max_abs_sum}")


def combine_alone(payload: Payload) -> Tensor:
    """The aggregate when a single worker takes part: nothing is sent, its own payload decoded."""
    spec = payload.spec
    if spec.kind == "votes":  # a zero vote abstains: nobody voted there
        return spec.rule.result(payload.values, 1, voted=payload.values != 0)
    if spec.kind in ("scaled-signs", "scaled-levels"):
        return payload.values * payload.scales[:, payload.segment_ids]
    if spec.kind == "sparse":
        dense = torch.zeros(payload.values.shape[0], spec.numel, device=payload.values.device)
        return dense.scatter_add_(1, payload.indices, payload.values.float())
    return payload.values.float()  # dense, levels
