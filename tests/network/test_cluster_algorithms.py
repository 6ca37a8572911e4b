"""All-reduce across GPU nodes: a flat ring, the hierarchical plan and NCCL's own choice, each
against its closed form written here from the formulas (REFERENCE.md 5 and NVIDIA/nccl
src/graph/tuning.cc), at 2, 4 and 16 nodes of 8 GPUs."""

from __future__ import annotations

import math

import pytest

from lionsim.network import CollectiveCall, Link, Network, price
from lionsim.network.fabrics import SOCKETS
from lionsim.network.libraries import GLOO, NCCL
from lionsim.network.presets import NETWORKS
from lionsim.network.traits import IDEAL

G = 8
INTRA = dict(alpha=1e-6, bw=380e9)  # NVLink4, per GPU
INTER = dict(alpha=2e-6, bw=48e9)  # one NDR NIC per node
N_BYTES = 2e9  # a 1B-parameter model's bf16 gradients


def cluster(traits, inter_bw=INTER["bw"], inter_alpha=INTER["alpha"], fabric="tuning") -> Network:
    """8 GPUs a node; NCCL's calls priced with tuning.cc's constants unless another fabric is named."""
    return Network(name="c", workers_per_node=G, traits=traits, fabric=fabric,
                   intra=Link(alpha_s=INTRA["alpha"], bandwidth_Bps=INTRA["bw"]),
                   inter=Link(alpha_s=inter_alpha, bandwidth_Bps=inter_bw))


@pytest.mark.parametrize("nodes", [2, 4, 16])
def test_a_named_ring_is_flat_over_every_gpu(nodes):
    n_ranks = G * nodes
    cost = price(CollectiveCall("all_reduce", N_BYTES), n_ranks, cluster(IDEAL), "ring")
    # every ring step waits for its slowest hop: the NIC, which carries all channels
    expected = (2 * (n_ranks - 1) * max(INTRA["alpha"], INTER["alpha"])
                + 2 * (n_ranks - 1) / n_ranks * N_BYTES / min(INTRA["bw"], INTER["bw"]))
    assert cost.algorithm == "ring" and cost.time_s == pytest.approx(expected, rel=1e-12)
    assert cost.sent_bytes == pytest.approx(2 * (n_ranks - 1) / n_ranks * N_BYTES)


@pytest.mark.parametrize("nodes", [2, 4, 16])
def test_auto_on_the_ideal_library_prices_the_hierarchical_plan(nodes):
    # latency-free links, so every bandwidth-optimal algorithm ties and the closed form is one:
    # intra reduce-scatter + inter all-reduce of n/G by G streams sharing the NIC + intra all-gather
    # (10 GbE across nodes, where the hierarchical plan is cheaper than the flat ring)
    net = Network(name="c", workers_per_node=G, intra=Link(alpha_s=0.0, bandwidth_Bps=INTRA["bw"]),
                  inter=Link(alpha_s=0.0, bandwidth_Bps=1.17e9))
    cost = price(CollectiveCall("all_reduce", N_BYTES), G * nodes, net)
    intra = 2 * (G - 1) / G * N_BYTES / INTRA["bw"]
    inter = 2 * (nodes - 1) / nodes * (N_BYTES / G) / (1.17e9 / G)
    assert cost.algorithm.startswith("hier:") and cost.time_s == pytest.approx(intra + inter, rel=1e-9)


# tuning.cc constants, typed from the source: base latency and per-hop latency (us) per
# protocol (LL, LL128, Simple); the protocols' bandwidth factors for ring and (multi-node) tree.
BASE = {"tree": (6.8, 14.0, 8.4), "ring": (6.6, 14.0, 8.4)}
NVL = {"tree": (0.6, 1.25, 4.0), "ring": (0.6, 1.9, 3.4)}
NET = {"tree": (5.0, 8.5, 14.0), "ring": (2.7, 4.0, 14.0)}
RING_FACTOR = (0.5, 0.92, 1.0)
TREE_FACTOR = (0.92 / 3.8, 0.92 * 120 / 128, 0.92)
LL_MAX = {2: 39e9, 4: 20.4e9, 16: 20.4e9}  # llMaxBws across nodes, Intel hosts: LL's busbw cap
NET_OVERHEAD = (1.0, 1.0, 3.0)  # a ring's intra hop across nodes is at least this (us), per protocol
PLATEAU = 1.4  # ring Simple all-reduce latency across nodes
TREE_CORRECTION = (  # treeCorrectionFactor per protocol, by floor(log2(n / 64))
    (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0),
    (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0),
    (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9))


