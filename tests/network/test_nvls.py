"""NVLink SHARP in NCCL's tuning model (lionsim.network.nccl): NVLS in one node and NVLS Tree across
nodes, checked against tuning.cc's formulas worked by hand here (constants written out, none of
nccl.py's helpers), where they are enabled (declared nodes, today's NCCL or 2.17.1 / 2.18.1 on, NVLS
Tree never in one node), where the choice flips, and the profile key that declares them. Never a
timing."""

from __future__ import annotations

import math

import pytest

from lionsim.errors import LionsimError
from lionsim.network import CollectiveCall, load_network, nccl, price
from lionsim.network.fabrics import TUNING
from lionsim.network.link import Link
from lionsim.network.presets import NETWORKS
from lionsim.network.profile import network_from_dict

NVLINK = Link(alpha_s=1e-6, bandwidth_Bps=380e9)  # nvlink4, per GPU
INTER = Link(alpha_s=2e-6, bandwidth_Bps=384e9)  # 8 NDR NICs, per node
G = 8  # GPUs a node: NVLS channels (one head a GPU)


def nvls_tree_by_hand(nbytes: float, nodes: int, intra_GBps: float = 380.0, inter_GBps: float = 384.0) -> float:
    """tuning.cc (v2.28.3 on), Hopper, all-reduce, NVLS Tree: a channel's busbw min(bwIntra x
    nvlsEfficiency 0.85 x (c - 1) / c x 2, bwInter x 2 on two nodes, perChMaxNVLSTreeBw 57.7 on two
    nodes / 45.5 beyond), c = 8 channels, bwIntra = the GPU's NVLink / (c + 1) (the head pulls twice),
    bwInter = the node's link / c; algbw c x bw x N / (2 (N - 1)); latency 0 + NVLink 25 + 2 log2(M) x
    NET 20.9 us."""
    ranks = nodes * G
    per_channel = min(intra_GBps / 9 * 0.85 * 7 / 8 * 2, inter_GBps / 8 * (2 if nodes == 2 else 1),
                      57.7 if nodes == 2 else 45.5)
    algbw = 8 * per_channel * ranks / (2 * (ranks - 1))
    return (25.0 + 2 * math.log2(nodes) * 20.9) * 1e-6 + nbytes / (algbw * 1e9)


def ring_simple_by_hand(nbytes: float, nodes: int) -> float:
    """tuning.cc's ring Simple all-reduce across nodes (nccl.py's module doc): (base 8.4 + (2(N-1) - 2(M-1))
    x max(NVLink ring Simple 3.4, net overhead 1 x 3) + 2(M-1) x NET 14) x plateau 1.4; algbw min(intra,
    inter) x N / (2 (N - 1))."""
    ranks = nodes * G
    latency = (8.4 + (2 * (ranks - 1) - 2 * (nodes - 1)) * 3.4 + 2 * (nodes - 1) * 14.0) * 1.4
    return latency * 1e-6 + nbytes / (380e9 * ranks / (2 * (ranks - 1)))


def nvls_tree(choices):
    (choice,) = [c for c in choices if c.algorithm == "nvls_tree"]
    return choice


@pytest.mark.parametrize("nodes", [2, 4, 8])
def test_nvls_tree_time_is_tuning_cc_by_hand(nodes):
    n = 2**30  # Hopper: no correction factor for NVLS Tree (Blackwell on x86 only)
    choice = nvls_tree(nccl.choices("all_reduce", n, nodes * G, nodes, NVLINK, INTER, TUNING, None, "hopper"))
    assert choice.protocol == "simple"
    assert choice.model_s == pytest.approx(nvls_tree_by_hand(n, nodes), rel=1e-9)
    assert choice.time_s == pytest.approx(choice.model_s, rel=1e-9)  # the tuning fabric prices NCCL's constants
    assert choice.node_bytes == (n if nodes == 2 else 2 * n)  # the node-reduced n over a tree of nodes


def test_nvls_tree_bound_by_nvlink_where_the_intra_link_is_slow():
    slow = Link(alpha_s=1e-6, bandwidth_Bps=200e9)  # 200 / 9 x 0.85 x 7/8 x 2 = 33 GB/s a channel < 45.5, < 48
    choice = nvls_tree(nccl.choices("all_reduce", 2**30, 32, 4, slow, INTER, TUNING, None, "hopper"))
    assert choice.model_s == pytest.approx(nvls_tree_by_hand(2**30, 4, intra_GBps=200.0), rel=1e-9)


def test_nvls_tree_on_blackwell_takes_the_tree_correction_factor():
    n = 2**20  # floor(log2(n / 64)) = 14: treeCorrectionFactor Simple .5
    choice = nvls_tree(nccl.choices("all_reduce", n, 16, 2, Link(alpha_s=1e-6, bandwidth_Bps=756e9), INTER, TUNING,
                                    None, "blackwell"))
    per_channel = min(756 / 9 * 0.74 * 7 / 8 * 2, 384 / 8 * 2, 96.0)  # nvlsEfficiency 0.74, perCh cap 96 (N2)
    algbw = 8 * per_channel * 16 / 30 * 0.5
    assert choice.model_s == pytest.approx((25.0 + 2 * 20.9) * 1e-6 + n / (algbw * 1e9), rel=1e-9)


