"""Binomial-tree broadcast and reduce (Thakur, Rabenseifner & Gropp 2005, sections 4.2-4.3).

ceil(log2 p) rounds; in each the ranks that hold the data (broadcast) or a partial result
(reduce) double or halve. Any p works (the last round is partly empty):

    broadcast: ceil(log2 p) (alpha + n beta)            the root sends ceil(log2 p) n
    reduce:    ceil(log2 p) (alpha + n beta + n gamma)  every non-root rank sends n once
"""

from __future__ import annotations

from lionsim.network.collectives.base import CollectiveAlgorithm, Group, Terms, ceil_log2, register


@register
class Binomial(CollectiveAlgorithm):
    name = "binomial"
    summary = "binomial-tree broadcast and reduce (ceil(log2 p) rounds)"

    def broadcast(self, n: float, g: Group) -> Terms:
        rounds, link = ceil_log2(g.ranks), g.link
        return Terms(latency_s=rounds * link.alpha_s, bandwidth_s=rounds * n * link.beta, sent_bytes=rounds * n)

    def reduce(self, n: float, g: Group) -> Terms:
        rounds, link = ceil_log2(g.ranks), g.link
        return Terms(
            latency_s=rounds * link.alpha_s,
            bandwidth_s=rounds * n * link.beta,
            reduce_s=rounds * n * link.gamma_s_per_byte,
            sent_bytes=n,
        )
