"""Pricing: a CollectiveCall among N workers of a Network -> seconds and bytes sent.

`price` lists the ways to run the call on the network (topology.plans: one plan on a flat
network; hierarchical phases or a flat ring on a two-level one), prices each phase with an
algorithm (collectives/), sums each plan and takes the cheapest plan. `algorithm="auto"`
takes, for every phase, the cheapest registered algorithm that implements the phase's op
(ties go to the one registered first). A named algorithm must implement the call's own op;
it runs every phase whose op it implements, the other phases take the cheapest, and plans
it may not run (the flat ring, for anything but "ring") are left out. A named algorithm
that can run the flat plan runs it: `ring` on a two-level network is a flat ring over every
worker (nodes contiguous), never the hierarchical plan, which only `auto` picks.

Traits with NCCL's tuning model (traits.model "nccl") price a whole-group call of an op the
model knows (nccl.NCCL_OPS) as NCCL would run it: its fastest (algorithm, protocol) by its own
model (or the fastest protocol of `ring` / `tree` when named), over every GPU at once, priced
on the network's fabric (fabrics.py: the transport across nodes, fitted to published sweeps);
other named algorithms, other ops and scoped calls take the plans above.

The network's traits (traits.py: the collective library on top of the links) enter three times:
an op whose traits name the algorithm the library runs is priced by it (unless `algorithm`
names another);
every phase runs over its link as the library gets it (bandwidth x the op's duplex share,
capped by the host; the dtype's reduction rate), and the call pays the op's floor and the
slow mode's expected extra once, and a host-staged library its copies (traits.Staging: the
call's send buffer to the host, its receive buffer back). `time_s` is the mean; `spread` gives
the two modes. An
intra or inter call (calls.py scope) is one phase among its own group's ranks on that link.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from lionsim.errors import LionsimError
from lionsim.network.calls import CollectiveCall
from lionsim.network.collectives import COLLECTIVE_ALGORITHMS, CollectiveAlgorithm, Group, Terms
from lionsim.network.collectives.base import fold
from lionsim.network import nccl
from lionsim.network.link import Link, Network
from lionsim.network.nccl import NCCL_OPS
from lionsim.network.topology import Phase, Plan, plans
from lionsim.network.traits import Spread, Traits

AUTO = "auto"

CANONICAL = {
    "all_reduce": "ring",
    "all_gather": "ring",
    "reduce_scatter": "ring",
    "all_to_all": "pairwise",
    "broadcast": "ring",
    "reduce": "ring",
    "ps_push": "param_server",
    "ps_pull": "param_server",
}
"""The bandwidth-optimal algorithm `wire_bytes` counts for each op (the closed forms of
Thakur, Rabenseifner & Gropp 2005; the wire_bytes column of steps.csv and estimate.csv counts the priced algorithm's
bytes instead, CallCost.sent_bytes)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PhaseCost:
    """One priced phase of a call."""

    op: str
    """The phase's op."""
    scope: str
    """"intra", "inter", "intra+inter" (a flat ring through both links) or "fitted" (a fitted entry's flat link)."""
    ranks: int
    """Ranks taking part."""
    nbytes: float
    """The phase's message size, calls.py convention."""
    algorithm: str
    """The algorithm that priced it."""
    terms: Terms
    """latency / bandwidth / reduce seconds and the busiest rank's sent bytes."""
    sharers: int = 1
    """A node's workers running this phase at once through its inter link (topology.Phase)."""
    node_bytes: float | None = None
    """Bytes one node sends through its inter link for this phase, where that is not sharers x
    terms.sent_bytes: NCCL's tree, n per NIC direction on two nodes against 2n a GPU (nccl.Choice)."""

    @property
    def inter_bytes(self) -> float:
        """Bytes one node sends across nodes for this phase; 0 inside a node."""
        if self.scope == "intra":
            return 0.0
        return self.node_bytes if self.node_bytes is not None else self.terms.sent_bytes * self.sharers


