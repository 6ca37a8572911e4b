"""Lion whose workers vote (Distributed Lion's exchange, Liu et al. 2024, Algorithm 1): a lionsim
strategy that sends votes, written as a plug-in, in one file.

    per worker i:  c_i = b1 m_i + (1 - b1) g_i        (its local Lion update, before the sign)
                   v_i = sign(c_i), int8               (its vote: +1, -1, or 0 where c_i is 0, which abstains)
                   m_i = b2 m_i + (1 - b2) g_i
    exchange:      the rule combines the N votes       (mavo: sign of their sum; avg: their sum / N)
    update:        x <- x (1 - lr wd) - lr rule(v_1 .. v_N)

A strategy that sends votes (payload_kind = "votes") names the rule that combines them in every
spec it returns, `PayloadSpec(kind="votes", numel=..., rule=R)`: the transports read R to sum the
votes and apply it, to size the result they send back (its bits down) and to price its kernels.
R is an instance of one of lionsim.aggregators.VOTE_RULES: MajorityVote() (mavo; a tie, at an
even N, gives 0) or MeanVote() (avg). Here `--lion-vote-rule` picks it by name; `rule`, on the
class, is its default. A votes spec without a rule is refused when the file loads.

Load it with `--plugin examples/plugins/lion_vote.py`; then `-s lion-vote` works in bench,
estimate, sweep and report, and `--lion-vote-rule avg` (or `--opt lion-vote.rule=avg`) votes by the mean.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from lionsim.aggregators import VOTE_RULES, MajorityVote, VoteRule
from lionsim.steptime.strategy_bytes import F32, StrategyBytes
from lionsim.strategies import STRATEGIES, Strategy
from lionsim.strategies.core.base import Hyper
from lionsim.strategies.core.form import option
from lionsim.transports import AFTER_BACKWARD, Payload, PayloadSpec


@STRATEGIES.register("lion-vote")
class LionVote(Strategy):
    name = "lion-vote"
    summary = "Lion's local update, its sign sent as a 1-bit vote, combined by a vote rule (--lion-vote-rule)"
    payload_kind = "votes"
    default_transport = "a2a-1bit"  # 1 bit up per parameter, the rule's code down: flat in N
    schedule = AFTER_BACKWARD  # as the D-Lion code (riverstone496/vitlion optimizer/distributed_lion.py): in the optimizer's step
    defaults = Hyper(lr=3e-3, weight_decay=0.01, betas=(0.9, 0.99))  # Lion's, as lionsim's lion and dlion-*
    bytes = StrategyBytes(3 * F32, 2 * F32, "rule reads g, m, writes m; update reads p, writes p")
    rule: VoteRule = MajorityVote()
    """The vote rule at the default --lion-vote-rule."""

    @dataclass(frozen=True, kw_only=True)
    class Options:
        rule: str = option("mavo", accepted="a vote rule", check=lambda v: v in VOTE_RULES, choices=VOTE_RULES)
        """How the workers' votes combine: mavo (majority: the sign of their sum) or avg (their mean)."""

    tuning: dict[str, dict] = {}  # no workload measured yet: the defaults above everywhere

    def __init__(self, cfg, layout, comm) -> None:
        super().__init__(cfg, layout, comm)
        self.rule = VOTE_RULES.get(self.opts.rule)()  # this run's rule, by its registered name
        self.exp_avg = self.zeros()  # m [w, P]: each worker's own momentum

    def payload_spec(self) -> PayloadSpec:
        return PayloadSpec(kind="votes", numel=self.layout.numel, rule=self.rule)

    def encode(self, grads: Tensor, params: Tensor, comm, clock) -> Payload:
        beta1, beta2 = self.hyper.betas
        votes = torch.sign(self.exp_avg * beta1 + grads * (1 - beta1)).to(torch.int8)  # [w, P]: +1, -1, 0
        self.exp_avg.mul_(beta2).add_(grads, alpha=1 - beta2)
        return Payload(self.payload_spec(), votes)

    def apply(self, params: Tensor, aggregate: Tensor) -> None:
        params.mul_(1 - self.hyper.lr * self.hyper.weight_decay)
        params.sub_(aggregate[0], alpha=self.hyper.lr)  # the rule's result, the same on every worker
