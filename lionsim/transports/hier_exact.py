"""hier-exact: the flat vote, counted node by node (lionsim.transports.hier for the phases).

Inside a node the g workers' votes are summed exactly over the intra link. Across nodes each
node sends its sums with the fewest bits that hold them: without abstentions a sum of g votes
of +/-1 has g's parity, so (S + g) / 2 in 0..g takes ceil(log2(g + 1)) bits; on a step with
abstentions it is any of -g..g or "nobody here voted", 2g + 2 codes in ceil(log2(2g + 1)) bits
(the same count: 2g + 1 is odd, so no power of two lies between it and 2g + 2); 4 and 5 bits
at g = 8. The block's owner adds the M node sums exactly, so it holds the flat sum S in
-N..N and whether anybody voted, and applies the vote rule to them as every flat transport
does: the result equals the flat vote bit for bit, under every tie rule and with abstentions.

Bytes across nodes per node and step, n parameters, d the rule's downlink bits: (M-1)/M n b/8
up and (M-1)/M n d/8 down, against a2a-1bit's g (M-1)/M n/8 up with the same down (priced on
the same hierarchy): the first phase shrinks by g/b, 2x at g = 8 without abstentions.
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.aggregators import VoteRule
from lionsim.transports.base import TRANSPORTS, bits_for
from lionsim.transports.hier import HierarchicalVote


def node_levels(g: int, abstain: bool) -> int:
    """Distinct summaries of one node of g workers: g + 1 sums, or 2g + 1 sums and "nobody voted"."""
    return 2 * g + 2 if abstain else g + 1


@TRANSPORTS.register("hier-exact")
class HierExact(HierarchicalVote):
    name = "hier-exact"
    kernels = ("pack-signs", "unpack-signs")
    summary = "exact vote sums inside each node, summed exactly across nodes in ceil(log2(2g+1)) bits: the flat vote"

    def node_bits(self, rule: VoteRule, g: int, abstain: bool) -> int:
        return bits_for(node_levels(g, abstain))

    def summarize(self, node_sum: Tensor, voted: Tensor | None, rule: VoteRule, g: int, index: Tensor,
                  abstain: bool) -> Tensor:
        s = node_sum.to(torch.int64)
        if not abstain:
            return (s + g) // 2  # exact: s has g's parity
        return torch.where(voted, s + g, 2 * g + 1)

    def combine(self, codes: Tensor, rule: VoteRule, g: int, m: int, index: Tensor, abstain: bool) -> Tensor:
        workers = g * m
        if not abstain:
            return rule.encode((2 * codes - g).sum(1), workers, index=index)
        voted = codes != 2 * g + 1  # [w, M, c]
        vote_sum = torch.where(voted, codes - g, 0).sum(1)
        return rule.encode(vote_sum, workers, voted=voted.any(1), index=index, abstain=True)

    def result_levels(self, rule: VoteRule, g: int, m: int, abstain: bool) -> tuple[int, bool]:
        return rule.bits_down(g * m, abstain), abstain
