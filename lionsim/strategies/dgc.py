"""Deep Gradient Compression (Lin et al. 2018): top-k sparsification with momentum
correction and local accumulation.

Per worker: u = mu * u + g (momentum correction: the momentum is accumulated locally, not
applied to the sparse sum); v = v + u (local accumulation); send the k largest |v| as
(index, value) pairs, then zero v and u at those positions (momentum factor masking). The
replica moves by lr times the mean of the sparse vectors. (Warm-up sparsity and gradient
clipping of the paper are left out: they are schedules, not the compressor.)
"""

from __future__ import annotations

from torch import Tensor

from lionsim.backends import Comm
from lionsim.errors import LionsimError
from lionsim.strategies.base import STRATEGIES, Hyper, Strategy
from lionsim.timing import Clock
from lionsim.transports import Payload, PayloadSpec


@STRATEGIES.register("dgc")
class DeepGradientCompression(Strategy):
    name = "dgc"
    summary = "top-k sparsification with momentum correction and local accumulation"
    payload_kind = "sparse"
    default_transport = "sparse-allgather"
    defaults = Hyper(lr=0.05, weight_decay=0.0, betas=(0.9, 0.0))

    def __init__(self, *args) -> None:
        super().__init__(*args)
        if not 0 < self.cfg.topk_ratio <= 1:
            raise LionsimError(f"bad --topk-ratio {self.cfg.topk_ratio}; accepted: 0 < ratio <= 1")
        self.k = max(1, round(self.cfg.topk_ratio * self.layout.numel))
        self.momentum = self.zeros()  # u [w, P]
        self.accumulated = self.zeros()  # v [w, P]

    def payload_spec(self) -> PayloadSpec:
        return PayloadSpec(kind="sparse", numel=self.layout.numel, k=self.k)

    def encode(self, grads: Tensor, params: Tensor, comm: Comm, clock: Clock) -> Payload:
        h = self.hyper
        g = grads.add(params, alpha=h.weight_decay) if h.weight_decay else grads
        self.momentum.mul_(h.betas[0]).add_(g)
        self.accumulated.add_(self.momentum)
        indices = self.accumulated.abs().topk(self.k, dim=1, sorted=False).indices  # [w, k]
        values = self.accumulated.gather(1, indices)
        self.accumulated.scatter_(1, indices, 0.0)
        self.momentum.scatter_(1, indices, 0.0)
        return Payload(self.payload_spec(), values, indices=indices)

    def apply(self, params: Tensor, aggregate: Tensor) -> None:
        params.add_(aggregate[0], alpha=-self.hyper.lr)