@dataclass(frozen=True, kw_only=True, slots=True)
class CallCost:
    """What one collective call costs."""

    time_s: float
    """Modelled seconds: the mean over the slow mode (traits.py), what a run's steps add up to."""
    algorithm: str
    """The algorithm used; "hier:a+b+c" names each phase's, "none" when N = 1."""
    sent_bytes: float
    """Bytes the busiest worker sends (summed over phases)."""
    phases: tuple[PhaseCost, ...] = ()
    """The breakdown, one entry per phase."""
    floor_s: float = 0.0
    """The library's per-call floor (traits), beyond the phases."""
    staging_s: float = 0.0
    """A host-staged library's copies of the call's buffers (traits.Staging), beyond the phases."""
    spread: Spread | None = None
    """The call's two modes (fast, slow extra, its probability); None: always time_s."""
    protocol: str = ""
    """NCCL's protocol (ll, ll128, simple) where NCCL's tuning model priced the call; "" otherwise."""

    @property
    def label(self) -> str:
        """The algorithm, and NCCL's protocol where its model priced the call: "ring/simple"."""
        return f"{self.algorithm}/{self.protocol}" if self.protocol else self.algorithm

    @property
    def folded(self) -> int:
        """Ranks folded in first by a phase's algorithm where its ranks are not a power of two
        (CollectiveAlgorithm.folds: Rabenseifner, recursive doubling), the most of any phase; 0 if none."""
        return max((fold(p.ranks)[1] for p in self.phases
                    if p.algorithm in COLLECTIVE_ALGORITHMS and COLLECTIVE_ALGORITHMS.get(p.algorithm).folds), default=0)

    @property
    def modes(self) -> Spread:
        return self.spread if self.spread is not None else Spread(self.time_s)

    @property
    def inter_bytes(self) -> float:
        """Bytes one node sends across nodes, through its inter link: every phase but the intra
        ones, each phase's sent bytes times the node's workers sending them at once (an inter
        phase run on each worker's share: g of them; a flat ring's one hop out of the node: 1;
        NCCL's tree: what crosses the busiest node's NIC, PhaseCost.node_bytes). On a flat
        network a node is a worker. The phases' bandwidth terms across nodes are these bytes
        over the node's inter bandwidth (topology module doc)."""
        return sum(p.inter_bytes for p in self.phases)

    @property
    def latency_s(self) -> float:
        return sum(p.terms.latency_s for p in self.phases)

    @property
    def bandwidth_s(self) -> float:
        return sum(p.terms.bandwidth_s for p in self.phases)

    @property
    def reduce_s(self) -> float:
        return sum(p.terms.reduce_s for p in self.phases)


CALLS_JOIN = " + "
"""Between the ops of a step whose calls differ in the algorithm column (calls_label); a
hierarchical plan's phases join with a bare "+"."""


def calls_label(ops) -> str:
    """The algorithm column of a step whose ops were priced by different algorithms: each
    (op, label) as "op label", "all_gather ring/simple + all_to_all hier:pairwise+pairwise"."""
    return CALLS_JOIN.join(f"{op} {label}" for op, label in ops)


def label_folds(label: str) -> bool:
    """Whether an algorithm label (CallCost.label: "rabenseifner", "hier:ring+rabenseifner+ring",
    "ring/simple"; or calls_label's, each op's) names a phase algorithm that folds ranks in where they
    are not a power of two (CollectiveAlgorithm.folds): the algorithms declare it, so a listing never
    names them."""
    names = [name for part in label.split(CALLS_JOIN)
             for name in part.split(" ")[-1].split("/")[0].removeprefix("hier:").split("+")]
    return any(name in COLLECTIVE_ALGORITHMS and COLLECTIVE_ALGORITHMS.get(name).folds for name in names)


def algorithms_for(op: str) -> list[str]:
    """Names of the registered algorithms that implement `op`, in registration order."""
    return [name for name, algo in COLLECTIVE_ALGORITHMS.items() if op in algo.ops]


def _resolve(op: str, algorithm: str) -> CollectiveAlgorithm | None:
    """The named algorithm (validated for `op`), or None for auto."""
    if algorithm == AUTO:
        return None
    algo = COLLECTIVE_ALGORITHMS.get(algorithm)  # unknown name -> LionsimError with the list
    if op not in algo.ops:
        raise LionsimError(
            f"algorithm {algorithm!r} does not implement {op}; choose from: {', '.join([AUTO, *algorithms_for(op)])}"
        )
    return algo


