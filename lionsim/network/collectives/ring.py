"""Ring algorithms (Thakur, Rabenseifner & Gropp 2005; Patarasuk & Yuan 2009; NCCL's rings).

p ranks in a ring; alpha, beta, gamma from the link; n bytes by the calls.py convention.

    reduce_scatter: (p-1) alpha + (p-1)/p n beta + (p-1)/p n gamma      sends (p-1)/p n
    all_gather:     (p-1) alpha + (p-1)/p n beta     (n = total output)  sends (p-1)/p n
    all_reduce:     reduce_scatter then all_gather:
                    2(p-1) alpha + 2(p-1)/p n beta + (p-1)/p n gamma    sends 2(p-1)/p n

broadcast and reduce run as a pipelined chain (NCCL's ring broadcast/reduce): the vector
is cut into k chunks that flow along the p-1 hops, so with k chosen optimally
(base.best_chunks)

    broadcast:      (p-2+k) (alpha + n/k beta)                           sends n
    reduce:         (p-2+k) (alpha + n/k beta + n/k gamma)               sends n

which tends to n beta (busbw = bandwidth) for large n.
"""

from __future__ import annotations

from lionsim.network.collectives.base import CollectiveAlgorithm, Group, Terms, best_chunks, register


@register
class Ring(CollectiveAlgorithm):
    name = "ring"
    summary = "ring (reduce-scatter, all-gather, all-reduce) and pipelined chain (broadcast, reduce)"

    def reduce_scatter(self, n: float, g: Group) -> Terms:
        p, link = g.ranks, g.link
        share = (p - 1) / p * n
        return Terms(
            latency_s=(p - 1) * link.alpha_s,
            bandwidth_s=share * link.beta,
            reduce_s=share * link.gamma_s_per_byte,
            sent_bytes=share,
        )

    def all_gather(self, n: float, g: Group) -> Terms:
        p, link = g.ranks, g.link
        share = (p - 1) / p * n
        return Terms(latency_s=(p - 1) * link.alpha_s, bandwidth_s=share * link.beta, sent_bytes=share)

    def all_reduce(self, n: float, g: Group) -> Terms:
        scatter, gather = self.reduce_scatter(n, g), self.all_gather(n, g)
        return Terms(
            latency_s=scatter.latency_s + gather.latency_s,
            bandwidth_s=scatter.bandwidth_s + gather.bandwidth_s,
            reduce_s=scatter.reduce_s,
            sent_bytes=scatter.sent_bytes + gather.sent_bytes,
        )

    def broadcast(self, n: float, g: Group) -> Terms:
        return _chain(n, g, reduce=False)

    def reduce(self, n: float, g: Group) -> Terms:
        return _chain(n, g, reduce=True)


def _chain(n: float, g: Group, *, reduce: bool) -> Terms:
    """A pipelined chain over p-1 hops: (p-1) + (k-1) steps, each alpha + n/k (beta [+ gamma])."""
    link = g.link
    per_byte = link.beta + (link.gamma_s_per_byte if reduce else 0.0)
    k = best_chunks(g.ranks - 1, link.alpha_s, n * per_byte, n)
    steps = g.ranks - 2 + k
    return Terms(
        latency_s=steps * link.alpha_s,
        bandwidth_s=steps * n / k * link.beta,
        reduce_s=steps * n / k * link.gamma_s_per_byte if reduce else 0.0,
        sent_bytes=n,
    )
