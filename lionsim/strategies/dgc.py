"""Deep Gradient Compression (Lin et al. 2018): per-tensor top-k sparsification with momentum
correction, local accumulation and an optional warm-up of the sparsity.

Per worker: u = mu * u + g (momentum correction: the momentum is accumulated locally, not
applied to the sparse sum); v = v + u (local accumulation); from every tensor t send its
k_t = max(1, ceil(density * numel_t)) largest |v| as (index, value) pairs, then zero v and u
at those positions (momentum factor masking). The replica moves by lr times the mean of the
sparse vectors. Selection is per tensor as in the paper and its public code: one global cut
would starve the small tensors (biases, norms) whose values run smaller than the big ones'.

Warm-up (the paper's section 3.4, over epochs there, over the first K steps here): K steps
split into 4 equal stages of density 1/4, 1/16, 1/64, 1/256 (sparsity 75%, 93.75%, 98.4375%,
99.6%), then --topk-ratio (the paper's 99.9% is ratio 0.001); with K < 4, the first K stages. A stage never sends fewer pairs
than steady state (density = max(stage density, ratio)). The paper's gradient clipping is left
out: it is a training rule, not the compressor.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.compute.kernel_ops import SECTOR, Op, Step, stream
from lionsim.optim.steps import SGD_APPLY
from lionsim.steptime.strategy_bytes import F32, StrategyBytes

MOMENTUM_CORRECTION = Step(
    "DGC momentum correction", fused=3 * F32 + 2 * F32, chain=32.0, ops=3,
    # u *= m (read 4, write 4); u += g (8, 4); v += u (8, 4). Fused: reads g, u, v; writes u, v.
    source="Lin et al. 2018 DGC (lionsim.strategies.dgc.encode)", depth=3)
from lionsim.strategies.core.base import NEVER, STRATEGIES, Hyper, Strategy
from lionsim.strategies.core.form import PAST_WARMUP, RUN, SETS_WARMUP, between, option
from lionsim.strategies.core.options import step_count
from lionsim.timing import Clock
from lionsim.transports import PER_BUCKET, Payload, PayloadSpec

WARMUP_STAGES = 4
"""The paper's warm-up epochs, here equal shares of --dgc-warmup-steps."""


def warmup_density(step: int, ratio: float, warmup_steps: int) -> float:
    """Fraction of each tensor sent at 1-based `step`: 4^-(stage+1) in the warm-up stages
    (never below `ratio`), `ratio` after them (and always when warmup_steps = 0). K >= 4 steps
    split into the 4 stages as evenly as whole steps allow; K < 4 steps take the first K
    stages, one step each, so no stage is ever skipped (K = 2 gives 1/4, 1/16; it once gave
    1/4, 1/64)."""
    if step > warmup_steps:
        return ratio
    stage = (step - 1) * min(WARMUP_STAGES, warmup_steps) // warmup_steps
    return max(ratio, 4.0 ** -(stage + 1))