def _cheapest(op: str, nbytes: float, group: Group, allowed: tuple[str, ...] | None) -> tuple[str, Terms]:
    best: tuple[str, Terms] | None = None
    for name in algorithms_for(op):
        if allowed is not None and name not in allowed:
            continue
        terms = COLLECTIVE_ALGORITHMS.get(name).cost(op, nbytes, group)
        if best is None or terms.time_s < best[1].time_s:
            best = (name, terms)
    assert best is not None, f"no algorithm registered for {op}"
    return best


def _price_plan(plan: Plan, chosen: CollectiveAlgorithm | None, traits: Traits, dtype: str,
                network: Network) -> list[PhaseCost] | None:
    """Price every phase of a plan; None if the chosen algorithm may not run one of them."""
    out = []
    for phase in plan:
        if chosen is not None and phase.algorithms is not None and chosen.name not in phase.algorithms:
            return None
        group = _as_run(phase, traits, dtype, network)
        if chosen is not None and phase.op in chosen.ops:
            name, terms = chosen.name, chosen.cost(phase.op, phase.nbytes, group)
        else:
            name, terms = _cheapest(phase.op, phase.nbytes, group, phase.algorithms)
        out.append(
            PhaseCost(
                op=phase.op, scope=phase.scope, ranks=phase.group.ranks, nbytes=phase.nbytes, algorithm=name, terms=terms,
                sharers=phase.sharers,
            )
        )
    return out


def _as_run(phase: Phase, traits: Traits, dtype: str, network: Network) -> Group:
    """The phase's group over its link as the library gets it: bandwidth x the op's duplex share
    at this size, capped by the host; reductions at the dtype's rate (traits.py). NCCL's phases
    that cross nodes (its point-to-point sends: an all-to-all, a hierarchical plan's inter phase)
    run over the network's fabric as its own collectives do (fabrics.py): the fabric's share of
    the link, at most its per-node cap (split among the node's streams), and each message at
    least the fabric's LL hop."""
    if traits.ideal:
        return phase.group
    link = phase.group.link
    bandwidth = min(link.bandwidth_Bps * link.efficiency * traits.op(phase.op).share(phase.nbytes),
                    traits.host_GBps * 1e9)
    alpha = link.alpha_s
    if traits.model == "nccl" and phase.scope in ("inter", "intra+inter"):
        fabric = network.nccl_fabric()
        node = network.inter_link()
        streams = max(1.0, node.bandwidth_Bps / link.bandwidth_Bps) if phase.scope == "inter" else 1.0
        bandwidth = min(bandwidth * fabric.share, fabric.cap_GBps * 1e9 / streams)
        hop_us = nccl.HW_LATENCY_US["net"]["ring"][0] if fabric.hop_us is None else fabric.hop_us[0]
        alpha = max(alpha, hop_us * 1e-6)
    rate = traits.reduce_rate(dtype)
    gamma = link.gamma_s_per_byte if rate is None else 1.0 / rate
    return dataclasses.replace(phase.group, link=Link(alpha_s=alpha, bandwidth_Bps=bandwidth,
                                                      gamma_s_per_byte=gamma))


def _check_workers(workers: int) -> None:
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise LionsimError(f"workers = {workers!r} must be an integer >= 1")


