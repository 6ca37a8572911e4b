"""All-reduce across GPU nodes: a flat ring, the hierarchical plan and NCCL's own choice, each
against its closed form written here from the formulas (REFERENCE.md 5 and NVIDIA/nccl
src/graph/tuning.cc), at 2, 4 and 16 nodes of 8 GPUs."""

from __future__ import annotations

import math

import pytest

from lionsim.network import CollectiveCall, Link, Network, price
from lionsim.network.libraries import GLOO, NCCL
from lionsim.network.presets import NETWORKS
from lionsim.network.traits import IDEAL

G = 8
INTRA = dict(alpha=1e-6, bw=380e9)  # NVLink4, per GPU
INTER = dict(alpha=2e-6, bw=48e9)  # one NDR NIC per node
N_BYTES = 2e9  # a 1B-parameter model's bf16 gradients


def cluster(traits, inter_bw=INTER["bw"], inter_alpha=INTER["alpha"]) -> Network:
    return Network(name="c", workers_per_node=G, traits=traits,
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


def nccl_closed_forms(n: float, nodes: int) -> dict[tuple[str, int], float]:
    """Seconds of each (algorithm, protocol) by NCCL's model for an all-reduce over nodes x G GPUs."""
    ranks, bus = G * nodes, min(INTRA["bw"], INTER["bw"])
    out = {}
    for p in range(3):
        ring_lat = BASE["ring"][p] + (2 * (ranks - 1) - 2 * (nodes - 1)) * NVL["ring"][p] + 2 * (nodes - 1) * NET["ring"][p]
        out[("ring", p)] = ring_lat * 1e-6 + 2 * (ranks - 1) / ranks * n / (bus * RING_FACTOR[p])
        tree_lat = BASE["tree"][p] + 2 * ((G - 1) * NVL["tree"][p] + math.log2(nodes) * NET["tree"][p])
        # a tree moves 2n through the narrowest link; on two nodes only n through each NIC direction
        # (each node the root of one tree, a leaf of the other); n >= 512 MB: no size correction
        algbw = bus * TREE_FACTOR[p] / 2
        if nodes == 2:
            algbw = min(INTRA["bw"] * TREE_FACTOR[p] / 2, INTER["bw"] * TREE_FACTOR[p])
        out[("tree", p)] = tree_lat * 1e-6 + n / algbw
    return out


@pytest.mark.parametrize("nodes", [2, 4, 16])
def test_nccl_prices_its_own_fastest_choice(nodes):
    forms = nccl_closed_forms(N_BYTES, nodes)
    cost = price(CollectiveCall("all_reduce", N_BYTES), G * nodes, cluster(NCCL))
    (algorithm, p), best = min(forms.items(), key=lambda kv: kv[1])
    expected = ("tree" if nodes == 2 else "ring", "simple")  # NCCL runs a tree on two nodes (nccl issue 812)
    assert (cost.algorithm, cost.protocol) == (algorithm, ("ll", "ll128", "simple")[p]) == expected
    assert cost.time_s == pytest.approx(best, rel=1e-12)
    tree = price(CollectiveCall("all_reduce", N_BYTES), G * nodes, cluster(NCCL), "tree")
    assert tree.time_s == pytest.approx(min(v for (a, _), v in forms.items() if a == "tree"), rel=1e-12)


def test_nccl_small_calls_take_the_low_latency_protocol():
    # 4 KB: latency-bound, so NCCL's model takes LL (a tree or a ring, whichever its hops favour)
    cost = price(CollectiveCall("all_reduce", 4096), 32, cluster(NCCL))
    assert cost.protocol == "ll"


@pytest.mark.parametrize("nodes", [2, 4, 16])
def test_nccl_across_one_nic_per_node_is_not_the_hierarchical_plan(nodes):
    """8 H100 per node with one 10 GbE NIC (B). Through the NIC: the hierarchical plan moves
    2(M-1)/M n, NCCL's flat ring 2(N-1)/N n (1.875x at 2 nodes), its tree n on two nodes and 2n
    beyond, at 0.92 of B. NCCL takes the tree on two nodes, the ring beyond."""
    net, b, n = NETWORKS.get("h100x8-10gbe"), 1.17e9, 6.8e8
    call, ranks = CollectiveCall("all_reduce", n), 8 * nodes
    nccl, ideal = price(call, ranks, net), price(call, ranks, net.with_traits(IDEAL))
    ring = price(call, ranks, net, "ring")
    across = next(p for p in ideal.phases if p.scope == "inter").terms.bandwidth_s
    assert across == pytest.approx(2 * (nodes - 1) / nodes * n / b, rel=1e-12)
    assert ring.bandwidth_s == pytest.approx(2 * (ranks - 1) / ranks * n / b, rel=1e-12)
    if nodes == 2:
        assert nccl.algorithm == "tree" and nccl.bandwidth_s == pytest.approx(n / (0.92 * b), rel=1e-12)
    else:
        assert nccl.algorithm == "ring" and nccl.bandwidth_s == pytest.approx(ring.bandwidth_s, rel=1e-12)


@pytest.mark.parametrize("nodes", [2, 4, 16])
def test_gloo_all_reduce_is_a_flat_ring_over_every_rank(nodes):
    ranks, n = G * nodes, 64e6
    net = cluster(GLOO, inter_bw=1.17e9, inter_alpha=25e-6)
    cost = price(CollectiveCall("all_reduce", n), ranks, net)
    op = GLOO.op("all_reduce")
    bandwidth = min(1.17e9 * op.share(n), GLOO.host_GBps * 1e9)  # the slowest hop, as gloo gets it
    expected = op.floor(n) + 2 * (ranks - 1) * 25e-6 + 2 * (ranks - 1) / ranks * n / bandwidth
    assert cost.algorithm == "ring" and cost.time_s == pytest.approx(expected, rel=1e-12)
