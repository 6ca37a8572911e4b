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
  tree LL128 x 120/128 across nodes (7/9 in one node). Across nodes LL's busbw is at most
  llMaxBws: 39 GB/s on two nodes, 20.4 beyond (the Intel-host row; AMD hosts' is 22.5 / 19.0).
- Algorithm bandwidth. ring: busbw x N / nsteps (nsteps = 2(N-1) for all-reduce, N-1 for
  all-gather / reduce-scatter, N for broadcast / reduce); tree: busbw x 1/2. So a ring
  all-reduce moves 2(N-1)/N n through the narrowest link, a tree 2n.
- Latency. base(a, p) + per-hop latencies: ring (nsteps - s) x intra + s x inter, s = 2(M-1)
  inter-node steps for all-reduce (M-1 otherwise; 0 in one node); tree
  2 ((N/M - 1) x intra + floor(log2 M) x inter); broadcast / reduce one hop. The hop
  latencies are NCCL's hwLat (NVLink or PCI inside a node, NET across; with one GPU per node
  the tree's NET latency for the ring too). Across nodes a ring's intra hops cost at least the
  network plug-in's post overhead (getNetOverhead: 1 us on Intel hosts, x3 for Simple) and a
  ring Simple all-reduce's latency is x1.4 (the "plateau effect of ring", Ampere and later).
- Tree all-reduce's bandwidth x NCCL's treeCorrectionFactor for the size (64 B to 256 MB).
- Two nodes: tuning.cc takes the intra graph's bandwidth when nNodes <= 2, since a double
  binary tree over two nodes (each node the root of one tree, a leaf of the other) moves
  only n through each NIC per direction, not 2n: the tree's algbw there is
  min(busbw_intra x 1/2, inter x the same refinements), which is why NCCL runs a tree on two
  nodes and its busbw can exceed the NICs' (NVIDIA/nccl issue 812, nccl-tests issue 196). The
  rule depends on the NCCL version a network states (ncclversion.py): tuning.cc has had it since
  v2.5.6-1, its first release; NCCL 2.4 (no tuning.cc: src/init.cc ncclTreeThreshold) doubled the
  tree's bandwidth on two nodes only where the GPUs have NVLink. So before 2.5.6 the rule holds on
  NVLink nodes (an intra link stated NVLink, or of at least NVLINK_GBPS: Link.nvlink), and
  elsewhere the tree is ranked by the inter link on two nodes as on more, which puts a large call
  on the ring. 2.4's other constants
  (a ring at 5 GB/s a channel, a tree at 3/4 of it on NVLink and 2/3 on PCIe, 6 / 4 / 15 us hop
  latencies) are not carried: they choose as today's do on the sweeps lionsim.published checks
  (NVIDIA/nccl issue 209's NCCL 2.4.7 runs: a tree at every size on two NVLink nodes, a ring from
  at most 31 MB on four).

NVLink SHARP (NVLS). On nodes whose NVSwitch reduces and multicasts (gen3 on: Hopper, Blackwell),
NCCL adds NVLS (one node) and NVLS Tree (across nodes: NVLS in each node, a tree over the nodes on
the node-reduced data), Simple only, all-reduce here (tuning.cc also ranks NVLS for all-gather and
reduce-scatter in one node: not carried). A network declares them (Network.nvls: the GPUs'
generation, `nvls = "hopper"` in a profile; dgx-h100 does), since neither the links nor the NCCL
version say whether the switch has SHARP; NCCL 2.17.1 brought NVLS, 2.18.1 NVLS Tree (ncclversion.py),
and tuning.cc disables NVLS Tree on one node and NVLS across nodes without CollNet. The model is
today's (v2.28.3 on; ncclversion.py says what 2.18-2.27 ranked with), in tuning.cc's terms for c
channels, one a GPU (ncclTopoCompute: at most one NVLS head a GPU; one NIC each across nodes):

    a channel's busbw = min(bwIntra x nvlsEfficiency x (c-1)/c x 2, bwInter (x 2 on <= 2 nodes, NVLS Tree),
                            perChMaxNVLSTreeBw)                       (ncclTopoTuneModel, NVLS branch)
    algbw = c x busbw x N / (2 (N - 1)),  latency = NVLink 25 us + 2 log2(M) x NET 20.9 us (NVLS: 25 in one node)

