"""Pipelined double-binary-tree all-reduce (Sanders, Speck & Traeff 2009; NCCL >= 2.4).

Two binary trees over the p ranks, built so that a rank is interior in one and a leaf in
the other; each tree reduces half the vector up to its root and broadcasts it back down.
Each half is cut into k chunks that flow through the tree in a pipeline: h = floor(log2 p)
levels (the height of a binary tree of p nodes) and h + k - 1 steps up, the same down.
In one step the busiest rank sends s n/k bytes up (n/2k to its parent in each tree),
combines s n/k bytes from its children, and later sends s n/k down:

    all_reduce: (h + k - 1) (2 alpha + s n/k (2 beta + gamma))    sends at most 2 s n

s = 1, except s = 1/2 for p = 2 (each rank is the root of one tree and the leaf of the
other, so it sends one half each way). k is chosen optimally (base.best_chunks), so the
time tends to 2 s n beta (busbw = bandwidth) for large n and to 2 h alpha for small n.
"""

from __future__ import annotations

from lionsim.network.collectives.base import CollectiveAlgorithm, Group, Terms, best_chunks, register


@register
class DoubleBinaryTree(CollectiveAlgorithm):
    name = "tree"
    summary = "pipelined double binary tree all-reduce (NCCL's tree)"

    def all_reduce(self, n: float, g: Group) -> Terms:
        link = g.link
        height = g.ranks.bit_length() - 1  # floor(log2 p)
        load = 0.5 if g.ranks == 2 else 1.0
        step_latency = 2 * link.alpha_s
        transfer = load * n * (2 * link.beta + link.gamma_s_per_byte)
        k = best_chunks(height, step_latency, transfer, n)
        steps = height + k - 1
        return Terms(
            latency_s=steps * step_latency,
            bandwidth_s=steps * load * n / k * 2 * link.beta,
            reduce_s=steps * load * n / k * link.gamma_s_per_byte,
            sent_bytes=2 * load * n,
        )
