"""The NCCL version a network states (lionsim.network.ncclversion) and the rule it changes checked
here, the two-node tree rule (lionsim.network.nccl; the other, NVLS from 2.17.1 and NVLS Tree from
2.18.1, in test_nvls.py): checked against NCCL's model worked by hand from nccl.py's formulas (tuning.cc's constants), for today's NCCL (v2.5.6-1 on: a tree over two nodes
ranked by the intra link) and for 2.4 (the same on NVLink nodes only, src/init.cc
ncclTreeThreshold); a profile's [nccl] version acts, is written back, and bad ones are refused in
one line, exit 2. Never a timing."""

from __future__ import annotations

import tomllib

import pytest

from lionsim.errors import LionsimError
from lionsim.network import CollectiveCall, load_network, nccl, price
from lionsim.network.link import Link
from lionsim.network.profile import network_from_dict
from lionsim.network.sockets import SocketSettings
from tests.helpers.cli import one_line_exit_2

N = 2**30  # past treeCorrectionFactor's last index (floor(log2(N / 64)) = 24): no correction
RANKS, NODES = 16, 2
PCIE = Link(alpha_s=1e-6, bandwidth_Bps=24e9)  # below link.NVLINK_GBPS: PCIe hop latencies
NVLINK = Link(alpha_s=1e-6, bandwidth_Bps=126e9)
INTER = Link(alpha_s=25e-6, bandwidth_Bps=12e9)

# NCCL's model by hand (nccl.py's module doc, tuning.cc constants), 2 nodes of 8 GPUs on PCIe:
# tree Simple latency: base 8.4 + 2 ((8 - 1) x PCI tree Simple 4.0 + log2(2) x NET tree Simple 14.0)
TREE_US = 8.4 + 2 * (7 * 4.0 + 1 * 14.0)
# ring Simple latency: (base 8.4 + 28 intra steps x PCI ring Simple 5.7 + 2 inter x NET 14.0) x plateau 1.4
RING_US = (8.4 + 28 * 5.7 + 2 * 14.0) * 1.4
RING_GBPS = min(24.0, 12.0) * RANKS / (2 * (RANKS - 1))  # busbw x N / 2(N-1) = 6.4
TREE_RULE_GBPS = min(24.0 * 0.92 * 0.5, 12.0 * 0.92)  # two-node rule: n per NIC direction = 11.04
TREE_PRE_RULE_GBPS = min(24.0, 12.0) * 0.92 * 0.5  # by the inter link, 2n per NIC = 5.52


def _model_s(version, intra) -> dict[str, float]:
    return {c.algorithm: c.model_s for c in nccl.choices("all_reduce", N, RANKS, NODES, intra, INTER, version=version)
            if c.protocol == "simple"}


@pytest.mark.parametrize("version", [None, (2, 5, 6), (2, 26, 2)])
def test_from_2_5_6_a_tree_over_two_nodes_is_ranked_by_the_intra_link_and_runs(version):
    model = _model_s(version, PCIE)
    assert model["tree"] == pytest.approx(TREE_US * 1e-6 + N / (TREE_RULE_GBPS * 1e9), rel=1e-12)
    assert model["ring"] == pytest.approx(RING_US * 1e-6 + N / (RING_GBPS * 1e9), rel=1e-12)
    assert nccl.pick("all_reduce", N, RANKS, NODES, PCIE, INTER, version=version).algorithm == "tree"


@pytest.mark.parametrize("version", [(2, 4, 0), (2, 4, 7), (2, 5, 5)])
def test_before_2_5_6_a_tree_over_two_pcie_nodes_is_ranked_by_the_inter_link_so_a_large_call_rings(version):
    model = _model_s(version, PCIE)
    assert model["tree"] == pytest.approx(TREE_US * 1e-6 + N / (TREE_PRE_RULE_GBPS * 1e9), rel=1e-12)
    assert model["ring"] == pytest.approx(RING_US * 1e-6 + N / (RING_GBPS * 1e9), rel=1e-12)
    assert nccl.pick("all_reduce", N, RANKS, NODES, PCIE, INTER, version=version).algorithm == "ring"


