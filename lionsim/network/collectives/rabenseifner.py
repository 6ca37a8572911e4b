"""Rabenseifner's all-reduce: recursive-halving reduce-scatter, then recursive-doubling all-gather.

Thakur, Rabenseifner & Gropp 2005, section 4.4; Rabenseifner 2004. For p a power of two:

    all_reduce: 2 log2 p alpha + 2 (p-1)/p n beta + (p-1)/p n gamma     sends 2 (p-1)/p n

Other p (MPICH): the r = p - p' extra ranks fold in first exactly as in recursive doubling
(the even rank of each of the first r pairs sends its whole vector to the odd one, which
combines it; the result goes back at the end), so with p' the largest power of two <= p:

    all_reduce: (2 log2 p' + 2) alpha + (2 (p'-1)/p' + 2) n beta + ((p'-1)/p' + 1) n gamma
                                      the busiest rank sends (2 (p'-1)/p' + 1) n
"""

from __future__ import annotations

from lionsim.network.collectives.base import CollectiveAlgorithm, Group, Terms, fold, register


@register
class Rabenseifner(CollectiveAlgorithm):
    name = "rabenseifner"
    summary = "Rabenseifner all-reduce (halving reduce-scatter + doubling all-gather); extra ranks fold in first"
    folds = True

    def all_reduce(self, n: float, g: Group) -> Terms:
        link = g.link
        p2, extra = fold(g.ranks)
        rounds = p2.bit_length() - 1  # log2 p'
        folded = 1 if extra else 0
        share = (p2 - 1) / p2  # of n, per half (reduce-scatter or all-gather)
        return Terms(
            latency_s=(2 * rounds + 2 * folded) * link.alpha_s,
            bandwidth_s=(2 * share + 2 * folded) * n * link.beta,
            reduce_s=(share + folded) * n * link.gamma_s_per_byte,
            sent_bytes=(2 * share + folded) * n,
        )
