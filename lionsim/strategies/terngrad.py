"""TernGrad (Wen et al. 2017): stochastic ternary gradients with a shared scale.

Each worker first clips every tensor's gradient at c * sigma, c = 2.5, sigma the standard
deviation of that tensor's gradient (the paper's section 3.3: outliers would set a large
scale and leave most values ternarized to 0). Workers then agree on one scale per tensor,
s = max over workers of max|g| of the clipped g (a small MAX all-reduce, TernGrad's "scaler
sharing"); each sends t = sign(g) * Bernoulli(|g| / s) in {-1, 0, 1}, which is unbiased for
the clipped g: E[s * t] = g. Shared scales make the ternaries summable in an integer
all-reduce; the mean gradient s * sum(t) / N then drives SGD with momentum. The Bernoulli
draws are per virtual worker (lionsim.strategies.core.draws), so gloo ranks draw what the simulator
draws for the same workers.
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.network.calls import CollectiveCall
from lionsim.optim.functional import sgdm_update_
from lionsim.compute.kernel_ops import Step, stream
from lionsim.optim.steps import SGD_MOMENTUM
from lionsim.steptime.strategy_bytes import F32, StrategyBytes

TERNARY = Step(
    "TernGrad ternary", fused=3 * F32 + 1, chain=87.0, ops=13,
    # per tensor, as eager TernGrad code runs it (GRACE's): the mean (reads 4); g - mean (4, 4), squared
    # (4, 4), its mean (reads 4): sigma; the clip (4, 4); |g| (4, 4) and its max (reads 4); uniform draws
    # (write 4); |g| / max (4, 4); draws < that (8, 1); sign(g) (4, 4); x keep (5, 4); to int8 (4, 1).
    # Fused: a pass for the mean and sum of squares, one for max |clipped g|, one reading g and writing
    # the level (draws in registers).
    source="Wen et al. 2017 TernGrad, eager per tensor as GRACE (sands-lab/grace) runs it", depth=2)
from lionsim.strategies.core.base import STRATEGIES, Hyper, Strategy
from lionsim.strategies.core.draws import uniforms
from lionsim.strategies.core.layout import ParamLayout
from lionsim.timing import Clock
from lionsim.transports import PER_BUCKET, Payload, PayloadSpec

CLIP_SIGMAS = 2.5
"""c of the per-tensor clip at c * sigma (the paper's choice)."""


def clip_per_tensor(grads: Tensor, layout: ParamLayout, c: float = CLIP_SIGMAS) -> Tensor:
    """grads [w, P] clipped to [-c sigma, c sigma], sigma each worker's population standard
    deviation of each tensor. A tensor with sigma = 0 (all its values equal, a single value)
    has no outlier and is left whole: a bound of 0 would erase it."""
    mean = layout.expand(layout.segment_mean(grads))  # [w, P]
    sigma = layout.segment_mean((grads - mean).square()).sqrt()  # [w, T]
    bound = layout.expand(torch.where(sigma > 0, c * sigma, torch.inf))  # [w, P]
    return torch.minimum(torch.maximum(grads, -bound), bound)


@STRATEGIES.register("terngrad")
class TernGrad(Strategy):
    name = "terngrad"
    summary = "stochastic ternary gradients, shared per-tensor scale, SGD momentum"
    payload_kind = "levels"
    default_transport = "int8-allreduce"
    schedule = PER_BUCKET  # GRACE (sands-lab/grace grace_dl/torch/compressor/terngrad.py): each tensor
    # compressed and sent from its Horovod backward hook (the scale maximum, an extra call, is never hidden)
    defaults = Hyper(lr=0.05, weight_decay=0.0, betas=(0.9, 0.0))
    bytes = StrategyBytes(
        3 * F32, 4 * F32,
        "rule: a pass reading g for its sum and sum of squares per tensor (sigma of the 2.5 sigma clip), a pass "
        "reading g for max|clipped g| per tensor, then reads g (clip and Bernoulli draws from a counter RNG in registers); "
        "update (SGD momentum) reads p, buf, writes p, buf",
        rule_step=TERNARY, update_step=SGD_MOMENTUM,
        update_ops=(stream(2 * F32, "the summed levels x the shared scale / N, per tensor (read 4, write 4)",
                           per_tensor=1),),
    )

    def __init__(self, cfg, layout, comm) -> None:
        super().__init__(cfg, layout, comm)
        self.buf = self.zeros(1)[0]
        self.workers_here = range(comm.first_worker, comm.first_worker + comm.local_workers)
        self.steps = 0  # the draws' counter: each worker's draws depend on (seed, step, worker) only
        self.scales: Tensor | None = None

    def payload_spec(self) -> PayloadSpec:
        return PayloadSpec(kind="levels", numel=self.layout.numel, max_level=1)

    def extra_calls(self, step: int) -> list[CollectiveCall]:
        return [CollectiveCall("all_reduce", 4 * self.layout.segments, "scales (max)")]

    def next_change(self, step: int) -> int:
        """Every step's scales are the same call."""
        return super().next_change(step)

    def repeats(self) -> tuple[int, int] | None:
        """Every step's scales are the same call."""
        return super().repeats()

    def encode(self, grads: Tensor, params: Tensor, comm: Comm, clock: Clock) -> Payload:
        grads = clip_per_tensor(grads, self.layout)
        local_max = self.layout.segment_max(grads.abs())  # [w, T]
        with clock.section("collective"):
            self.scales = comm.all_reduce(local_max, op="max")[0]  # [T], shared by all
        scale = self.layout.expand(self.scales.unsqueeze(0))  # [1, P]
        prob = grads.abs() / scale.clamp_min(torch.finfo(torch.float32).tiny)
        self.steps += 1
        keep = uniforms(self.cfg.seed, self.steps, self.workers_here, self.layout.numel, grads.device) < prob
        ternary = (torch.sign(grads) * keep).to(torch.int8)
        return Payload(self.payload_spec(), ternary)

    def apply(self, params: Tensor, aggregate: Tensor) -> None:
        scale = self.layout.expand(self.scales.unsqueeze(0))[0]
        grad = aggregate[0] * scale / self.workers
        h = self.hyper
        sgdm_update_(params, grad, self.buf, h.lr, h.weight_decay, h.betas[0])
