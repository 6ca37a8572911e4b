"""The global baselines: gradients averaged by an all-reduce, then one optimizer step on
the replica. Every worker applies the same step, so replicas stay identical."""

from __future__ import annotations

from torch import Tensor

from lionsim.backends import Comm
from lionsim.optim.functional import adamw_update_, lion_update_, sgdm_update_
from lionsim.steptime.strategy_bytes import F32, StrategyBytes
from lionsim.strategies.base import STRATEGIES, Hyper, Strategy
from lionsim.timing import Clock
from lionsim.transports import Payload, PayloadSpec


class GlobalStrategy(Strategy):
    payload_kind = "dense"
    default_transport = "fp32-allreduce"

    def payload_spec(self) -> PayloadSpec:
        return PayloadSpec(kind="dense", numel=self.layout.numel)

    def encode(self, grads: Tensor, params: Tensor, comm: Comm, clock: Clock) -> Payload:
        return Payload(self.payload_spec(), grads)


@STRATEGIES.register("adamw")
class AdamW(GlobalStrategy):
    name = "adamw"
    summary = "global AdamW: gradients averaged, one AdamW step"
    defaults = Hyper(lr=3e-3, weight_decay=0.01, betas=(0.9, 0.999))
    bytes = StrategyBytes(0, 6 * F32, "no local rule (the gradient is sent); update reads p, m, v, writes p, m, v")

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.exp_avg = self.zeros(1)[0]
        self.exp_avg_sq = self.zeros(1)[0]
        self.steps = 0

    def apply(self, params: Tensor, aggregate: Tensor) -> None:
        self.steps += 1
        h = self.hyper
        adamw_update_(params, aggregate[0], self.exp_avg, self.exp_avg_sq, self.steps,
                      h.lr, h.weight_decay, *h.betas)


@STRATEGIES.register("lion")
class Lion(GlobalStrategy):
    name = "lion"
    summary = "global Lion: gradients averaged, one Lion step"
    defaults = Hyper(lr=3e-3, weight_decay=0.01, betas=(0.9, 0.99))
    bytes = StrategyBytes(0, 4 * F32, "no local rule; update reads p, m, writes p, m")

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.exp_avg = self.zeros(1)[0]

    def apply(self, params: Tensor, aggregate: Tensor) -> None:
        h = self.hyper
        lion_update_(params, aggregate[0], self.exp_avg, h.lr, h.weight_decay, *h.betas)


@STRATEGIES.register("sgdm")
class SGDMomentum(GlobalStrategy):
    name = "sgdm"
    summary = "global SGD with momentum: gradients averaged, one SGD step (momentum = beta1)"
    defaults = Hyper(lr=0.05, weight_decay=0.0, betas=(0.9, 0.0))
    bytes = StrategyBytes(0, 4 * F32, "no local rule; update reads p, buf, writes p, buf")

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.buf = self.zeros(1)[0]

    def apply(self, params: Tensor, aggregate: Tensor) -> None:
        h = self.hyper
        sgdm_update_(params, aggregate[0], self.buf, h.lr, h.weight_decay, h.betas[0])
