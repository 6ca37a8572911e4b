"""hier-1bit: a vote of votes (lionsim.transports.hier for the phases). Not the flat vote.

Each node takes the majority of its g workers' votes exactly (over the intra link, ties by the
step's tie rule), then the M nodes take the majority of the node votes, each node's vote in the
rule's downlink bits for g voters: 1 bit when a node cannot tie (odd g) or a tie rule moves
ties; under sign(0) = 0 at even g, or on a step with abstentions, a node's vote may be 0 (it
tied, or nobody in it voted) and takes 2 bits. A node vote of 0 abstains at the top. Ties at
the top follow the same rule, with the same coin for a coordinate at both levels (`random`)
or the same direction (`alternate`): both are functions of the step and the coordinate.

It sends across nodes 1-2 bits per coordinate, against hier-exact's 4-5 at g = 8, and its
result may differ from the flat vote wherever the nodes' majorities disagree with the
workers' (a node won 5-3 counts as much as one won 8-0): `lionsim bench` reports the share of
coordinates where it agrees with the flat vote every step (steps.csv `vote_agreement`).
Majority vote only: a mean of votes has no 1-bit node summary (dlion-avg: use hier-exact).
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.aggregators import MajorityVote, VoteRule
from lionsim.backends import Comm
from lionsim.errors import LionsimError
from lionsim.timing import Clock
from lionsim.transports.base import TRANSPORTS
from lionsim.transports.hier import HierarchicalVote
from lionsim.transports.payloads import Payload, PayloadSpec


AGREEMENT = "vote_agreement"
"""payload.extra key: the share of coordinates where the result equals the flat vote."""


def agreement(result: Tensor, payload: Payload, comm: Comm) -> float:
    """The share of the n coordinates where `result` [n] equals the flat vote of every worker's
    votes, gathered outside the step's timing (a diagnostic: no real transport sends this)."""
    votes = comm.exchange_control(payload.values)  # [W, n]
    rule = payload.spec.rule
    flat = rule.result(votes.sum(0, dtype=torch.int32), comm.world_size, voted=(votes != 0).any(0))
    return float((result == flat.to(result.device)).float().mean())


@TRANSPORTS.register("hier-1bit")
class Hier1Bit(HierarchicalVote):
    name = "hier-1bit"
    kernels = ("pack-signs", "unpack-signs")
    summary = "vote of votes: each node's majority, then a 1-bit majority of the nodes (not the flat vote)"
    exact = False

    @classmethod
    def accepts(cls, strategy: type) -> bool:
        return isinstance(getattr(strategy, "rule", None), MajorityVote)

    def check(self, spec: PayloadSpec, workers: int) -> None:
        super().check(spec, workers)
        if not isinstance(spec.rule, MajorityVote):
            raise LionsimError(f"hier-1bit is a majority vote of node majorities, not a {spec.rule.name} vote; "
                               "use hier-exact (the flat vote, counted by node)")

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        self.check(payload.spec, comm.world_size)  # also for callers that skip the run's check
        result = super().aggregate(payload, comm, clock)
        payload.extra[AGREEMENT] = agreement(result[0], payload, comm)
        return result

    def node_bits(self, rule: VoteRule, g: int, abstain: bool) -> int:
        return rule.bits_down(g, abstain)

    def summarize(self, node_sum: Tensor, voted: Tensor | None, rule: VoteRule, g: int, index: Tensor,
                  abstain: bool) -> Tensor:
        return rule.encode(node_sum, g, voted=voted, index=index, abstain=abstain)

    def combine(self, codes: Tensor, rule: VoteRule, g: int, m: int, index: Tensor, abstain: bool) -> Tensor:
        node_votes = rule.decode(codes, g, abstain).to(torch.int64)  # [w, M, c] in {-1, 0, +1}
        top_abstain = self.node_abstain(rule, g, abstain)
        voted = (node_votes != 0).any(1) if top_abstain else None
        return rule.encode(node_votes.sum(1), m, voted=voted, index=index, abstain=top_abstain)

    @staticmethod
    def node_abstain(rule: VoteRule, g: int, abstain: bool) -> bool:
        """Whether a node's vote can be 0 (it tied under sign(0) = 0, or nobody in it voted)."""
        return rule.levels(g, abstain) > 2

    def result_levels(self, rule: VoteRule, g: int, m: int, abstain: bool) -> tuple[int, bool]:
        top_abstain = self.node_abstain(rule, g, abstain)
        return rule.bits_down(m, top_abstain), top_abstain

    def voters(self, g: int, m: int) -> int:
        return m
