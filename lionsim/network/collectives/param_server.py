"""Parameter server with k servers (BytePS-style sharding: Jiang et al., OSDI 2020).

Each of the p workers pushes n bytes, split evenly over k servers, and later pulls n bytes
back. A server's link carries p n / k bytes; a worker's link carries n, or c n when c
workers of one node push through the node's shared link at once (c = 1 on a flat network).
The slower side sets the time, each way:

    ps_push: alpha + max(c, p/k) n beta     sends n
    ps_pull: alpha + max(c, p/k) n beta     sends 0 (the worker receives)

No gamma term: what the server does with the pushes (sum, vote) belongs to the transport.
"""

from __future__ import annotations

from lionsim.network.collectives.base import CollectiveAlgorithm, Group, Terms, register


@register
class ParameterServer(CollectiveAlgorithm):
    name = "param_server"
    summary = "parameter server, k servers: alpha + max(c, p/k) n beta each way"

    def ps_push(self, n: float, g: Group) -> Terms:
        return Terms(latency_s=g.link.alpha_s, bandwidth_s=_load(g) * n * g.link.beta, sent_bytes=n)

    def ps_pull(self, n: float, g: Group) -> Terms:
        return Terms(latency_s=g.link.alpha_s, bandwidth_s=_load(g) * n * g.link.beta, sent_bytes=0.0)


def _load(g: Group) -> float:
    """How many n-byte messages the bottleneck link carries: max(c, p/k)."""
    return max(float(g.ranks_per_link), g.ranks / g.servers)
