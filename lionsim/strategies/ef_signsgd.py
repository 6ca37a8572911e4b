"""EF-signSGD (Karimireddy et al. 2019): scaled sign compression with error feedback.

Per worker and tensor: p = lr * g + e; send delta = (||p||_1 / d) * sign(p) as 1-bit signs
plus one float scale; keep e = p - delta. The replica moves by the mean of the deltas.
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.strategies.base import STRATEGIES, Hyper, Strategy
from lionsim.timing import Clock
from lionsim.transports import Payload, PayloadSpec


@STRATEGIES.register("ef-signsgd")
class EFSignSGD(Strategy):
    name = "ef-signsgd"
    summary = "scaled sign (L1 mean per tensor) with error feedback"
    payload_kind = "scaled-signs"
    default_transport = "allgather-1bit"
    defaults = Hyper(lr=0.1, weight_decay=0.0, betas=(0.0, 0.0))

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.error = self.zeros()  # [w, P] error memory

    def payload_spec(self) -> PayloadSpec:
        return PayloadSpec(kind="scaled-signs", numel=self.layout.numel, segments=self.layout.segments)

    def encode(self, grads: Tensor, params: Tensor, comm: Comm, clock: Clock) -> Payload:
        # compensate
        corrected = grads.mul(self.hyper.lr).add_(self.error)
        # compress: 1-bit signs and one L1 scale per tensor
        signs = torch.where(corrected > 0, 1, -1).to(torch.int8)
        scales = self.layout.segment_mean(corrected.abs())  # [w, T]
        # memory update: what was not sent this step is sent later
        self.error = corrected - signs * self.layout.expand(scales)
        return Payload(self.payload_spec(), signs, scales=scales, segment_ids=self.layout.segment_ids)

    def apply(self, params: Tensor, aggregate: Tensor) -> None:
        params.mul_(1 - self.hyper.lr * self.hyper.weight_decay)
        params.sub_(aggregate[0])  # the deltas already carry the learning rate
