"""NCCL's own tuning model: which algorithm and protocol NCCL runs a call with, and its time.

NCCL picks, for every call, the (algorithm, protocol) its model predicts fastest (NVIDIA/nccl
`src/graph/tuning.cc`, `ncclTopoTuneModel` builds the table, `ncclTopoGetAlgoTime` reads it;
NCCL_ALGO / NCCL_PROTO override it). lionsim carries that model's structure and constants,
with the network's links standing in for the bandwidths NCCL's topology search finds:

    time(a, p, n) = latency(a, p) + n / algbw(a, p)                       (ncclTopoGetAlgoTime)

- Bus bandwidth. busbw = the narrowest link a channel crosses, all channels together: the
  intra link per GPU inside one node; across nodes min(intra per GPU, inter per node), since
  NCCL's channels spread over every NIC of the node (one ring or tree per channel). Protocol
  refinements: ring LL x 0.5, ring LL128 x 0.92; tree all-reduce x 0.92, then tree LL x 1/3.8,
  tree LL128 x 120/128 across nodes (7/9 in one node).
- Algorithm bandwidth. ring: busbw x N / nsteps (nsteps = 2(N-1) for all-reduce, N-1 for
  all-gather / reduce-scatter, N for broadcast / reduce); tree: busbw x 1/2. So a ring
  all-reduce moves 2(N-1)/N n through the narrowest link, a tree 2n.
- Latency. base(a, p) + per-hop latencies: ring (nsteps - s) x intra + s x inter, s = 2(M-1)
  inter-node steps for all-reduce (M-1 otherwise; 0 in one node); tree
  2 ((N/M - 1) x intra + floor(log2 M) x inter); broadcast / reduce one hop. The hop
  latencies are NCCL's hwLat (NVLink or PCI inside a node, NET across), or the link's own
  alpha where that is larger (NCCL's constants are for InfiniBand; TCP's alpha is larger).
  With one GPU per node NCCL takes the tree's NET latency for the ring too.
- Tree all-reduce's bandwidth x NCCL's treeCorrectionFactor for the size (64 B to 256 MB).
- Two nodes: tuning.cc takes the intra graph's bandwidth when nNodes <= 2, since a double
  binary tree over two nodes (each node the root of one tree, a leaf of the other) moves
  only n through each NIC per direction, not 2n: the tree's algbw there is
  min(busbw_intra x 1/2, inter x the same refinements), which is why NCCL runs a tree on two
  nodes and its busbw can exceed the NICs' (NVIDIA/nccl issue 812, nccl-tests issue 196).

Left out, each because lionsim cannot know it from a network preset: the per-channel caps
(llMaxBws, perChMax*Bws: per GPU generation and channel count), the ring plateau factor
(needs the channel count), the network plugin's per-step overhead (getNetOverhead: per CPU
vendor) and the graph's extra inter-node latency (latencyInter, 0 on plain InfiniBand), CollNet / NVLS (need SHARP switches or NVLink SHARP: set
--traits ideal for the cheapest hierarchical plan, which they approach), PAT (one GPU per
node only, all-gather / reduce-scatter). LL128 is taken as enabled (NCCL's default on
Hopper and Blackwell over NVLink); an all-to-all is point-to-point sends, no tuning model
(lionsim's own plans price it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lionsim.network.link import Link

ALGORITHMS = ("tree", "ring")
PROTOCOLS = ("ll", "ll128", "simple")
NCCL_OPS = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce")
"""Ops NCCL's tuning model prices (ring for all; tree for all_reduce only)."""

BASE_LATENCY_US = {"tree": (6.8, 14.0, 8.4), "ring": (6.6, 14.0, 8.4)}
"""tuning.cc baseLatencies, per protocol (LL, LL128, Simple), microseconds."""
HW_LATENCY_US = {
    "nvlink": {"tree": (0.6, 1.25, 4.0), "ring": (0.6, 1.9, 3.4)},
    "pci": {"tree": (1.0, 1.9, 4.0), "ring": (1.0, 2.5, 5.7)},
    "net": {"tree": (5.0, 8.5, 14.0), "ring": (2.7, 4.0, 14.0)},
}
"""tuning.cc hwLatencies: per hop, per hardware, algorithm and protocol, microseconds."""
TREE_CORRECTION = {
    "ll": (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0),
    "ll128": (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0),
    "simple": (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9),
}
"""tuning.cc treeCorrectionFactor, indexed by floor(log2(n / 64)) for 0 <= index < 23."""
NVLINK_GBPS = 100.0
"""An intra link at least this fast (GB/s per GPU) is NVLink for the hop latencies; slower is PCIe."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Choice:
    """One (algorithm, protocol) as NCCL's model prices it for one call."""

    algorithm: str
    protocol: str
    latency_s: float
    bandwidth_s: float
    sent_bytes: float
    """Bytes the busiest rank sends: ring 2(N-1)/N n for all-reduce, (N-1)/N n for gathers,
    n for broadcast / reduce; tree 2n."""

    @property
    def time_s(self) -> float:
        return self.latency_s + self.bandwidth_s


