"""DiLoCo with a compressed outer gradient, over lionsim's own transports.

    diloco-int8  per tensor a scale shared by every worker, s_t = max over workers of
                 max|delta_i| (one small MAX all-reduce, as TernGrad's scaler sharing); each
                 worker sends levels l = stochastic rounding of delta_i / s_t * L, L = floor(127 /
                 N), so the N levels sum in an int8 container without overflow (L = 15 at N = 8:
                 about 5 bits of resolution, where 4-bit outer gradients were reported to hold
                 DiLoCo's quality). Unbiased: E[s_t / L * l] = delta_i. Delta = s_t sum(l) / (L N).
                 Transports: int8-allreduce, packed-allreduce (levels).
    diloco-sign  D-Lion's vote as DiLoCo's outer step: each worker votes sign(delta_i); the
                 majority vote (tie: 0) travels over any vote transport (1 bit up on
                 a2a-1bit); its magnitude per tensor is the workers' mean of mean|delta_i| (one
                 small all-reduce of a float per tensor): Delta = vote * that scale. Biased, as
                 every sign method; the outer Nesterov step then applies it.

The draws of the stochastic rounding are per virtual worker (lionsim.strategies.core.draws), so
sim and gloo quantize alike.
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.aggregators import MajorityVote
from lionsim.backends import Comm
from lionsim.network.calls import CollectiveCall
from lionsim.optim.functional import sign_votes
from lionsim.compute.kernel_ops import stream
from lionsim.optim.steps import ADAMW, SGD_NESTEROV
from lionsim.steptime.strategy_bytes import F32, StrategyBytes
from lionsim.strategies.local_steps import OUTER_DELTA, REPLICA_COPY
from lionsim.strategies.core.base import STRATEGIES
from lionsim.strategies.core.draws import uniforms
from lionsim.strategies.local_steps import DiLoCo
from lionsim.timing import Clock
from lionsim.transports import Payload, PayloadSpec

TINY = torch.finfo(torch.float32).tiny


class ScaledOuter(DiLoCo):
    """DiLoCo whose outer gradient travels with one float scale per tensor, agreed at each sync."""

    scale_label = ""
    scales: Tensor | None = None

    def extra_calls(self, step: int) -> list[CollectiveCall]:
        if self.workers > 1 and step % self.local_steps == 0:  # a pure function of the step (estimate --steps)
            return [CollectiveCall("all_reduce", 4 * self.layout.segments, self.scale_label)]
        return []

    def next_change(self, step: int) -> int:
        """A round's: its scales come with its sync step."""
        return super().next_change(step)

    def repeats(self) -> tuple[int, int] | None:
        """A round: its sync step's scales, as every sync's."""
        return super().repeats()


@STRATEGIES.register("diloco-int8")
class DiLoCoInt8(ScaledOuter):
    name = "diloco-int8"
    summary = "DiLoCo, outer gradient as stochastically rounded levels with a shared per-tensor scale (int8 sum)"
    payload_kind = "levels"
    default_transport = "int8-allreduce"
    scale_label = "scales (max)"
    bytes = StrategyBytes(
        12 * F32, 6 * F32, "rule: inner AdamW step, delta_i, a pass reading delta_i for max|delta_i| per tensor, then "
        "reads delta_i (draws from a counter hash in registers) for the levels; update as diloco",
        rule_step=ADAMW, update_step=SGD_NESTEROV,
        rule_ops=OUTER_DELTA + (
            # per tensor, eager: |delta| (read 4, write 4) and its max (reads 4); delta / scale (4, 4), x L
            # (4, 4), floor (4, 4), x - floor (8, 4), uniform draws (write 4), < (8, 1), to float (1, 4),
            # + (8, 4), clamp (4, 4), to int8 (4, 1)
            stream(8 + 4 + 8 + 8 + 8 + 12 + 4 + 9 + 5 + 12 + 8 + 5, "max-scaled stochastic levels", 12,
                   per_tensor=1),),
        update_ops=REPLICA_COPY + (stream(2 * F32, "the summed levels x scale / (L N), per tensor"),),
    )

    @classmethod
    def levels(cls, workers: int) -> int:
        """L: the largest |level|, so that N of them sum within int8."""
        return max(1, 127 // workers)

    def payload_spec(self) -> PayloadSpec:
        return PayloadSpec(kind="levels", numel=self.layout.numel, max_level=self.levels(self.workers))

    def encode_outer(self, delta: Tensor, comm: Comm, clock: Clock) -> Payload:
        local_max = self.layout.segment_max(delta.abs())  # [w, T]
        with clock.section("collective"):
            self.scales = comm.all_reduce(local_max, op="max")[0].clamp_min(TINY)  # [T], the same everywhere
        x = delta / self.layout.expand(self.scales.unsqueeze(0)) * self.levels(self.workers)  # [w, P] in [-L, L]
        low = x.floor()
        u = uniforms(self.cfg.seed, self.steps, range(comm.first_worker, comm.first_worker + self.local),
                     self.layout.numel, delta.device)
        levels = (low + (u < x - low).to(x.dtype)).clamp_(-self.levels(self.workers), self.levels(self.workers))
        return Payload(self.payload_spec(), levels.to(torch.int8))

    def outer_gradient(self, aggregate: Tensor) -> Tensor:
        scale = self.layout.expand(self.scales.unsqueeze(0))[0]
        return aggregate[0] * scale / (self.levels(self.workers) * self.workers)


@STRATEGIES.register("diloco-sign")
class DiLoCoSign(ScaledOuter):
    name = "diloco-sign"
    summary = "DiLoCo, outer gradient as the workers' majority vote of sign(delta) (D-Lion's vote) x a mean scale"
    payload_kind = "votes"
    default_transport = "int8-allreduce"
    scale_label = "scales (mean)"
    rule = MajorityVote()
    bytes = StrategyBytes(
        12 * F32, 6 * F32, "rule: inner AdamW step, delta_i, a pass reading delta_i for mean|delta_i| per tensor, then "
        "reads delta_i for its sign; update as diloco",
        rule_step=ADAMW, update_step=SGD_NESTEROV,
        # per tensor, eager: |delta| (read 4, write 4) and its mean (reads 4); sign (4, 4), to int8 (4, 1)
        rule_ops=OUTER_DELTA + (stream(8 + 4 + 8 + 5, "mean |delta| per tensor, then the int8 sign", 4),),
        update_ops=REPLICA_COPY + (stream(2 * F32, "the vote x the mean scale, per tensor"),),
    )

    def payload_spec(self) -> PayloadSpec:
        return PayloadSpec(kind="votes", numel=self.layout.numel, rule=self.rule)

    def encode_outer(self, delta: Tensor, comm: Comm, clock: Clock) -> Payload:
        local = self.layout.segment_mean(delta.abs())  # [w, T]
        with clock.section("collective"):
            self.scales = comm.all_reduce(local)[0] / self.workers  # [T]
        return Payload(self.payload_spec(), sign_votes(delta, self.workers))

    def outer_gradient(self, aggregate: Tensor) -> Tensor:
        return aggregate[0] * self.layout.expand(self.scales.unsqueeze(0))[0]