def test_before_2_5_6_nvlink_nodes_keep_the_rule_and_more_nodes_never_had_it():
    """2.4's init.cc doubles the tree's bandwidth on two nodes under `nvlink`: the same choice as
    today's there; on four nodes neither version has the rule, so they agree too."""
    for nodes, ranks in ((2, 16), (4, 32)):
        for size in (2**16, 2**24, N):
            today, old = (nccl.choices("all_reduce", size, ranks, nodes, NVLINK, INTER, version=v)
                          for v in (None, (2, 4, 7)))
            assert old == today
    assert nccl.pick("all_reduce", N, RANKS, NODES, NVLINK, INTER, version=(2, 4, 7)).algorithm == "tree"


def _profile(tmp_path, intra_GBps: float, nccl_table: str) -> str:
    path = tmp_path / "net.toml"
    path.write_text(f'workers_per_node = 8\ntraits = "nccl"\nfabric = "tuning"\n[inter]\nalpha_us = 25.0\n'
                    f'bandwidth_GBps = 12.0\n[intra]\nalpha_us = 1.0\nbandwidth_GBps = {intra_GBps}\n{nccl_table}')
    return path


def test_a_profiles_version_sets_what_lionsim_prices(tmp_path):
    def algorithm(table: str) -> str:
        return price(CollectiveCall("all_reduce", N), RANKS, load_network(_profile(tmp_path, 24.0, table))).algorithm

    assert algorithm("") == "tree"
    assert algorithm('[nccl]\nversion = "2.4.7"\n') == "ring"
    assert algorithm('[nccl]\nversion = "2.5.6"\n') == "tree"


def test_the_version_is_written_back_and_read_again():
    data = {"inter": {"alpha_us": 25.0, "bandwidth_GBps": 10.0}, "nccl": {"version": "2.4.7"}}
    net = network_from_dict(data, source="s", default_name="s")
    assert net.sockets == SocketSettings(version="2.4.7") and net.sockets.release == (2, 4, 7)
    assert net.to_dict()["nccl"] == data["nccl"]
    assert network_from_dict(net.to_dict(), source="again", default_name="again").sockets == net.sockets
    both = {"min_nchannels": 4, "version": "2.12.7"}
    assert network_from_dict({**data, "nccl": both}, source="s", default_name="s").to_dict()["nccl"] == both


ACCEPTED = 'is not accepted; a version string "MAJOR.MINOR.PATCH" from 2.4.0 on (NCCL 2.4 brought trees)'


@pytest.mark.parametrize("value", ['"2.4"', '"v2.4.7"', '"2.4.7-1"', '"2.3.7"', '"1.3.4"', '""', "2.4", "247"])
def test_bad_versions_are_refused_in_one_line(tmp_path, capsys, value):
    path = _profile(tmp_path, 24.0, f"[nccl]\nversion = {value}\n")
    shown = repr(tomllib.loads(f"v = {value}")["v"])  # as the profile holds it
    err = one_line_exit_2(["comm", "--network", str(path), "--traits", "nccl", "--workers", "16",
                           "--collective", "all_reduce", "--sizes", "1048576"], capsys,
                          f"nccl.version = {shown} {ACCEPTED}")
    assert str(path) in err
    with pytest.raises(LionsimError, match="nccl.version"):
        SocketSettings(version="2.3.7")


def test_the_version_changes_what_nccl_ranks_not_what_a_tree_moves():
    """A tree over two nodes moves n through each NIC direction whatever the version ranked it
    by: 2.4.7's tree on PCIe nodes is priced as today's (only model_s differs)."""
    def tree(version):
        return next(c for c in nccl.choices("all_reduce", N, RANKS, NODES, PCIE, INTER, version=version)
                    if c.algorithm == "tree" and c.protocol == "simple")
    old, new = tree((2, 4, 7)), tree(None)
    assert old.bandwidth_s == pytest.approx(new.bandwidth_s, rel=1e-12)
    assert old.model_s > new.model_s


# A link stated NVLink below NVLINK_GBPS (older NVLink nodes as measured, e.g. a V100 ring's 41.7 GB/s)
NVLINK_STATED = Link(alpha_s=1e-6, bandwidth_Bps=24e9, hardware="nvlink")