def nccl_closed_forms(n: float, nodes: int, hops=NET, inter_bw=INTER["bw"], intra_floor=0.0) -> dict[tuple[str, int], float]:
    """Seconds of each (algorithm, protocol) by NCCL's model for an all-reduce over nodes x G GPUs,
    with `hops` the inter-node hop latencies (tuning.cc's NET row, or a fabric's: the same for
    tree and ring), `inter_bw` the bytes a second the NIC moves and `intra_floor` the intra
    link's alpha in us (priced hops are never below it; NCCL's own choice knows no alpha)."""
    ranks, bus = G * nodes, min(INTRA["bw"], inter_bw)
    out = {}
    for p in range(3):
        ring_net = hops["ring"][p] if isinstance(hops, dict) else hops[p]
        tree_net = hops["tree"][p] if isinstance(hops, dict) else hops[p]
        intra_ring = max(NVL["ring"][p], NET_OVERHEAD[p], intra_floor)
        ring_lat = BASE["ring"][p] + (2 * (ranks - 1) - 2 * (nodes - 1)) * intra_ring + 2 * (nodes - 1) * ring_net
        ring_bus = min(bus * RING_FACTOR[p], LL_MAX[nodes]) if p == 0 else bus * RING_FACTOR[p]
        out[("ring", p)] = ring_lat * (PLATEAU if p == 2 else 1) * 1e-6 + 2 * (ranks - 1) / ranks * n / ring_bus
        tree_lat = BASE["tree"][p] + 2 * ((G - 1) * max(NVL["tree"][p], intra_floor) + math.log2(nodes) * tree_net)
        # a tree moves 2n through the narrowest link; on two nodes only n through each NIC direction
        # (each node the root of one tree, a leaf of the other); corrected by size below 512 MB
        def tree_bus(b):
            return min(b * TREE_FACTOR[p], LL_MAX[nodes]) if p == 0 else b * TREE_FACTOR[p]
        algbw = tree_bus(bus) / 2
        if nodes == 2:
            algbw = min(tree_bus(INTRA["bw"]) / 2, tree_bus(inter_bw))
        index = int(math.log2(n / 64)) if n >= 64 else -1
        algbw *= TREE_CORRECTION[p][index] if 0 <= index < 23 else 1.0
        out[("tree", p)] = tree_lat * 1e-6 + n / algbw
    return out


@pytest.mark.parametrize("nodes", [2, 4, 16])
def test_nccl_prices_its_own_fastest_choice(nodes):
    forms = nccl_closed_forms(N_BYTES, nodes, intra_floor=INTRA["alpha"] * 1e6)
    cost = price(CollectiveCall("all_reduce", N_BYTES), G * nodes, cluster(NCCL))
    (algorithm, p), best = min(forms.items(), key=lambda kv: kv[1])
    expected = ("tree" if nodes == 2 else "ring", "simple")  # NCCL runs a tree on two nodes (nccl issue 812)
    assert (cost.algorithm, cost.protocol) == (algorithm, ("ll", "ll128", "simple")[p]) == expected
    assert cost.time_s == pytest.approx(best, rel=1e-12)
    tree = price(CollectiveCall("all_reduce", N_BYTES), G * nodes, cluster(NCCL), "tree")
    assert tree.time_s == pytest.approx(min(v for (a, _), v in forms.items() if a == "tree"), rel=1e-12)


@pytest.mark.parametrize("nodes", [2, 4, 16])
@pytest.mark.parametrize("n", [8.0, 65536.0, 2**20, 2**24, N_BYTES])
def test_a_fabric_prices_what_nccls_own_constants_choose(nodes, n):
    """NCCL picks by tuning.cc's constants whatever the fabric; the pick is then priced with the
    fabric's hops (one per protocol, tree and ring alike) and the bandwidth it moves: here a
    made-up fabric whose hops and share show in the closed form."""
    from lionsim.network.fabrics import FABRICS, Fabric

    fabric = Fabric(name="lab-fabric", hop_us=(30.0, 40.0, 90.0), share=0.5)
    FABRICS.add(fabric.name, fabric)
    try:
        chosen = min(nccl_closed_forms(n, nodes).items(), key=lambda kv: kv[1])[0]
        cost = price(CollectiveCall("all_reduce", n), G * nodes, cluster(NCCL, fabric=fabric.name))
        priced = nccl_closed_forms(n, nodes, hops=fabric.hop_us, inter_bw=INTER["bw"] * 0.5,
                                   intra_floor=INTRA["alpha"] * 1e6)[chosen]
        assert (cost.algorithm, cost.protocol) == (chosen[0], ("ll", "ll128", "simple")[chosen[1]])
        assert cost.time_s == pytest.approx(priced, rel=1e-12)
    finally:
        FABRICS._items.pop(fabric.name)