def test_nvls_in_one_node_by_hand_and_never_nvls_tree():
    n = 2**30
    options = nccl.choices("all_reduce", n, 8, 1, NVLINK, INTER, TUNING, None, "hopper")
    assert "nvls_tree" not in {c.algorithm for c in options}  # tuning.cc: NVLS Tree disabled on a single node
    (nvls,) = [c for c in options if c.algorithm == "nvls"]
    algbw = 8 * (380 / 9 * 0.85 * 7 / 8 * 2) * 8 / 14  # the intra term binds in one node; N / (2 (N - 1))
    assert nvls.model_s == pytest.approx(25e-6 + n / (algbw * 1e9), rel=1e-9)  # latency: NVLink NVLS 25 us
    assert nvls.node_bytes == 0
    assert nccl.pick("all_reduce", n, 8, 1, NVLINK, INTER, fabric=TUNING, nvls="hopper").algorithm == "nvls"


def test_ring_and_nvls_tree_flip_where_nccls_model_says():
    # four nodes: NVLS Tree's latency is lower (108.6 us against the ring's 395.9) and its algbw too
    # (45.5 x 8 x 32/62 against 380 x 32/62): the ring takes over past the size where the two meet
    lat_nvls, lat_ring = (25.0 + 4 * 20.9) * 1e-6, (8.4 + 56 * 3.4 + 6 * 14.0) * 1.4e-6
    bw_nvls, bw_ring = 8 * 45.5 * 32 / 62 * 1e9, 380 * 32 / 62 * 1e9
    crossing = (lat_ring - lat_nvls) / (1 / bw_nvls - 1 / bw_ring)
    assert ring_simple_by_hand(crossing, 4) == pytest.approx(nvls_tree_by_hand(crossing, 4), rel=1e-9)
    for nbytes, expected in ((0.9 * crossing, "nvls_tree"), (1.1 * crossing, "ring")):
        choice = nccl.pick("all_reduce", nbytes, 32, 4, NVLINK, INTER, fabric=TUNING, nvls="hopper")
        assert (choice.algorithm, choice.protocol) == (expected, "simple"), nbytes
        by_hand = nvls_tree_by_hand(nbytes, 4) if expected == "nvls_tree" else ring_simple_by_hand(nbytes, 4)
        assert choice.model_s == pytest.approx(by_hand, rel=1e-9)


def test_nothing_nvls_where_not_declared_or_not_an_all_reduce():
    for nodes in (1, 2, 4):
        options = nccl.choices("all_reduce", 2**28, nodes * G, nodes, NVLINK, INTER, TUNING)
        assert {c.algorithm for c in options} <= {"tree", "ring"}
    options = nccl.choices("all_gather", 2**28, 16, 2, NVLINK, INTER, TUNING, None, "hopper")
    assert {c.algorithm for c in options} == {"ring"}
    a100 = NETWORKS.get("dgx-a100")
    assert a100.nvls == "" and price(CollectiveCall(op="all_reduce", nbytes=2**30), 16, a100).algorithm == "tree"


@pytest.mark.parametrize("version, nodes, expected", [
    ((2, 18, 0), 2, set()), ((2, 18, 1), 2, {"nvls_tree"}), ((2, 17, 0), 1, set()), ((2, 17, 1), 1, {"nvls"}),
    ((2, 4, 7), 2, set()), (None, 2, {"nvls_tree"}), (None, 1, {"nvls"})])
def test_nvls_came_in_2_17_1_and_nvls_tree_in_2_18_1(version, nodes, expected):
    options = nccl.choices("all_reduce", 2**30, nodes * G, nodes, NVLINK, INTER, TUNING, version, "hopper")
    assert {c.algorithm for c in options} - {"tree", "ring"} == expected


def test_the_dgx_h100_preset_runs_nvls_tree_and_its_profile_key_is_written_back():
    dgx = NETWORKS.get("dgx-h100")
    assert dgx.nvls == "hopper"
    call = CollectiveCall(op="all_reduce", nbytes=2**28)
    assert price(call, 16, dgx).algorithm == "nvls_tree"
    again = network_from_dict(dgx.to_dict(), source="s", default_name="s")
    assert again.nvls == "hopper" and price(call, 16, again).time_s == price(call, 16, dgx).time_s
    plain = network_from_dict({k: v for k, v in dgx.to_dict().items() if k != "nvls"}, source="s", default_name="s")
    assert price(call, 16, plain).algorithm != "nvls_tree"


@pytest.mark.parametrize("change, message", [
    ({"nvls": "ampere"}, r"s: nvls = 'ampere' is not accepted; the GPUs' NVLink SHARP generation, one of hopper, "
                         r"blackwell"),
    ({"workers_per_node": 1}, r"s: network 's': nvls = 'hopper' needs NVSwitch nodes: workers_per_node >= 2"),
    ({"intra": {"alpha_us": 2.0, "bandwidth_GBps": 24.0}}, r"needs NVSwitch nodes: .* an NVLink intra link"),
])
def test_nvls_where_it_means_nothing_is_refused_in_one_line(change, message):
    data = {"inter": {"alpha_us": 2.0, "bandwidth_GBps": 384.0}, "intra": {"alpha_us": 1.0, "bandwidth_GBps": 380.0},
            "workers_per_node": 8, "nvls": "hopper", **change}
    with pytest.raises(LionsimError, match=message) as error:
        network_from_dict(data, source="s", default_name="s")
    assert "\n" not in str(error.value)


def test_a_profile_states_nvls(tmp_path):
    path = tmp_path / "hgx.toml"
    path.write_text('workers_per_node = 8\ntraits = "nccl"\nnvls = "hopper"\n[inter]\nalpha_us = 2.0\n'
                    'bandwidth_GBps = 384.0\n[intra]\nalpha_us = 1.0\nbandwidth_GBps = 380.0\n')
    assert load_network(path).nvls == "hopper"
    assert price(CollectiveCall(op="all_reduce", nbytes=2**28), 32, load_network(path)).algorithm == "nvls_tree"
