"""The global baselines: gradients averaged by an all-reduce, then one optimizer step on
the replica. Every worker applies the same step, so replicas stay identical."""

from __future__ import annotations

from torch import Tensor

from lionsim.backends import Comm
from lionsim.optim.functional import adamw_update_, lion_update_, sgdm_update_, step_counts
from lionsim.optim.steps import ADAMW, LION, SGD_MOMENTUM
from lionsim.steptime.strategy_bytes import F32, StrategyBytes
from lionsim.strategies.core.base import STRATEGIES, Hyper, Strategy
from lionsim.timing import Clock
from lionsim.transports import PER_BUCKET, Payload, PayloadSpec


class GlobalStrategy(Strategy):
    payload_kind = "dense"
    default_transport = "fp32-allreduce"
    schedule = PER_BUCKET  # PyTorch DDP (Li et al. 2020): each bucket all-reduced from the backward hook

    def payload_spec(self) -> PayloadSpec:
        return PayloadSpec(kind="dense", numel=self.layout.numel)

    def encode(self, grads: Tensor, params: Tensor, comm: Comm, clock: Clock) -> Payload:
        return Payload(self.payload_spec(), grads)


@STRATEGIES.register("adamw")
class AdamW(GlobalStrategy):
    name = "adamw"
    summary = "global AdamW: gradients averaged, one AdamW step"
    defaults = Hyper(lr=3e-3, weight_decay=0.01, betas=(0.9, 0.999))
    bytes = StrategyBytes(0, 6 * F32, "no local rule (the gradient is sent); update reads p, m, v, writes p, m, v",
                          update_step=ADAMW)

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.exp_avg = self.zeros(1)[0]
        self.exp_avg_sq = self.zeros(1)[0]
        # [P]: steps each position has taken, for bias correction; torch.optim counts per tensor, and
        # a step leaves a tensor nobody has a gradient for (and so its count) alone (lionsim.engine)
        self.steps = self.zeros(1)[0]

    def apply(self, params: Tensor, aggregate: Tensor) -> None:
        self.steps += 1
        h = self.hyper
        adamw_update_(params, aggregate[0], self.exp_avg, self.exp_avg_sq, step_counts(self.steps),
                      h.lr, h.weight_decay, *h.betas)


@STRATEGIES.register("lion")
class Lion(GlobalStrategy):
    name = "lion"
    summary = "global Lion: gradients averaged, one Lion step"
    defaults = Hyper(lr=3e-3, weight_decay=0.01, betas=(0.9, 0.99))
    bytes = StrategyBytes(0, 4 * F32, "no local rule; update reads p, m, writes p, m", update_step=LION)
    # gpt (character-level transformer), measured for the Lion family: 300 steps, 8 workers x 32 sequences. At the
    # vit default lr 3e-3 the Lion family spiked (to 5.2) and ended at loss 2.82-3.28 against AdamW's 1.89 on a
    # 10 KB text; at lr 1e-3 Lion matched AdamW. Re-measured on a 675 KB text (vim's version7.txt): Lion at 3e-3
    # was at loss 3.00 at step 141 against AdamW's 2.14; at 1e-3 it reached 1.84 at step 300 against AdamW's
    # 1.73, without a spike. Sign updates (signum's too) move every coordinate by the full lr, so a smaller lr
    # suits the wide embedding and the attention logits; AdamW keeps its 3e-3.
    tuning = {"gpt": {"lr": 1e-3}}

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
    # vit (the default bench). The lr 0.05 above left it near chance: 100 steps, 8 workers x 32 images, eval
    # accuracy 18.5% against 82-83% for signum-mv and dlion-mavo. Measured at 0.2: 41.9%; 0.5: 39.6%; 1.0
    # diverged (loss 58 at step 70). 0.2 it is; SGD trails sign methods on this ViT, as in the Distributed
    # Lion paper's table (Liu et al., NeurIPS 2024).
    tuning = {"vit": {"lr": 0.2}}
    bytes = StrategyBytes(0, 4 * F32, "no local rule; update reads p, buf, writes p, buf", update_step=SGD_MOMENTUM)

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.buf = self.zeros(1)[0]

    def apply(self, params: Tensor, aggregate: Tensor) -> None:
        h = self.hyper
        sgdm_update_(params, aggregate[0], self.buf, h.lr, h.weight_decay, h.betas[0])