def _nsteps(op: str, ranks: int) -> int:
    if op == "all_reduce":
        return 2 * (ranks - 1)
    if op in ("all_gather", "reduce_scatter"):
        return ranks - 1
    return ranks


def _bus_GBps(intra: Link | None, inter: Link, nodes: int) -> float:
    """What all channels of one GPU get through the narrowest link they cross, GB/s."""
    per_gpu = math.inf if intra is None else intra.bandwidth_Bps * intra.efficiency
    node = inter.bandwidth_Bps * inter.efficiency
    return (per_gpu if nodes == 1 else min(per_gpu, node)) / 1e9


def _bus_refined(algorithm: str, protocol: str, op: str, bus: float, nodes: int) -> float:
    """tuning.cc's "various model refinements", without the per-channel caps (module doc)."""
    if algorithm == "ring":
        return bus * {"ll": 0.5, "ll128": 0.92, "simple": 1.0}[protocol]
    if op == "all_reduce":
        bus *= 0.92
    if protocol == "ll":
        bus /= 3.8
    elif protocol == "ll128":
        bus *= 7.0 / 9.0 if nodes == 1 else 120.0 / 128.0
    return bus


def choices(op: str, nbytes: float, ranks: int, nodes: int, intra: Link | None, inter: Link) -> list[Choice]:
    """Every (algorithm, protocol) NCCL's model prices for `op` on `nbytes` (calls.py convention:
    the vector for all-reduce, the whole output for gathers) among `ranks` GPUs on `nodes` nodes.
    `intra`: the link per GPU inside a node (None: one GPU per node); `inter`: per node."""
    if op not in NCCL_OPS:
        raise ValueError(f"NCCL's tuning model does not price {op!r}")
    ppn = ranks // nodes
    intra_hw = "nvlink" if intra is not None and intra.bandwidth_Bps * intra.efficiency >= NVLINK_GBPS * 1e9 else "pci"
    bus = _bus_GBps(intra if ppn > 1 else None, inter, nodes)
    nsteps = _nsteps(op, ranks)
    out = []
    for algorithm in ALGORITHMS:
        if algorithm == "tree" and op != "all_reduce":
            continue
        for i, protocol in enumerate(PROTOCOLS):
            busbw = _bus_refined(algorithm, protocol, op, bus, nodes)
            algbw = busbw * (ranks / nsteps if algorithm == "ring" else 0.5)
            if algorithm == "tree" and nodes == 2 and ppn > 1:  # n per NIC direction (module doc)
                nic = _bus_refined(algorithm, protocol, op, inter.bandwidth_Bps * inter.efficiency / 1e9, nodes)
                algbw = min(_bus_refined(algorithm, protocol, op, _bus_GBps(intra, inter, 1), nodes) * 0.5, nic)
            if algorithm == "tree":
                index = int(math.log2(nbytes / 64)) if nbytes >= 64 else -1
                if 0 <= index < len(TREE_CORRECTION[protocol]):
                    algbw *= TREE_CORRECTION[protocol][index]
            # hop latencies: NCCL's, or the link's own alpha where larger (module doc)
            intra_us = HW_LATENCY_US[intra_hw][algorithm][i]
            if intra is not None:
                intra_us = max(intra_us, intra.alpha_s * 1e6)
            net_table = "tree" if ppn == 1 else algorithm
            inter_us = max(HW_LATENCY_US["net"][net_table][i], inter.alpha_s * 1e6)
            if nodes == 1:
                inter_us = intra_us
            latency_us = BASE_LATENCY_US[algorithm][i]
            if algorithm == "ring":
                if op in ("broadcast", "reduce"):
                    latency_us += inter_us if nodes > 1 else intra_us
                else:
                    inter_steps = 0 if nodes == 1 else (2 * (nodes - 1) if op == "all_reduce" else nodes - 1)
                    latency_us += (nsteps - inter_steps) * intra_us + inter_steps * inter_us
                sent = {"all_reduce": 2 * (ranks - 1) / ranks * nbytes}.get(
                    op, (ranks - 1) / ranks * nbytes if op in ("all_gather", "reduce_scatter") else nbytes)
            else:
                latency_us += 2 * ((ppn - 1) * intra_us + (nodes.bit_length() - 1) * inter_us)
                sent = 2 * nbytes
            out.append(Choice(algorithm=algorithm, protocol=protocol, latency_s=latency_us * 1e-6,
                              bandwidth_s=nbytes / (algbw * 1e9), sent_bytes=sent))
    return out


def pick(op: str, nbytes: float, ranks: int, nodes: int, intra: Link | None, inter: Link,
         algorithm: str | None = None) -> Choice:
    """What NCCL runs: the fastest choice by its model (of `algorithm`'s, when one is named;
    ties go to the first in tuning.cc's order, tree before ring, LL before LL128 before Simple)."""
    options = [c for c in choices(op, nbytes, ranks, nodes, intra, inter)
               if algorithm is None or c.algorithm == algorithm]
    return min(options, key=lambda c: c.time_s)