nvlsEfficiency 0.85 Hopper, 0.74 Blackwell; perChMaxNVLSTreeBws 57.7 / 45.5 (Hopper, two nodes /
more), 96 / 80 (Blackwell); baseLatencies 0; on Blackwell with x86 hosts NVLS Tree's bandwidth x
treeCorrectionFactor's Simple row too (ncclTopoGetAlgoTime). The links stand in for the NVLS
graph: bwInter = the node's link / c; bwIntra = the GPU's link / (c + 1), since NVLS's search
(ncclTopoSearchTryNvls) loads each GPU's NVLink once a channel and its own head's twice (it does not
carry the search's rounding to its speed steps); in one node the search raises bwInter to twice
bwIntra, so the NVLink term binds. Bytes: NVLS Tree's inter part is a tree over the nodes of the
node-reduced n, one channel a NIC, so a node's NICs carry n per direction on two nodes (root of one
tree, leaf of the other: hence bwInter x 2) and 2n beyond, as the tree; a GPU sends n into the
switch, its 1/G slice of the result for multicast and its head's 1/G of the node's inter bytes.

Choosing is not predicting. NCCL ranks the choices with these constants, written for
InfiniBand; across nodes real calls are slower, by how much depending on the transport. So a
choice carries two times: `model_s`, NCCL's own estimate, which `pick` ranks by (what NCCL
runs), and the priced latency and bandwidth, which replace the NET hop latencies and the inter
link's bandwidth with the network's fabric (fabrics.py: fitted to published nccl-tests sweeps
per transport; the fabric "tuning" prices with NCCL's constants unchanged). Priced hops are
never below the links' own alpha. NCCL ranks with the link's rate, as its topology search sets
the network's bandwidth from the NIC's reported speed (src/graph/topo.cc: the plug-in's `speed`;
the socket transport's ncclNetSocketGetProperties reads /sys/class/net/<nic>/speed), not with
what the transport moves: so over sockets a NIC faster than the cap can flip a call to a tree the
fabric prices slower than the ring it replaced, and the call slows down (docs/clusters.md).

Left out, each because lionsim cannot know it from a network preset: the ring's and tree's
per-channel caps (perCh*Bws: per GPU generation and channel count) and the single-node llMaxBws row
(per GPU generation), the graph's extra inter-node latency (latencyInter, 0 on plain InfiniBand),
CollNet and NVLS across nodes, which needs it (SHARP in the InfiniBand switches: set --traits ideal
for the cheapest hierarchical plan, which it approaches), PAT (one GPU per node only, all-gather /
reduce-scatter). LL128 is taken as enabled where the fabric allows it and the GPUs of a node
share NVLink, as NCCL enables it by default (src/graph/tuning.cc: typeIntra <= PATH_NVB, on
Volta, Ampere, Hopper and Blackwell; on PCIe nodes it is off: "Other cases are not tested and may
cause silent data corruption"); the GPU generation is not checked (a device preset or file states
none). An all-to-all is point-to-point sends, no tuning model (lionsim's own plans price it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lionsim.network.fabrics import TUNING, Fabric
from lionsim.network.link import Link
from lionsim.network.ncclversion import NVLS_SINCE, NVLS_TREE_SINCE, TWO_NODE_RULE_SINCE, Release

ALGORITHMS = ("tree", "ring", "nvls", "nvls_tree")
"""In tuning.cc's order (NCCL_ALGO_TREE, RING, ..., NVLS, NVLS_TREE), which breaks ties."""
NVLS_ALGORITHMS = ("nvls", "nvls_tree")
PROTOCOLS = ("ll", "ll128", "simple")
NCCL_OPS = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce")
"""Ops NCCL's tuning model prices (ring for all; tree for all_reduce only)."""
RUNS = tuple((op, ALGORITHMS if op == "all_reduce" else ("ring",)) for op in NCCL_OPS)
"""What NCCL runs each op it prices by (`choices`; NVLS where the nodes have NVLink SHARP): the
nccl traits' `runs`, which --algorithm may name (lionsim.estimate.library_checks)."""

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
LL_MAX_BUS_GBPS = (39.0, 20.4)
"""tuning.cc llMaxBws across nodes, Intel-host row: LL's busbw cap on two nodes, on more."""
NET_OVERHEAD_US = 1.0
"""tuning.cc getNetOverhead on Intel x86 hosts (2.0 on AMD): a ring intra hop's floor across nodes, x3 for Simple."""
RING_PLATEAU = 1.4
"""tuning.cc's "plateau effect of ring": a ring Simple all-reduce's latency across nodes (1.9 before Ampere)."""

NVLS_EFFICIENCY = {"hopper": 0.85, "blackwell": 0.74}
"""tuning.cc nvlsEfficiency, per compute capability: the part of a channel's NVLink bandwidth NVLS reaches."""
NVLS_TREE_MAX_CHANNEL_GBPS = {"hopper": (57.7, 45.5), "blackwell": (96.0, 80.0)}
"""tuning.cc perChMaxNVLSTreeBws: one NVLS Tree channel's busbw cap on two nodes, on more (one node: 0,
NVLS Tree is disabled there)."""
NVLS_HW_LATENCY_US = {"nvls": (25.0, 18.0), "nvls_tree": (25.0, 20.9)}
"""tuning.cc hwLatencies, Simple (NVLS runs no other protocol): (NVLink, NET) per algorithm, microseconds;
their baseLatencies are 0."""
NVLS_TREE_CORRECTION = TREE_CORRECTION["simple"] + (0.9,)
"""tuning.cc treeCorrectionFactor's Simple row as ncclTopoGetAlgoTime reads it for NVLS Tree (24 entries:
logSize < 24), only on Blackwell (minCompCap >= 100) with x86 hosts."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Choice:
    """One (algorithm, protocol) as NCCL's model ranks it and as lionsim prices it for one call."""

    algorithm: str
    protocol: str
    model_s: float
    """NCCL's own estimate (tuning.cc constants): what `pick` ranks by."""
    latency_s: float
    """Priced: the fabric's hop latencies (module doc)."""
    bandwidth_s: float
    """Priced: the bytes over the bandwidth the fabric moves."""
    sent_bytes: float
    """Bytes the busiest rank sends: ring 2(N-1)/N n for all-reduce, (N-1)/N n for gathers,
    n for broadcast / reduce; tree 2n; NVLS / NVLS Tree n + (n + node_bytes) / G (module doc)."""
    node_bytes: float
    """Bytes the busiest node sends through its inter link per direction, what `bandwidth_s`
    moves across nodes (_node_sent): a ring's one hop out of the node carries its sent_bytes; a
    tree and NVLS Tree n on two nodes, 2n beyond; 0 in one node."""

    @property
    def time_s(self) -> float:
        return self.latency_s + self.bandwidth_s


def _nsteps(op: str, ranks: int) -> int:
    if op == "all_reduce":
        return 2 * (ranks - 1)
    if op in ("all_gather", "reduce_scatter"):
        return ranks - 1
    return ranks


def _bus_refined(algorithm: str, protocol: str, op: str, bus: float, nodes: int) -> float:
    """tuning.cc's "various model refinements", without the per-channel caps (module doc)."""
    ll_max = math.inf if nodes == 1 else LL_MAX_BUS_GBPS[0 if nodes == 2 else 1]
    if algorithm == "ring":
        return {"ll": min(ll_max, bus * 0.5), "ll128": bus * 0.92, "simple": bus}[protocol]
    if op == "all_reduce":
        bus *= 0.92
    if protocol == "ll":
        bus = min(bus / 3.8, ll_max)
    elif protocol == "ll128":
        bus *= 7.0 / 9.0 if nodes == 1 else 120.0 / 128.0
    return bus


def two_node_rule(version: Release | None, nvlink: bool) -> bool:
    """Whether NCCL `version` (None: today's) ranks a tree over two nodes by the intra link: from
    v2.5.6-1 on always (src/graph/tuning.cc), before it only on NVLink GPUs (NCCL 2.4's src/init.cc
    ncclTreeThreshold: `if (nnodes == 2) treebw *= 2` under `nvlink`); module doc, ncclversion.py."""
    return version is None or version >= TWO_NODE_RULE_SINCE or nvlink


def _algbw_GBps(op: str, algorithm: str, protocol: str, nbytes: float, ranks: int, nodes: int,
                intra_GBps: float, inter_GBps: float, two_node: bool = True) -> float:
    """GB/s of the algorithm's bandwidth term: busbw through the narrowest link, refined; `two_node`:
    whether the two-node rule holds (two_node_rule)."""
    ppn = ranks // nodes
    per_gpu = math.inf if ppn == 1 else intra_GBps
    bus = per_gpu if nodes == 1 else min(per_gpu, inter_GBps)
    algbw = _bus_refined(algorithm, protocol, op, bus, nodes) * (ranks / _nsteps(op, ranks) if algorithm == "ring" else 0.5)
    if algorithm == "tree" and nodes == 2 and ppn > 1 and two_node:  # n per NIC direction (module doc)
        algbw = min(_bus_refined(algorithm, protocol, op, intra_GBps, nodes) * 0.5,
                    _bus_refined(algorithm, protocol, op, inter_GBps, nodes))
    if algorithm == "tree":
        index = int(math.log2(nbytes / 64)) if nbytes >= 64 else -1
        if 0 <= index < len(TREE_CORRECTION[protocol]):
            algbw *= TREE_CORRECTION[protocol][index]
    return algbw


def _latency_us(op: str, algorithm: str, protocol: str, ranks: int, nodes: int, intra_us: float,
                inter_us: float) -> float:
    """Base latency plus the hops (module doc), given one intra and one inter hop's latency."""
    i = PROTOCOLS.index(protocol)
    latency = BASE_LATENCY_US[algorithm][i]
    if algorithm == "tree":
        return latency + 2 * ((ranks // nodes - 1) * intra_us + (nodes.bit_length() - 1) * inter_us)
    if op in ("broadcast", "reduce"):
        return latency + (inter_us if nodes > 1 else intra_us)
    if nodes == 1:
        return latency + _nsteps(op, ranks) * intra_us
    intra_us = max(intra_us, NET_OVERHEAD_US * (3 if protocol == "simple" else 1))
    inter_steps = 2 * (nodes - 1) if op == "all_reduce" else nodes - 1
    latency += (_nsteps(op, ranks) - inter_steps) * intra_us + inter_steps * inter_us
    return latency * (RING_PLATEAU if op == "all_reduce" and protocol == "simple" else 1.0)


def nvls_algorithms(op: str, ranks: int, nodes: int, nvls: str, version: Release | None) -> tuple[str, ...]:
    """The NVLink SHARP algorithms NCCL `version` (None: today's) enables for `op` on nodes of generation
    `nvls` ("": none; module doc, "NVLink SHARP"): NVLS in one node, NVLS Tree across nodes, both for
    all-reduce only here and with at least two GPUs a node (two channels)."""
    if not nvls or op != "all_reduce" or ranks // nodes < 2:
        return ()
    if nodes == 1:
        return ("nvls",) if version is None or version >= NVLS_SINCE else ()
    return ("nvls_tree",) if version is None or version >= NVLS_TREE_SINCE else ()


def _nvls_algbw_GBps(algorithm: str, nvls: str, nbytes: float, ranks: int, nodes: int, intra_GBps: float,
                     inter_GBps: float) -> float:
    """GB/s of an NVLS or NVLS Tree all-reduce's bandwidth term (module doc, "NVLink SHARP"): one channel a
    GPU of the node, each channel's NVLink bwIntra the GPU's link / (channels + 1), bwInter the node's link /
    channels; a channel's busbw min(bwIntra x nvlsEfficiency x (c - 1) / c x 2, bwInter (x 2 on two nodes),
    perChMaxNVLSTreeBw), all channels together x N / (2 (N - 1))."""
    channels = ranks // nodes
    intra = intra_GBps / (channels + 1) * NVLS_EFFICIENCY[nvls] * (channels - 1) / channels * 2.0
    bw = intra
    if nodes > 1:
        inter = inter_GBps / channels * (2.0 if nodes <= 2 and algorithm == "nvls_tree" else 1.0)
        bw = min(intra, inter, NVLS_TREE_MAX_CHANNEL_GBPS[nvls][0 if nodes == 2 else 1])
    algbw = channels * bw * ranks / (2 * (ranks - 1))
    index = int(math.log2(nbytes / 64)) if nbytes >= 64 else -1
    if algorithm == "nvls_tree" and nvls == "blackwell" and 0 <= index < len(NVLS_TREE_CORRECTION):
        algbw *= NVLS_TREE_CORRECTION[index]
    return algbw


def _nvls_latency_us(nodes: int, intra_us: float, inter_us: float) -> float:
    """One NVLink SHARP hop inside the node plus, across nodes, 2 log2(M) network hops (NVLS Tree)."""
    return intra_us + 2 * (nodes.bit_length() - 1) * inter_us


def _nvls_choice(algorithm: str, nvls: str, nbytes: float, ranks: int, nodes: int, intra: Link, inter: Link,
                 inter_GBps: float, moved_GBps: float, fabric: Fabric) -> Choice:
    """NVLS or NVLS Tree for one all-reduce: NCCL's estimate and lionsim's price (module doc)."""
    intra_GBps = intra.bandwidth_Bps * intra.efficiency / 1e9
    intra_us, net_us = NVLS_HW_LATENCY_US[algorithm]
    model_s = _nvls_latency_us(nodes, intra_us, net_us) * 1e-6 + nbytes / (
        _nvls_algbw_GBps(algorithm, nvls, nbytes, ranks, nodes, intra_GBps, inter_GBps) * 1e9)
    priced_intra = max(intra_us, intra.alpha_s * 1e6)
    priced_net = max(net_us if fabric.hop_us is None else fabric.hop_us[PROTOCOLS.index("simple")],
                     inter.alpha_s * 1e6)
    node_bytes = _node_sent("all_reduce", algorithm, nbytes, ranks, nodes)
    return Choice(algorithm=algorithm, protocol="simple", model_s=model_s,
                  latency_s=_nvls_latency_us(nodes, priced_intra, priced_net) * 1e-6,
                  bandwidth_s=nbytes / (_nvls_algbw_GBps(algorithm, nvls, nbytes, ranks, nodes, intra_GBps,
                                                         moved_GBps) * 1e9),
                  sent_bytes=nbytes + (nbytes + node_bytes) / (ranks // nodes), node_bytes=node_bytes)


def _sent(op: str, algorithm: str, nbytes: float, ranks: int) -> float:
    if algorithm == "tree":
        return 2 * nbytes
    if op == "all_reduce":
        return 2 * (ranks - 1) / ranks * nbytes
    return (ranks - 1) / ranks * nbytes if op in ("all_gather", "reduce_scatter") else nbytes


def _node_sent(op: str, algorithm: str, nbytes: float, ranks: int, nodes: int) -> float:
    """Bytes through the busiest node's inter link per direction. A ring over every GPU (nodes
    contiguous) leaves each node by one hop, which carries what a rank sends. A double binary tree
    of n / 2 a tree: an inner node with two children sends n / 2 up and n / 2 to each child in
    one tree, n / 2 up as a leaf in the other, 2n (busbw x 1/2, the model's time); on two nodes
    each node is the root of one tree (n / 2 down) and a leaf of the other (n / 2 up), n (the
    two-node rule, module doc). With one GPU per node tuning.cc ranks a tree on two nodes by the
    NIC (its intra graph is the NIC), 2n, and lionsim prices it so: the bytes follow the price."""
    if nodes == 1:
        return 0.0
    if algorithm == "nvls_tree":  # the node-reduced n over a tree of nodes, as the tree's
        return nbytes if nodes == 2 else 2 * nbytes
    if algorithm == "tree" and nodes == 2 and ranks // nodes > 1:
        return nbytes
    return _sent(op, algorithm, nbytes, ranks)


def choices(op: str, nbytes: float, ranks: int, nodes: int, intra: Link | None, inter: Link,
            fabric: Fabric | None = None, version: Release | None = None, nvls: str = "") -> list[Choice]:
    """Every (algorithm, protocol) NCCL's model ranks for `op` on `nbytes` (calls.py convention:
    the vector for all-reduce, the whole output for gathers) among `ranks` GPUs on `nodes` nodes,
    each priced on `fabric` (None: tuning, NCCL's constants). `intra`: the link per GPU inside a
    node (None: one GPU per node); `inter`: per node; `version`: the NCCL release (None: today's);
    `nvls`: the nodes' NVLink SHARP generation (NVLS_GENERATIONS; "": none)."""
    if op not in NCCL_OPS:
        raise ValueError(f"NCCL's tuning model does not price {op!r}")
    fabric = fabric or TUNING
    ppn = ranks // nodes
    link_GBps = math.inf if intra is None else intra.bandwidth_Bps * intra.efficiency / 1e9
    intra_hw = "nvlink" if intra is not None and intra.nvlink else "pci"
    intra_GBps = math.inf if ppn == 1 else link_GBps
    inter_GBps = inter.bandwidth_Bps * inter.efficiency / 1e9
    moved_GBps = min(inter_GBps * fabric.share, fabric.cap_GBps)
    two_node = two_node_rule(version, intra_hw == "nvlink")
    out = []
    for algorithm in ("tree", "ring"):
        if algorithm == "tree" and op != "all_reduce":
            continue
        for i, protocol in enumerate(PROTOCOLS):
            if protocol not in fabric.protocols or (protocol == "ll128" and ppn > 1 and intra_hw != "nvlink"):
                continue  # NCCL enables LL128 only where a node's GPUs share NVLink (module doc)
            intra_us = HW_LATENCY_US[intra_hw][algorithm][i]
            net_us = HW_LATENCY_US["net"]["tree" if ppn == 1 else algorithm][i]
            if nodes == 1:
                net_us = intra_us
            model_us = _latency_us(op, algorithm, protocol, ranks, nodes, intra_us, net_us)
            model_s = model_us * 1e-6 + nbytes / (
                _algbw_GBps(op, algorithm, protocol, nbytes, ranks, nodes, intra_GBps, inter_GBps, two_node) * 1e9)
            # priced: the fabric's hops, never below the links' alpha; the bandwidth it moves
            priced_intra = intra_us if intra is None else max(intra_us, intra.alpha_s * 1e6)
            priced_net = priced_intra if nodes == 1 else max(
                net_us if fabric.hop_us is None else fabric.hop_us[i], inter.alpha_s * 1e6)
            latency_us = _latency_us(op, algorithm, protocol, ranks, nodes, priced_intra, priced_net)
            moved = inter_GBps if nodes == 1 else moved_GBps * fabric.protocol_share[i]
            # a tree over two nodes moves n a NIC direction whatever the version ranked it by
            bandwidth_s = nbytes / (_algbw_GBps(op, algorithm, protocol, nbytes, ranks, nodes, intra_GBps, moved) * 1e9)
            out.append(Choice(algorithm=algorithm, protocol=protocol, model_s=model_s, latency_s=latency_us * 1e-6,
                              bandwidth_s=bandwidth_s, sent_bytes=_sent(op, algorithm, nbytes, ranks),
                              node_bytes=_node_sent(op, algorithm, nbytes, ranks, nodes)))
    for algorithm in nvls_algorithms(op, ranks, nodes, nvls, version):
        assert intra is not None  # two GPUs a node at least
        out.append(_nvls_choice(algorithm, nvls, nbytes, ranks, nodes, intra, inter, inter_GBps,
                                moved_GBps * fabric.protocol_share[PROTOCOLS.index("simple")], fabric))
    return out


def pick(op: str, nbytes: float, ranks: int, nodes: int, intra: Link | None, inter: Link,
         algorithm: str | None = None, fabric: Fabric | None = None, version: Release | None = None,
         nvls: str = "") -> Choice:
    """What NCCL `version` (None: today's) runs: the fastest choice by its own model (of
    `algorithm`'s, when one is named; ties go to the first in tuning.cc's order, tree before ring
    before NVLS before NVLS Tree, LL before LL128 before Simple), priced on `fabric`; `nvls`: as
    `choices`."""
    options = [c for c in choices(op, nbytes, ranks, nodes, intra, inter, fabric, version, nvls)
               if algorithm is None or c.algorithm == algorithm]
    return min(options, key=lambda c: c.model_s)
