"""The transport NCCL runs over across nodes (lionsim.network.fabrics): which one a network gets,
what it changes in a price (closed forms written here), and which library a network that names
none is priced with (a GPU runs NCCL). Never a timing."""

from __future__ import annotations

import pytest

from lionsim.plan import device_library
from lionsim.errors import LionsimError
from lionsim.estimate import EstimateConfig, estimate
from lionsim.network import IDEAL, NETWORKS, TRAITS, CollectiveCall, load_network, network_for, price
from lionsim.network.fabrics import FABRICS, SOCKETS
from lionsim.network.profile import network_from_dict
from lionsim.estimate.sweep import with_bandwidth

FLAT = {"inter": {"alpha_us": 25.0, "bandwidth_GBps": 10.0}}
GENERIC_CAP_GBPS = 2 * SOCKETS.channel_GBps
"""NCCL's generic socket defaults: 2 channels, no helper thread (the proxy thread, one a connection)."""


def profile(tmp_path, text: str) -> str:
    path = tmp_path / "net.toml"
    path.write_text(text)
    return str(path)


def test_a_profile_names_its_fabric_and_writes_it_back(tmp_path):
    net = load_network(profile(tmp_path, 'fabric = "EFA"\ntraits = "nccl"\n[inter]\nalpha_us = 2.0\nbandwidth_GBps = 50.0\n'))
    assert net.fabric == "efa" and net.nccl_fabric() is FABRICS.get("efa")
    again = network_from_dict(net.to_dict(), source="again", default_name="again")
    assert again.fabric == "efa" and again.nccl_fabric() is net.nccl_fabric()
    with pytest.raises(LionsimError, match=r"unknown fabric 'infiniband'; accepted: ib, efa, efa-host, sockets, tuning"):
        network_from_dict(FLAT | {"fabric": "infiniband"}, source="bad.toml", default_name="bad")


def test_a_misspelt_fabric_is_offered_the_nearest_name():
    """`socket` for `sockets` was refused with the list alone, where every other unknown name gets
    the nearest one; a name near none still ends with the list."""
    with pytest.raises(LionsimError) as e:
        network_from_dict(FLAT | {"fabric": "socket"}, source="bad.toml", default_name="bad")
    assert str(e.value) == ("bad.toml: unknown fabric 'socket'; accepted: ib, efa, efa-host, sockets, tuning; "
                            "did you mean 'sockets'?")
    with pytest.raises(LionsimError) as e:
        network_from_dict(FLAT | {"fabric": "roce"}, source="bad.toml", default_name="bad")
    assert str(e.value).endswith("accepted: ib, efa, efa-host, sockets, tuning")


def test_a_network_without_a_fabric_takes_one_from_its_alpha():
    # TCP's one-way latency is 10-50 us, RDMA's 1-3 (REFERENCE.md 6)
    assert network_from_dict(FLAT, source="s", default_name="s").nccl_fabric().name == "sockets"
    rdma = {"inter": {"alpha_us": 2.0, "bandwidth_GBps": 24.0}}
    assert network_from_dict(rdma, source="s", default_name="s").nccl_fabric().name == "ib"
    for name, preset in NETWORKS.items():  # the Ethernet presets run sockets; InfiniBand ones ib
        if "gbe" in name:
            assert preset.nccl_fabric().name == "sockets", name
        if name.startswith(("ib-", "dgx-", "a100x8")):
            assert preset.nccl_fabric().name == "ib", name
    on_preset = network_for("100gbe", traits="nccl").nccl_fabric()  # --traits nccl on a flat preset
    assert on_preset.name == "sockets" and on_preset.cap_GBps == pytest.approx(GENERIC_CAP_GBPS, rel=1e-12)


def test_the_socket_transport_moves_at_most_its_cap_and_never_runs_ll128():
    """4 nodes of one GPU on a 10 GB/s link: a ring moves 2(N-1)/N n through each node, at the
    sockets' cap (NCCL's generic settings: 2 channels x 1 thread) not the link's; its latency is the fabric's Simple hop on every step,
    x1.4 (tuning.cc's ring plateau); LL128, which needs a NIC near the GPUs, is never chosen."""
    net = network_from_dict(FLAT | {"traits": "nccl"}, source="s", default_name="s")
    n, ranks = 2**30, 4
    ring = price(CollectiveCall("all_reduce", n), ranks, net, "ring")
    assert ring.protocol == "simple"
    assert ring.bandwidth_s == pytest.approx(2 * (ranks - 1) / ranks * n / (GENERIC_CAP_GBPS * 1e9), rel=1e-12)
    base_simple = 8.4  # tuning.cc baseLatencies, ring Simple
    assert ring.latency_s == pytest.approx((base_simple + 2 * (ranks - 1) * SOCKETS.hop_us[2]) * 1.4 * 1e-6, rel=1e-12)
    for size in (8, 4096, 2**16, 2**20, 2**24, 2**28):
        assert price(CollectiveCall("all_reduce", size), 16, NETWORKS.get("h100x8-100gbe")).protocol != "ll128"


def test_a_profile_without_traits_is_priced_by_the_library_of_the_device(tmp_path):
    bare = profile(tmp_path, "[inter]\nalpha_us = 25.0\nbandwidth_GBps = 1.17\n")
    told = tmp_path / "told.toml"
    told.write_text('traits = "ideal"\n[inter]\nalpha_us = 25.0\nbandwidth_GBps = 1.17\n')
    assert network_for(bare).traits == IDEAL  # comm, and bench with measured compute: nothing models a GPU
    assert network_for(bare, library="nccl").traits == TRAITS.get("nccl")
    assert network_for(str(told), library="nccl").traits == IDEAL  # told otherwise
    assert network_for("1gbe", library="nccl").traits == IDEAL  # a preset names its library
    assert network_for(bare, backend="gloo", library="nccl").traits == TRAITS.get("gloo")  # a real run's own
    assert device_library("h100") == "nccl" and device_library("measured") is None