@pytest.mark.parametrize("version", [(2, 4, 8), None])
def test_an_intra_link_stated_nvlink_keeps_2_4_s_two_node_rule_whatever_its_rate(version):
    """The same 24 GB/s link: inferred PCIe (2.4 rings a large call on two nodes), stated NVLink (2.4
    runs the tree, ranked by the intra link as today's); the model's times by hand, with NVLink's hop
    latencies (tuning.cc hwLat NVLINK: tree Simple 4.0 as PCI's, ring Simple 3.4 where PCI's is 5.7)."""
    stated = {c.algorithm: c.model_s for c in nccl.choices("all_reduce", N, RANKS, NODES, NVLINK_STATED, INTER,
                                                          version=version) if c.protocol == "simple"}
    assert stated["tree"] == pytest.approx(TREE_US * 1e-6 + N / (TREE_RULE_GBPS * 1e9), rel=1e-12)
    ring_us = (8.4 + 28 * 3.4 + 2 * 14.0) * 1.4
    assert stated["ring"] == pytest.approx(ring_us * 1e-6 + N / (RING_GBPS * 1e9), rel=1e-12)
    assert nccl.pick("all_reduce", N, RANKS, NODES, NVLINK_STATED, INTER, version=version).algorithm == "tree"
    as_pcie = Link(alpha_s=1e-6, bandwidth_Bps=24e9, hardware="pcie")
    expected = "tree" if version is None else "ring"
    assert nccl.pick("all_reduce", N, RANKS, NODES, as_pcie, INTER, version=version).algorithm == expected
    assert nccl.pick("all_reduce", N, RANKS, NODES, PCIE, INTER, version=version).algorithm == expected


def test_a_stated_hardware_overrides_the_rate_both_ways():
    assert Link(alpha_s=0, bandwidth_Bps=24e9, hardware="nvlink").nvlink
    assert not Link(alpha_s=0, bandwidth_Bps=300e9, hardware="pcie").nvlink
    assert Link(alpha_s=0, bandwidth_Bps=300e9).nvlink and not PCIE.nvlink


def test_a_profile_s_intra_hardware_acts_is_written_back_and_bad_ones_are_refused():
    data = {"workers_per_node": 8, "inter": {"alpha_us": 2.0, "bandwidth_GBps": 4.0},
            "intra": {"alpha_us": 1.0, "bandwidth_GBps": 41.7, "hardware": "nvlink"}}
    net = network_from_dict(data, source="t.toml", default_name="t")
    assert net.intra.nvlink and net.to_dict()["intra"]["hardware"] == "nvlink"
    assert network_from_dict(net.to_dict(), source="again", default_name="t") == net
    with pytest.raises(LionsimError, match=r"t.toml: intra.hardware = 'nvswitch' is not accepted; one of nvlink, pcie"):
        network_from_dict(data | {"intra": data["intra"] | {"hardware": "nvswitch"}}, source="t.toml", default_name="t")
    with pytest.raises(LionsimError, match=r"'inter.hardware' is not accepted; an \[intra\] link may state it"):
        network_from_dict(data | {"inter": data["inter"] | {"hardware": "pcie"}}, source="t.toml", default_name="t")


def test_the_infiniband_1_bit_adam_profile_s_stated_nvlink_acts():
    """examples/clusters/v100x8-ib-qdr.toml states NCCL 2.4.8 and NVLink at 41.7 GB/s: 2.4's rule on
    NVLink nodes, a tree for a large call on two nodes; the same link without the stated hardware is
    PCIe by its rate, and rings it."""
    net = load_network("examples/clusters/v100x8-ib-qdr.toml")
    assert net.sockets.release == (2, 4, 8) and net.intra.hardware == "nvlink"
    pick = lambda intra: nccl.pick("all_reduce", 6.72e8, 16, 2, intra, net.inter, version=(2, 4, 8))  # noqa: E731
    assert pick(net.intra).algorithm == "tree"
    assert pick(Link(alpha_s=net.intra.alpha_s, bandwidth_Bps=net.intra.bandwidth_Bps)).algorithm == "ring"


def test_nvls_on_a_link_stated_pcie_is_refused_naming_the_statement():
    data = {"workers_per_node": 8, "nvls": "hopper", "inter": {"alpha_us": 2.0, "bandwidth_GBps": 50.0},
            "intra": {"alpha_us": 1.0, "bandwidth_GBps": 450.0, "hardware": "pcie"}}
    with pytest.raises(LionsimError, match=r"intra 450 GB/s, stated hardware = 'pcie'"):
        network_from_dict(data, source="t.toml", default_name="t")
    network_from_dict(data | {"intra": data["intra"] | {"hardware": "nvlink", "bandwidth_GBps": 90.0}},
                      source="t.toml", default_name="t")  # stated NVLink below 100 GB/s: accepted
