"""Bruck's all-gather (Bruck et al. 1997; Thakur, Rabenseifner & Gropp 2005, section 4.1).

In ceil(log2 p) rounds rank i sends everything it holds to rank i - 2^j; the last round
sends only the blocks still missing, so any p works without folding:

    all_gather: ceil(log2 p) alpha + (p-1)/p n beta   (n = total output)   sends (p-1)/p n

(The final local rotation is a memory copy and is not charged.)
"""

from __future__ import annotations

from lionsim.network.collectives.base import CollectiveAlgorithm, Group, Terms, ceil_log2, register


@register
class Bruck(CollectiveAlgorithm):
    name = "bruck"
    summary = "Bruck all-gather (ceil(log2 p) rounds, any p)"

    def all_gather(self, n: float, g: Group) -> Terms:
        p, link = g.ranks, g.link
        share = (p - 1) / p * n
        return Terms(latency_s=ceil_log2(p) * link.alpha_s, bandwidth_s=share * link.beta, sent_bytes=share)
