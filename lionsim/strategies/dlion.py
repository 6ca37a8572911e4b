"""Distributed Lion (Liu et al. 2024, Algorithm 1): each worker keeps its own momentum and
sends only the sign of its local Lion update; the replica moves by the vote (MaVo) or the
mean (Avg) of the signs, with weight decay applied locally. Gradients never travel.

A worker whose c is exactly zero abstains (votes 0), so a parameter no worker's batch has
touched moves by weight decay only, as in Lion (lionsim.transports.abstain carries it)."""

from __future__ import annotations

from torch import Tensor

from lionsim.aggregators import MajorityVote, MeanVote, TieBreak, VoteRule, check_tie
from lionsim.backends import Comm
from lionsim.optim.functional import apply_update_, decay_momentum_, lion_interpolation, sign_votes
from lionsim.optim.steps import LION_VOTE, SIGN_APPLY
from lionsim.steptime.strategy_bytes import F32, StrategyBytes
from lionsim.strategies.core.base import STRATEGIES, Hyper, Strategy
from lionsim.strategies.core.momentum_sync import MomentumSyncing
from lionsim.timing import Clock
from lionsim.transports import AFTER_BACKWARD, Payload, PayloadSpec


class DistributedLionStrategy(MomentumSyncing, Strategy):
    payload_kind = "votes"
    default_transport = "int8-allreduce"
    schedule = AFTER_BACKWARD  # the D-Lion code (riverstone496/vitlion optimizer/distributed_lion.py):
    # every tensor's votes concatenated and exchanged in the optimizer's step, after backward
    defaults = Hyper(lr=3e-3, weight_decay=0.01, betas=(0.9, 0.99))
    tuning = {"gpt": {"lr": 1e-3}}  # sign updates on gpt: measured for the Lion family (lionsim/strategies/baselines.py, Lion)
    rule: VoteRule
    """The rule with its default tie rule (what `lionsim strategies` shows)."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        check_tie(self.cfg.tie)
        self.exp_avg = self.zeros()  # [w, P]: each worker's own momentum
        self.votes_cast = 0  # steps voted so far: the tie rules' step

    def step_rule(self) -> VoteRule:
        """This step's vote rule."""
        return self.rule

    def payload_spec(self) -> PayloadSpec:
        return PayloadSpec(kind="votes", numel=self.layout.numel, rule=self.step_rule())

    def encode(self, grads: Tensor, params: Tensor, comm: Comm, clock: Clock) -> Payload:
        beta1, beta2 = self.hyper.betas
        self.votes_cast += 1
        votes = sign_votes(lion_interpolation(self.exp_avg, grads, beta1), self.workers)
        decay_momentum_(self.exp_avg, grads, beta2)
        return Payload(self.payload_spec(), votes)

    def apply(self, params: Tensor, aggregate: Tensor) -> None:
        apply_update_(params, aggregate[0], self.hyper.lr, self.hyper.weight_decay)


@STRATEGIES.register("dlion-mavo")
class DLionMaVo(DistributedLionStrategy):
    name = "dlion-mavo"
    summary = "Distributed Lion, majority vote of the workers' signs (tie: --tie, default 0)"
    known_as = ("distributed-lion", "d-lion", "dlion")
    rule = MajorityVote()
    reads = ("tie",)
    bytes = StrategyBytes(3 * F32, 2 * F32, "rule reads g, m, writes m; update reads p, writes p",
                          rule_step=LION_VOTE, update_step=SIGN_APPLY)

    def step_rule(self) -> VoteRule:
        return MajorityVote(TieBreak(self.cfg.tie, seed=self.cfg.seed, step=max(1, self.votes_cast)))


@STRATEGIES.register("dlion-avg")
class DLionAvg(DistributedLionStrategy):
    name = "dlion-avg"
    summary = "Distributed Lion, mean of the workers' signs"
    known_as = ("distributed-lion", "d-lion", "dlion")
    rule = MeanVote()
    bytes = StrategyBytes(3 * F32, 2 * F32, "rule reads g, m, writes m; update reads p, writes p",
                          rule_step=LION_VOTE, update_step=SIGN_APPLY)
