"""Pairwise-exchange all-to-all (Thakur, Rabenseifner & Gropp 2005, section 4.5).

In p-1 steps rank i sends its block for rank i XOR j (or i + j mod p) and receives one; with
n = one rank's whole send buffer, each block is n/p:

    all_to_all: (p-1) alpha + (p-1)/p n beta                             sends (p-1)/p n
"""

from __future__ import annotations

from lionsim.network.collectives.base import CollectiveAlgorithm, Group, Terms, register


@register
class Pairwise(CollectiveAlgorithm):
    name = "pairwise"
    summary = "pairwise-exchange all-to-all (p-1 steps)"

    def all_to_all(self, n: float, g: Group) -> Terms:
        p, link = g.ranks, g.link
        share = (p - 1) / p * n
        return Terms(latency_s=(p - 1) * link.alpha_s, bandwidth_s=share * link.beta, sent_bytes=share)
