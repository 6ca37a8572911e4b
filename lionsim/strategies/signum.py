"""signSGD with majority vote on momentum (signum-mv; Bernstein et al. 2018/2019): each worker
votes the sign of its own momentum m = b1 * m + (1 - b1) * g; the replica moves by the
majority vote, with decoupled weight decay. Unlike Lion, the sign is of the momentum
itself, with no separate interpolation constant.

Weight decay is decoupled and local, as Lion's: x <- x (1 - lr wd) - lr vote. The papers'
signum adds wd x to the gradient before its sign instead (coupled), which would put the decay
inside the vote, where a sign flattens it to +-1; decoupled, it shrinks the weights by the
same factor on every worker whatever the vote (so replicas stay identical) and lr * wd keeps
the meaning it has for Lion, whose defaults these strategies share."""

from __future__ import annotations

from torch import Tensor

from lionsim.aggregators import MajorityVote
from lionsim.backends import Comm
from lionsim.optim.functional import apply_update_, decay_momentum_, sign_votes
from lionsim.optim.steps import MOMENTUM_VOTE, SIGN_APPLY
from lionsim.steptime.strategy_bytes import F32, StrategyBytes
from lionsim.strategies.core.base import STRATEGIES, Hyper, Strategy
from lionsim.strategies.core.momentum_sync import MomentumSyncing
from lionsim.timing import Clock
from lionsim.transports import AFTER_BACKWARD, Payload, PayloadSpec


@STRATEGIES.register("signum-mv")
class SignumMajorityVote(MomentumSyncing, Strategy):
    name = "signum-mv"
    summary = "signum with majority vote: each worker votes sign(momentum)"
    payload_kind = "votes"
    default_transport = "int8-allreduce"
    schedule = AFTER_BACKWARD  # the authors' code (jiaweizzhao/signSGD-with-Majority-Vote main/Signum_SGD.py):
    # signs exchanged in the optimizer's step, after backward, in 100 MB buckets
    defaults = Hyper(lr=3e-3, weight_decay=0.01, betas=(0.9, 0.9))
    tuning = {"gpt": {"lr": 1e-3}}  # sign updates on gpt: measured for the Lion family (lionsim/strategies/baselines.py, Lion)
    rule = MajorityVote()
    bytes = StrategyBytes(3 * F32, 2 * F32, "rule reads g, m, writes m; update reads p, writes p",
                          rule_step=MOMENTUM_VOTE, update_step=SIGN_APPLY)

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.exp_avg = self.zeros()

    def payload_spec(self) -> PayloadSpec:
        return PayloadSpec(kind="votes", numel=self.layout.numel, rule=self.rule)

    def encode(self, grads: Tensor, params: Tensor, comm: Comm, clock: Clock) -> Payload:
        decay_momentum_(self.exp_avg, grads, self.hyper.betas[0])
        return Payload(self.payload_spec(), sign_votes(self.exp_avg, self.workers))

    def apply(self, params: Tensor, aggregate: Tensor) -> None:
        apply_update_(params, aggregate[0], self.hyper.lr, self.hyper.weight_decay)