def test_nccl_small_calls_take_the_low_latency_protocol():
    # 4 KB: latency-bound, so NCCL's model takes LL (a tree or a ring, whichever its hops favour)
    cost = price(CollectiveCall("all_reduce", 4096), 32, cluster(NCCL))
    assert cost.protocol == "ll"


@pytest.mark.parametrize("nodes", [2, 4, 16])
def test_nccl_across_one_nic_per_node_is_not_the_hierarchical_plan(nodes):
    """8 H100 per node with one 10 GbE NIC (B). Through the NIC: the hierarchical plan moves
    2(M-1)/M n at B, NCCL's flat ring 2(N-1)/N n (1.875x at 2 nodes), its tree n on two nodes and 2n
    beyond, at 0.92 of what NCCL's sockets move with their generic settings (2 channels x 1
    thread x the rate a thread, below B). NCCL takes the tree on two nodes, the ring beyond."""
    net, b, n = NETWORKS.get("h100x8-10gbe"), 1.17e9, 6.8e8
    moved = min(b, 2 * SOCKETS.channel_GBps * 1e9)
    call, ranks = CollectiveCall("all_reduce", n), 8 * nodes
    nccl, ideal = price(call, ranks, net), price(call, ranks, net.with_traits(IDEAL))
    ring = price(call, ranks, net, "ring")
    across = next(p for p in ideal.phases if p.scope == "inter").terms.bandwidth_s
    assert across == pytest.approx(2 * (nodes - 1) / nodes * n / b, rel=1e-12)
    assert ring.bandwidth_s == pytest.approx(2 * (ranks - 1) / ranks * n / moved, rel=1e-12)
    if nodes == 2:
        assert nccl.algorithm == "tree" and nccl.bandwidth_s == pytest.approx(n / (0.92 * moved), rel=1e-12)
    else:
        assert nccl.algorithm == "ring" and nccl.bandwidth_s == pytest.approx(ring.bandwidth_s, rel=1e-12)


@pytest.mark.parametrize("nodes", [2, 4])
@pytest.mark.parametrize("algorithm", ["ring", "tree"])
def test_nccl_bytes_across_are_what_crosses_a_nodes_nic_and_what_its_time_moves(nodes, algorithm):
    """Bytes a node sends through its NIC per direction for an all-reduce of n over N GPUs: a ring's
    one hop out of the node 2(N-1)/N n; a double binary tree n on two nodes (each node the root
    of one tree, a leaf of the other, n/2 a tree) and 2n beyond (an inner node: n/2 up and n/2 to
    each of two children in one tree, n/2 up as a leaf in the other). The NIC-bound bandwidth term
    moves those bytes at its rate (Simple: ring x 1, tree x 0.92)."""
    ranks = G * nodes
    cost = price(CollectiveCall("all_reduce", N_BYTES), ranks, cluster(NCCL), algorithm)
    across = {"ring": 2 * (ranks - 1) / ranks * N_BYTES, "tree": N_BYTES if nodes == 2 else 2 * N_BYTES}[algorithm]
    assert (cost.algorithm, cost.protocol) == (algorithm, "simple")
    assert cost.inter_bytes == pytest.approx(across, rel=1e-12)
    rate = {"ring": 1.0, "tree": 0.92}[algorithm] * INTER["bw"]
    assert cost.bandwidth_s == pytest.approx(across / rate, rel=1e-12)
    assert cost.sent_bytes == pytest.approx(across if algorithm == "ring" else 2 * N_BYTES, rel=1e-12)  # per GPU


@pytest.mark.parametrize("nodes", [2, 4, 16])
def test_gloo_all_reduce_is_a_flat_ring_over_every_rank(nodes):
    ranks, n = G * nodes, 64e6
    net = cluster(GLOO, inter_bw=1.17e9, inter_alpha=25e-6)
    cost = price(CollectiveCall("all_reduce", n), ranks, net)
    op = GLOO.op("all_reduce")
    bandwidth = min(1.17e9 * op.share(n), GLOO.host_GBps * 1e9)  # the slowest hop, as gloo gets it
    expected = op.floor(n) + 2 * (ranks - 1) * 25e-6 + 2 * (ranks - 1) / ranks * n / bandwidth
    assert cost.algorithm == "ring" and cost.time_s == pytest.approx(expected, rel=1e-12)
