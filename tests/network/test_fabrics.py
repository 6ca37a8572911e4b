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
