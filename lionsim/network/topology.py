"""Topology: how one collective among N workers splits into phases over the intra and inter links.

G = workers_per_node, M = N / G nodes, n = the call's bytes (calls.py convention).

- Flat network (G = 1): one phase among N ranks on the inter link.
- All workers in one node (N <= G): one phase among N ranks on the intra link.
- Otherwise hierarchical, as NCCL/Horovod-style two-level collectives do it. An inter
  phase run by all G local ranks at once (one collective per local rank, among the M
  nodes) shares the node's inter link: each sees 1/G of its bandwidth.

      all_reduce     intra reduce_scatter(G, n) -> inter all_reduce(M, n/G) x G -> intra all_gather(G, n)
      reduce_scatter intra reduce_scatter(G, n) -> inter reduce_scatter(M, n/G) x G
      all_gather     inter all_gather(M, n/G) x G -> intra all_gather(G, n)
      all_to_all     intra all_to_all(G, n) -> inter all_to_all(M, n) x G
                     (two-level all-to-all as in Tutel's "2DH": gather by destination node first)
      broadcast      inter broadcast(M, n) by one rank per node -> intra broadcast(G, n)
      reduce         intra reduce(G, n) -> inter reduce(M, n) by one rank per node
      ps_push/pull   every worker talks to the servers over the inter link; c = G workers
                     share a node's link (param_server's max(c, N/k))

A two-level network also offers a flat ring through all N workers (nodes contiguous, as
NCCL's rings run): every ring step moves n/N (or the chunk) over each hop at once, so the
step runs at the pace of the slowest hop, alpha = max(alpha_intra, alpha_inter) and
beta = max(beta_intra, beta_inter). NCCL runs one ring channel per NIC, so the ring's
inter-node hop has the node's whole inter bandwidth. Only the ring algorithm (ring
reduce-scatter / all-gather / all-reduce, chain broadcast / reduce) can take this plan.

The inter link's bandwidth is also divided by `oversubscription`. `plans` returns every
applicable plan; the pricer takes the cheapest.

Bytes across nodes: a phase's `sharers` says how many of a node's workers push their copy of it
through the node's inter link at once (g for an inter phase run on every worker's share, the
workers of a node for ps_push, 1 for a flat ring, whose one inter-node hop per node carries the
ring's bytes, and on a flat network). What leaves a node is sharers x the bytes one of them
sends, and its bandwidth term is those bytes / the node's inter bandwidth (lionsim.network.cost
CallCost.inter_bytes), so bytes and time across nodes agree whatever the plan.

A scoped call (calls.py: a hierarchical transport's own phases) has one plan, one phase:

      intra   op among the g = min(G, N) workers of a node, on the intra link (every node at
              once: nodes do not share intra links)
      inter   op among the M nodes, run by each of a node's g workers at once on its own share,
              so each sees 1/g of the node's inter link (as the inter phase above)

On a flat network (G = 1) an intra call has one rank and costs nothing, an inter call runs
among all N workers; within one node (M = 1) an inter call costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from lionsim.network.collectives import Group
from lionsim.network.link import Link, Network


@dataclass(frozen=True, kw_only=True, slots=True)
class Phase:
    """One step of a (possibly hierarchical) collective."""

    op: str
    """The collective op of this phase (calls.OPS)."""
    nbytes: float
    """Message size of this phase, calls.py convention."""
    group: Group
    """Ranks and the link one of them sees."""
    scope: str
    """"intra", "inter", or "intra+inter" (a flat ring through both)."""
    algorithms: tuple[str, ...] | None = None
    """The only algorithms that may run this phase; None: any that implements the op."""
    sharers: int = 1
    """A node's workers running this phase at once through the node's inter link (an inter phase
    run by each of the g workers on its share: g): what crosses the node's link is sharers x the
    bytes one of them sends, and each sees 1/sharers of the link (group.link, already divided)."""


Plan = tuple[Phase, ...]
FLAT_RING_OPS = ("all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce")


def plans(op: str, nbytes: float, workers: int, network: Network, scope: str = "world") -> list[Plan]:
    """Every way to run `op` on `nbytes` among `workers` workers of `network` (see the module doc)."""
    g = network.workers_per_node
    m = network.nodes(workers)  # fails unless whole nodes
    if scope != "world":
        return [(scoped_phase(op, nbytes, scope, workers, network),)]
    if op in ("ps_push", "ps_pull"):
        sharers = min(g, workers)
        group = Group(ranks=workers, link=network.inter_link(), servers=network.ps_servers, ranks_per_link=sharers)
        return [(Phase(op=op, nbytes=nbytes, group=group, scope="inter", sharers=sharers),)]
    if g == 1:
        return [(Phase(op=op, nbytes=nbytes, group=Group(ranks=workers, link=network.inter_link()), scope="inter"),)]
    assert network.intra is not None  # Network guarantees it when workers_per_node > 1
    if m == 1:
        return [(Phase(op=op, nbytes=nbytes, group=Group(ranks=workers, link=network.intra), scope="intra"),)]
    out = [_hierarchical(op, nbytes, g, m, network)]
    if op in FLAT_RING_OPS:
        ring = Group(ranks=workers, link=_slowest(network.intra, network.inter_link()))
        out.append((Phase(op=op, nbytes=nbytes, group=ring, scope="intra+inter", algorithms=("ring",)),))
    return out


def scoped_phase(op: str, nbytes: float, scope: str, workers: int, network: Network) -> Phase:
    """The one phase of an intra or inter call (module doc)."""
    g, m = min(network.workers_per_node, workers), network.nodes(workers)
    if scope == "intra":
        link = network.intra if network.intra is not None else network.inter_link()  # g = 1: no traffic
        return Phase(op=op, nbytes=nbytes, group=Group(ranks=g, link=link), scope="intra")
    if scope == "inter":
        return Phase(op=op, nbytes=nbytes, group=Group(ranks=m, link=network.inter_link(g)), scope="inter", sharers=g)
    raise ValueError(f"no scoped plan for scope {scope!r}")


def _hierarchical(op: str, nbytes: float, g: int, m: int, network: Network) -> Plan:
    assert network.intra is not None
    intra_link = network.intra

    def intra(phase_op: str, size: float) -> Phase:
        return Phase(op=phase_op, nbytes=size, group=Group(ranks=g, link=intra_link), scope="intra")

    def inter(phase_op: str, size: float, sharers: int) -> Phase:
        return Phase(op=phase_op, nbytes=size, group=Group(ranks=m, link=network.inter_link(sharers)), scope="inter",
                     sharers=sharers)

    if op == "all_reduce":
        return (intra("reduce_scatter", nbytes), inter("all_reduce", nbytes / g, g), intra("all_gather", nbytes))
    if op == "reduce_scatter":
        return (intra("reduce_scatter", nbytes), inter("reduce_scatter", nbytes / g, g))
    if op == "all_gather":
        return (inter("all_gather", nbytes / g, g), intra("all_gather", nbytes))
    if op == "all_to_all":
        return (intra("all_to_all", nbytes), inter("all_to_all", nbytes, g))
    if op == "broadcast":
        return (inter("broadcast", nbytes, 1), intra("broadcast", nbytes))
    if op == "reduce":
        return (intra("reduce", nbytes), inter("reduce", nbytes, 1))
    raise ValueError(f"no hierarchical plan for {op!r}")


def _slowest(a: Link, b: Link) -> Link:
    """One link as slow as the slower of two on every term (a ring step waits for its slowest hop)."""
    return Link(
        alpha_s=max(a.alpha_s, b.alpha_s),
        bandwidth_Bps=1.0 / max(a.beta, b.beta),
        gamma_s_per_byte=max(a.gamma_s_per_byte, b.gamma_s_per_byte),
    )
