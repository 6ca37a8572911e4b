"""EF-signSGD (Karimireddy et al. 2019): scaled sign compression with error feedback.

Per worker and tensor: p = lr * g + e; send delta = (||p||_1 / d) * sign(p) as 1-bit signs
plus one float scale; keep e = p - delta. The replica moves by the mean of the deltas.

sign(0) = 0, the paper's: a coordinate with p exactly 0 (a parameter that never got a gradient,
with no error left) sends nothing and keeps e = 0, so it stays put. (A sign(0) = -1 rule
would send -scale there, leave e = +scale, send +scale next, and so make such a parameter
oscillate and drift.) On the wire a zero sign is an abstention: the 1-byte flag and, on steps
where some worker has one, the "voted" bitmap (lionsim.transports.abstain). Weight decay is
decoupled and local, x <- x (1 - lr wd), before the deltas are applied (the paper has none).
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.compute.kernel_ops import Step
from lionsim.optim.steps import DELTA_APPLY
from lionsim.steptime.strategy_bytes import F32, StrategyBytes

EF_SIGN = Step(
    "error-feedback sign", fused=2 * F32 + 3 * F32 + 1, chain=62.0, ops=8,
    # per tensor, as Karimireddy et al.'s (and GRACE's) EF-signSGD runs it: c = lr g (read 4, write 4),
    # c += e (8, 4); the scale mean|c| (|c|: 4, 4; the mean reads 4); sign(c) (4, 4) to int8 (4, 1);
    # e = c - scale x sign (the product: read 1, write 4; the difference: 8, 4). Fused: a pass reading
    # g, e for the scale, then one reading g, e, writing e and the sign.
    source="Karimireddy et al. 2019 EF-signSGD, per tensor (lionsim.strategies.ef_signsgd)", depth=2)
from lionsim.strategies.core.base import STRATEGIES, Hyper, Strategy
from lionsim.timing import Clock
from lionsim.transports import PER_BUCKET, Payload, PayloadSpec


@STRATEGIES.register("ef-signsgd")
class EFSignSGD(Strategy):
    name = "ef-signsgd"
    summary = "scaled sign (L1 mean per tensor) with error feedback"
    payload_kind = "scaled-signs"
    default_transport = "allgather-1bit"
    schedule = PER_BUCKET  # GRACE (sands-lab/grace grace_dl/torch/compressor/efsignsgd.py): each tensor
    # compressed and sent from its Horovod backward hook
    defaults = Hyper(lr=0.1, weight_decay=0.0, betas=(0.0, 0.0))
    ignores = ("betas",)  # no momentum, no moments
    bytes = StrategyBytes(
        5 * F32, 2 * F32, "rule: a pass reading g, e for mean|p| per tensor, then reads g, e, writes e; update reads p, writes p",
        rule_step=EF_SIGN, update_step=DELTA_APPLY,
    )

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.error = self.zeros()  # [w, P] error memory

    def payload_spec(self) -> PayloadSpec:
        return PayloadSpec(kind="scaled-signs", numel=self.layout.numel, segments=self.layout.segments)

    def encode(self, grads: Tensor, params: Tensor, comm: Comm, clock: Clock) -> Payload:
        # compensate
        corrected = grads.mul(self.hyper.lr).add_(self.error)
        # compress: 1-bit signs and one L1 scale per tensor
        signs = torch.sign(corrected).to(torch.int8)  # sign(0) = 0: nothing to send there
        scales = self.layout.segment_mean(corrected.abs())  # [w, T]
        # memory update: what was not sent this step is sent later
        self.error = corrected - signs * self.layout.expand(scales)
        return Payload(self.payload_spec(), signs, scales=scales, segment_ids=self.layout.segment_ids)

    def apply(self, params: Tensor, aggregate: Tensor) -> None:
        params.mul_(1 - self.hyper.lr * self.hyper.weight_decay)
        params.sub_(aggregate[0])  # the deltas already carry the learning rate