def next_stage(step: int, warmup_steps: int) -> int:
    """The first step of the warm-up stage after 1-based `step`'s (warmup_density's stages; past the
    last, the step after the warm-up); NEVER past the warm-up."""
    if step > warmup_steps:
        return NEVER
    stages = min(WARMUP_STAGES, warmup_steps)
    stage = (step - 1) * stages // warmup_steps
    return -(-(stage + 1) * warmup_steps // stages) + 1  # the least s with (s - 1) * stages >= (stage + 1) * warmup


def per_tensor_k(numels: list[int], density: float) -> list[int]:
    """Pairs sent from each tensor: ceil(density * numel), at least one."""
    return [max(1, math.ceil(density * n)) for n in numels]


def per_tensor_topk(values: Tensor, slices: list[slice], ks: list[int]) -> Tensor:
    """int64 [w, sum(ks)]: positions of the ks[t] largest |values| [w, P] within each slices[t]."""
    picked = [values[:, s].abs().topk(k, dim=1, sorted=False).indices + s.start for s, k in zip(slices, ks)]
    return torch.cat(picked, dim=1)


@STRATEGIES.register("dgc")
class DeepGradientCompression(Strategy):
    name = "dgc"
    summary = "per-tensor top-k sparsification with momentum correction and local accumulation"
    payload_kind = "sparse"
    default_transport = "sparse-allgather"
    schedule = PER_BUCKET  # the authors' code (synxlin/deep-gradient-compression dgc/horovod/optimizer.py):
    # each tensor compressed and sent from its Horovod backward hook
    defaults = Hyper(lr=0.05, weight_decay=0.0, betas=(0.9, 0.0))
    bytes = StrategyBytes(
        6 * F32, 2 * F32, "rule reads g, u, v, writes u, v, then a pass reading |v| for the top-k threshold; update reads p, writes p",
        rule_step=MOMENTUM_CORRECTION, update_step=SGD_APPLY,
        rule_ops=(
            stream(2 * F32, "|v| per tensor (read 4, write 4)", per_tensor=1),
            Op("topk", F32, "torch.topk of |v| per tensor: a radix selection over its input", per_tensor=1),
            # per sent pair: topk writes its value and int64 index (12); the tensor's offset is added to the
            # index (8, 8) and the indices concatenated (8, 8); the values gathered from v (index read,
            # v's 32-byte sector read, 4 written); u and v zeroed there (index read, a sector written: twice)
            Op("scatter-add", 12 + 16 + 16 + (8 + SECTOR + 4) + 2 * (8 + SECTOR),
               "the k pairs: indices offset and concatenated, values gathered, u and v zeroed there", 4, per="pair"),
        ),
    )

    @dataclass(frozen=True, kw_only=True)
    class Options:
        topk_ratio: float = option(0.01, flag="--topk-ratio", check=between(0, 1, low_open=True), acts=PAST_WARMUP)
        """Fraction of each tensor's parameters each worker sends (at least one per tensor)."""
        warmup_steps: int = option(0, flag="--dgc-warmup-steps", check=step_count(0, why="0: no warm-up"),
                                   priced=RUN, acts=SETS_WARMUP)
        """Leading steps of the paper's warm-up, 4 equal stages sending 1/4, 1/16, 1/64, 1/256 of each
        tensor (never below the ratio); 0: no warm-up."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.ratio, self.warmup = self.opts.topk_ratio, self.opts.warmup_steps
        self.step = 0  # encodes so far: the warm-up stage follows them
        self.momentum = self.zeros()  # u [w, P]
        self.accumulated = self.zeros()  # v [w, P]

    def spec_at(self, density: float) -> tuple[PayloadSpec, list[int]]:
        ks = per_tensor_k(self.layout.numels, density)
        return PayloadSpec(kind="sparse", numel=self.layout.numel, k=sum(ks)), ks

    def run_spec(self, step: int, steady: PayloadSpec) -> PayloadSpec | None:
        """A warm-up stage sends its density of the steady spec's parameters (at least one pair per
        tensor, as lionsim.estimate.probe counts the steady k)."""
        density = warmup_density(step, self.ratio, self.warmup)
        if density == self.ratio:
            return steady
        return dataclasses.replace(steady, k=max(self.layout.segments, math.ceil(density * steady.numel)))

    def next_change(self, step: int) -> int:
        """The next warm-up stage's first step; none after the warm-up."""
        return next_stage(step, self.warmup)

    def repeats(self) -> tuple[int, int]:
        """The warm-up's stages: every later step sends the steady spec."""
        return (self.warmup, 1)

    def payload_spec(self) -> PayloadSpec:
        """The steady state, past the warm-up (each step's own spec travels in its payload)."""
        return self.spec_at(self.ratio)[0]

    def spec_scaled(self, params: int, tensors: int) -> PayloadSpec:
        """ceil(ratio * P) pairs, at least one per tensor (the tensors' sizes are unknown here; the
        per-tensor sum lies within T of it)."""
        return PayloadSpec(kind="sparse", numel=params, k=max(tensors, math.ceil(self.ratio * params)))

    def encode(self, grads: Tensor, params: Tensor, comm: Comm, clock: Clock) -> Payload:
        h = self.hyper
        self.step += 1
        spec, ks = self.spec_at(warmup_density(self.step, self.ratio, self.warmup))
        g = grads.add(params, alpha=h.weight_decay) if h.weight_decay else grads
        self.momentum.mul_(h.betas[0]).add_(g)
        self.accumulated.add_(self.momentum)
        indices = per_tensor_topk(self.accumulated, self.layout.slices, ks)  # [w, k]
        values = self.accumulated.gather(1, indices)
        self.accumulated.scatter_(1, indices, 0.0)
        self.momentum.scatter_(1, indices, 0.0)
        return Payload(spec, values, indices=indices)

    def apply(self, params: Tensor, aggregate: Tensor) -> None:
        params.add_(aggregate[0], alpha=-self.hyper.lr)