def price(call: CollectiveCall, workers: int, network: Network, algorithm: str = AUTO) -> CallCost:
    """Seconds (the mean) and sent bytes of one call among `workers` workers; N = 1 costs nothing."""
    _check_workers(workers)
    traits = network.traits
    pinned = traits.op(call.op).algorithm
    chosen = _resolve(call.op, pinned if algorithm == AUTO and pinned else algorithm)
    if workers == 1:
        return CallCost(time_s=0.0, algorithm="none", sent_bytes=0.0)
    if traits.model == "nccl" and call.scope == "world" and call.op in NCCL_OPS and (
            chosen is None or chosen.name in nccl.ALGORITHMS):
        return _price_nccl(call, workers, network, None if chosen is None else chosen.name)
    options = [_price_plan(plan, chosen, traits, call.dtype, network)
               for plan in plans(call.op, call.nbytes, workers, network, call.scope)]
    priced = [phases for phases in options if phases is not None]
    flat = [phases for phases in priced if any(p.scope == "intra+inter" for p in phases)]
    if chosen is not None and flat:  # a named ring runs flat over every worker (module doc)
        priced = flat
    phases = min(priced, key=lambda ph: sum(p.terms.time_s for p in ph))  # first of equals wins
    names = [p.algorithm for p in phases]
    floor = traits.op(call.op).floor(call.nbytes)
    staging = traits.stage_s(call.op, call.nbytes, _group_ranks(call, workers, network))
    fast = floor + staging + sum(p.terms.time_s for p in phases)
    slow = traits.slow
    p = slow.applies(call.nbytes)
    spread = Spread(fast, slow.extra_s, p, fast * slow.jitter_at(call.nbytes), slow.extra_s * slow.extra_jitter if p else 0.0,
                    slow.calm_at(call.nbytes) if p and slow.calm_probability is not None else None)
    return CallCost(
        time_s=spread.mean_s,
        algorithm=names[0] if len(names) == 1 else "hier:" + "+".join(names),
        sent_bytes=sum(p.terms.sent_bytes for p in phases),
        phases=tuple(phases),
        floor_s=floor,
        staging_s=staging,
        spread=spread,
    )


def _group_ranks(call: CollectiveCall, workers: int, network: Network) -> int:
    """The ranks of the call's own group (calls.py scopes): all N, a node's g, or the M nodes."""
    if call.scope == "intra":
        return network.workers_per_node
    if call.scope == "inter":
        return network.nodes(workers)
    return workers


def _price_nccl(call: CollectiveCall, workers: int, network: Network, algorithm: str | None) -> CallCost:
    """One whole-group call as NCCL's tuning model runs and prices it (nccl.py), plus the
    traits' floor and slow mode as every call pays them."""
    g, m = network.workers_per_node, network.nodes(workers)
    intra = network.intra if g > 1 else None
    choice = nccl.pick(call.op, call.nbytes, workers, m, intra, network.inter_link(), algorithm, network.nccl_fabric(),
                       network.sockets.release, network.nvls)
    scope = "inter" if g == 1 else ("intra" if m == 1 else "intra+inter")
    terms = Terms(latency_s=choice.latency_s, bandwidth_s=choice.bandwidth_s, sent_bytes=choice.sent_bytes)
    phase = PhaseCost(op=call.op, scope=scope, ranks=workers, nbytes=call.nbytes, algorithm=choice.algorithm,
                      terms=terms, node_bytes=choice.node_bytes)
    traits = network.traits
    floor = traits.op(call.op).floor(call.nbytes)
    staging = traits.stage_s(call.op, call.nbytes, workers)
    spread = Spread(floor + staging + terms.time_s, traits.slow.extra_s, traits.slow.applies(call.nbytes))
    return CallCost(time_s=spread.mean_s, algorithm=choice.algorithm, sent_bytes=choice.sent_bytes, phases=(phase,),
                    floor_s=floor, staging_s=staging, spread=spread, protocol=choice.protocol)


def comm_time(calls: list[CollectiveCall], workers: int, network: Network, algorithm: str = AUTO) -> float:
    """Seconds of a list of calls run one after another."""
    return sum(price(call, workers, network, algorithm).time_s for call in calls)


_UNIT_LINK = Link(alpha_s=0.0, bandwidth_Bps=1.0)
"""Sent bytes do not depend on the link; this one only satisfies the signature."""


def wire_bytes(call: CollectiveCall, workers: int) -> float:
    """Bytes one worker sends for `call` with the canonical bandwidth-optimal algorithm (CANONICAL),
    whatever algorithm `price` would pick: a closed-form reference, not the wire_bytes column.

    Flat, any network: ring all-reduce 2(N-1)/N n; ring all-gather / reduce-scatter and
    pairwise all-to-all (N-1)/N n; chain broadcast / reduce n; ps_push n; ps_pull 0; N = 1: 0.
    """
    _check_workers(workers)
    algo = COLLECTIVE_ALGORITHMS.get(CANONICAL[call.op])
    return algo.cost(call.op, call.nbytes, Group(ranks=workers, link=_UNIT_LINK)).sent_bytes
