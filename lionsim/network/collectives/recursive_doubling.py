"""Recursive-doubling all-reduce (Thakur, Rabenseifner & Gropp 2005, section 4.4).

In log2 p rounds each rank exchanges its whole vector with the rank at distance 1, 2, 4, ...
and combines: for p a power of two,

    all_reduce: log2 p (alpha + n beta + n gamma)                       sends log2 p n

Other p (as MPICH does it): with p' the largest power of two <= p and r = p - p', the
first 2r ranks pair up; the even one of each pair sends its vector to the odd one, which
combines (alpha + n beta + n gamma), the p' remaining ranks run the algorithm, and the
odd ranks send the result back (alpha + n beta):

    all_reduce: (log2 p' + 2) alpha + (log2 p' + 2) n beta + (log2 p' + 1) n gamma
                                                  the busiest rank sends (log2 p' + 1) n
"""

from __future__ import annotations

from lionsim.network.collectives.base import CollectiveAlgorithm, Group, Terms, fold, register


@register
class RecursiveDoubling(CollectiveAlgorithm):
    name = "recursive_doubling"
    summary = "recursive-doubling all-reduce; extra ranks fold in first (MPICH)"
    folds = True

    def all_reduce(self, n: float, g: Group) -> Terms:
        link = g.link
        p2, extra = fold(g.ranks)
        rounds = p2.bit_length() - 1  # log2 p'
        folded = 1 if extra else 0
        messages = rounds + 2 * folded  # fold-in + rounds + result back
        return Terms(
            latency_s=messages * link.alpha_s,
            bandwidth_s=messages * n * link.beta,
            reduce_s=(rounds + folded) * n * link.gamma_s_per_byte,
            sent_bytes=(rounds + folded) * n,
        )
