"""DeMo, Decoupled Momentum Optimization (Peng, Quesnelle & Kingma 2024; REFERENCE.md 10): each
worker keeps its own momentum and sends only its fastest-moving part, the largest DCT
coefficients of each chunk; what it sent is taken out of its momentum.

    per worker i:  delta_i <- b1 delta_i + lr g_i                    (b1: DeMo's compression decay)
                   C_i = DCT(delta_i) per chunk (lionsim.strategies.dct)
                   q_i = the top-k |C_i| of every chunk, as (index, value) pairs
                   delta_i <- delta_i - iDCT(q_i)                    (what was sent leaves the momentum)
    exchange:      every q_i all-gathered (sparse-allgather); each coefficient is the mean over the
                   workers that sent it (DeMo's scatter-reduce "mean"), 0 where nobody did
    update:        x <- x (1 - lr wd) - lr sign(iDCT(Q))              (sign-SGD, decoupled decay)

As the authors' optimizer (bloc97/DeMo): b1 = 0.999, chunks of up to 64 (the largest divisor of
each dimension not above it), top 32 per chunk (`--demo-chunk`, `--demo-topk`), lr in the
momentum, sign of the decoded mean. A tensor of more than two dimensions is viewed as its
first dimension by the rest (the authors' transform takes matrices and vectors only).
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.strategies.base import STRATEGIES, Hyper, Strategy
from lionsim.strategies.dct import ChunkedDCT
from lionsim.timing import Clock
from lionsim.transports import Payload, PayloadSpec


@STRATEGIES.register("demo")
class DeMo(Strategy):
    name = "demo"
    summary = "DeMo: top-k DCT coefficients per chunk of each worker's momentum, all-gathered, sign of the mean"
    payload_kind = "sparse"
    default_transport = "sparse-allgather"
    defaults = Hyper(lr=1e-2, weight_decay=0.01, betas=(0.999, 0.0))  # lr measured on vit (tuning.py)
    options = {"demo_topk": 32, "demo_chunk": 64}
    shape_dependent = True

    def __init__(self, cfg, layout, comm) -> None:
        super().__init__(cfg, layout, comm)
        self.topk = self.option(cfg, "demo_topk")
        self.chunk = self.option(cfg, "demo_chunk")
        self.shapes = [layout.shape(i) for i in range(layout.segments)]
        self.dct = ChunkedDCT(self.shapes, self.chunk, layout.device)
        self.delta = self.zeros()  # [w, P]: each worker's momentum

    def spec_for(self, shapes: list[tuple[int, ...]]) -> PayloadSpec:
        transform = ChunkedDCT(shapes, self.chunk) if shapes != self.shapes else self.dct
        return PayloadSpec(kind="sparse", numel=transform.numel, k=transform.pairs(self.topk), over_senders=True)

    def payload_spec(self) -> PayloadSpec:
        return self.spec_for(self.shapes)

    def encode(self, grads: Tensor, params: Tensor, comm: Comm, clock: Clock) -> Payload:
        self.delta.mul_(self.hyper.betas[0]).add_(grads, alpha=self.hyper.lr)
        coefficients = self.dct.encode(self.delta)  # [w, P]
        indices = self.dct.topk(coefficients, self.topk)  # [w, K]
        values = coefficients.gather(1, indices)
        sent = torch.zeros_like(coefficients).scatter_(1, indices, values)
        self.delta.sub_(self.dct.decode(sent))  # what was sent leaves the momentum
        return Payload(self.payload_spec(), values, indices=indices)

    def apply(self, params: Tensor, aggregate: Tensor) -> None:
        update = self.dct.decode(aggregate[:1])[0].sign_()
        params.mul_(1 - self.hyper.lr * self.hyper.weight_decay)
        params.add_(update, alpha=-self.hyper.lr)