def test_estimate_says_which_library_priced_each_row(tmp_path):
    bare = profile(tmp_path, "[inter]\nalpha_us = 25.0\nbandwidth_GBps = 1.17\n")
    common = dict(params=10**8, tokens_per_worker=1024, workers=8, strategies=["adamw", "dlion-mavo"])
    rows = estimate(EstimateConfig(network=bare, **common))
    assert list(rows["library"]) == ["nccl", "nccl"] and list(rows["fabric"]) == ["sockets", "sockets"]
    named = estimate(EstimateConfig(network=bare, traits="nccl", **common))
    assert list(rows["comm_s"]) == pytest.approx(list(named["comm_s"]), rel=1e-12)  # what --traits nccl prices
    ideal = estimate(EstimateConfig(network=bare, traits="ideal", **common))
    assert list(ideal["library"]) == ["ideal", "ideal"] and list(ideal["fabric"].fillna("")) == ["", ""]
    assert (ideal["comm_s"] != rows["comm_s"]).all()


def test_nccls_point_to_point_sends_across_nodes_run_over_the_fabric_too():
    """An all-to-all is NCCL's sends through the same transport: on sockets at most the cap a
    node (split among the node's streams) and each message at least the LL hop; the ideal
    library on the same links keeps the link's own figures."""
    net = network_from_dict(FLAT | {"traits": "nccl"}, source="s", default_name="s")
    n, ranks = 64e6, 4
    a2a = price(CollectiveCall("all_to_all", n), ranks, net, "pairwise")
    hop = SOCKETS.hop_us[0] * 1e-6
    assert a2a.time_s == pytest.approx((ranks - 1) * hop + (ranks - 1) / ranks * n / (GENERIC_CAP_GBPS * 1e9), rel=1e-12)
    ideal = price(CollectiveCall("all_to_all", n), ranks, net.with_traits(IDEAL), "pairwise")
    assert ideal.time_s == pytest.approx((ranks - 1) * 25e-6 + (ranks - 1) / ranks * n / 10e9, rel=1e-12)
    # two nodes of 8 on h100x8-100gbe: a hierarchical plan's inter phase, 8 streams sharing the node's cap
    cluster = NETWORKS.get("h100x8-100gbe")
    scoped = price(CollectiveCall("all_to_all", n, scope="inter"), 16, cluster, "pairwise")
    per_stream = min(cluster.inter.bandwidth_Bps * cluster.inter.efficiency / 8, GENERIC_CAP_GBPS * 1e9 / 8)
    assert scoped.time_s == pytest.approx((2 - 1) * hop + (2 - 1) / 2 * n / per_stream, rel=1e-12)


def test_nccl_chooses_on_the_link_rate_so_a_faster_nic_can_flip_sockets_to_a_slower_tree():
    """NCCL ranks with the NIC's speed (NVIDIA/nccl src/graph/topo.cc: the NET node's bandwidth is the
    plug-in's `speed`, /sys/class/net/<nic>/speed for the socket transport), not what the socket
    transport moves. A 16 MB all-reduce over 8 nodes of 8 H100 (NVLink inside): NCCL's model, by hand
    from nccl.py's formulas, runs ring Simple below B* and tree Simple above; the sockets fabric prices
    both at its 1.96 GB/s cap, where the tree is slower, so the call slows down past B*."""
    n, nodes, ranks = 16e6, 8, 64
    net = NETWORKS.get("h100x8-100gbe")
    assert ranks == nodes * net.workers_per_node  # the 8 nodes of 8 the hand figures below count
    # NCCL's model (tuning.cc constants): ring Simple latency x1.4 over 112 NVLink hops (3.4 us) and 14 NET hops
    # (14 us), algbw B x 64/126; tree Simple 2 (7 x 4.0 + log2(8) x 14) us, algbw B x 0.92 x 1/2 x 0.8
    # (treeCorrectionFactor, Simple, index floor(log2(16e6 / 64)) = 17)
    ring_us, tree_us = 1.4 * (8.4 + 112 * 3.4 + 14 * 14.0), 8.4 + 2 * (7 * 4.0 + 3 * 14.0)
    ring_per_B, tree_per_B = 126 / 64, 1 / (0.92 * 0.5 * 0.8)
    flip_GBps = n * (tree_per_B - ring_per_B) / ((ring_us - tree_us) * 1e-3) / 1e6  # where the two model times meet
    assert 10.0 < flip_GBps < 20.0
    # priced on sockets: both at the cap, hops at the fabric's 89 us (Simple)
    cap = GENERIC_CAP_GBPS
    ring_s = 1.4 * (8.4 + 112 * 3.4 + 14 * 89.0) * 1e-6 + n * ring_per_B / (cap * 1e9)
    tree_s = (8.4 + 2 * (7 * 4.0 + 3 * 89.0)) * 1e-6 + n * tree_per_B / (cap * 1e9)
    call = CollectiveCall(op="all_reduce", nbytes=n)
    for gbps, algorithm, priced in ((flip_GBps * 0.99, "ring", ring_s), (flip_GBps * 1.01, "tree", tree_s)):
        at = with_bandwidth(net, gbps)
        cost = price(call, ranks, at)
        assert (cost.algorithm, cost.protocol) == (algorithm, "simple")
        assert cost.time_s - cost.floor_s - cost.staging_s == pytest.approx(priced, rel=1e-9)
    assert tree_s > ring_s  # the faster NIC makes the call slower
