"""NCCL's socket-transport settings (lionsim.network.sockets): the per-node rate they give the
sockets fabric, checked against the rule worked by hand from NCCL's ncclTopoPostset (2 channels a
NIC, NCCL_MIN_NCHANNELS raising it, x the fitted rate a channel, the link bounding it); a
profile's [nccl] table acts; settings lionsim does not price and bad values are refused in one
line, exit 2. Never a timing."""

from __future__ import annotations

import pytest

from lionsim.errors import LionsimError
from lionsim.network import CollectiveCall, load_network, price
from lionsim.network.fabrics import FABRICS, SOCKETS
from lionsim.network.profile import network_from_dict
from lionsim.network.sockets import GENERIC, SocketSettings
from tests.helpers.cli import one_line_exit_2

R = SOCKETS.channel_GBps
NCCL_HEAD = "[inter]\nalpha_us = 25.0\nbandwidth_GBps = {link}\n"


@pytest.mark.parametrize("settings, channels", [
    (GENERIC, 2),  # NCCL's default: 2 channels a NIC
    (SocketSettings(min_nchannels=4), 4),  # NVIDIA/nccl issue 450's tuning
    (SocketSettings(min_nchannels=1), 2),  # MIN_NCHANNELS only ever raises the 2 a NIC
    (SocketSettings(min_nchannels=64), 64),  # NCCL's MAXCHANNELS
])
def test_the_node_rate_is_channels_x_the_rate_a_channel(settings, channels):
    assert settings.channels == channels
    assert settings.node_GBps(R) == pytest.approx(channels * R, rel=1e-12)


def test_a_profiles_settings_set_the_price_of_a_ring_the_link_bounding_them(tmp_path):
    """4 nodes of one GPU: a ring all-reduce moves 2(N-1)/N n through each node at
    min(link, channels x R)."""
    n, ranks = 2**30, 4

    def ring_bandwidth_s(link: float, nccl: str) -> float:
        path = tmp_path / "net.toml"
        path.write_text('traits = "nccl"\nfabric = "sockets"\n' + NCCL_HEAD.format(link=link) + nccl)
        return price(CollectiveCall("all_reduce", n), ranks, load_network(path), "ring").bandwidth_s

    moved = 2 * (ranks - 1) / ranks * n
    assert ring_bandwidth_s(50.0, "") == pytest.approx(moved / (2 * R * 1e9), rel=1e-12)
    tuned = "[nccl]\nmin_nchannels = 4\n"
    assert ring_bandwidth_s(50.0, tuned) == pytest.approx(moved / (4 * R * 1e9), rel=1e-12)
    assert ring_bandwidth_s(1.5, tuned) == pytest.approx(moved / 1.5e9, rel=1e-12)  # the link binds first


def test_a_profiles_settings_are_written_back_and_read_again():
    data = {"inter": {"alpha_us": 25.0, "bandwidth_GBps": 10.0}, "nccl": {"min_nchannels": 3}}
    net = network_from_dict(data, source="s", default_name="s")
    assert net.sockets == SocketSettings(min_nchannels=3) and net.to_dict()["nccl"] == data["nccl"]
    assert network_from_dict(net.to_dict(), source="again", default_name="again").sockets == net.sockets
    assert "nccl" not in network_from_dict({"inter": data["inter"]}, source="s", default_name="s").to_dict()


@pytest.mark.parametrize("nccl, message", [
    ("min_nchannels = 0", "'nccl.min_nchannels' = 0 is out of range; accepted: a whole number from 1 to 64 (NCCL_MIN_NCHANNELS up to NCCL's MAXCHANNELS"),
    ("min_nchannels = 65", "'nccl.min_nchannels' = 65 is out of range; accepted: a whole number from 1 to 64 (NCCL_MIN_NCHANNELS up to NCCL's MAXCHANNELS"),
    ("min_nchannels = 2.5", "'nccl.min_nchannels' = 2.5 is not a whole number; accepted: a whole number from 1 to 64 (NCCL_MIN_NCHANNELS up to NCCL's MAXCHANNELS"),
    ('min_nchannels = "4"', "'nccl.min_nchannels' = '4' is not a number; accepted: a whole number from 1 to 64 (NCCL_MIN_NCHANNELS up to NCCL's MAXCHANNELS"),
    ("socket_nthreads = 2", "nccl.socket_nthreads is not priced: lionsim prices NCCL's socket transport per channel"),
    ("nsocks_perthread = 3", "nccl.nsocks_perthread is not priced"),
    ('nic = "aws"', "nccl.nic is not priced"),
    ("nchannels = 2", "unknown key 'nccl.nchannels'; accepted: nccl.min_nchannels"),
])
def test_bad_settings_are_refused_in_one_line(tmp_path, capsys, nccl, message):
    path = tmp_path / "bad.toml"
    path.write_text(NCCL_HEAD.format(link=10.0) + "[nccl]\n" + nccl + "\n")
    err = one_line_exit_2(["comm", "--network", str(path), "--traits", "nccl", "--workers", "2",
                           "--collective", "all_reduce", "--sizes", "1048576"], capsys, message)
    assert str(path) in err
    with pytest.raises(LionsimError):
        network_from_dict({"inter": {"alpha_us": 25.0, "bandwidth_GBps": 10.0}, "nccl": 4}, source="s",
                          default_name="s")


@pytest.mark.parametrize("fabric, alpha_us, named", [
    ('fabric = "ib"\n', 25.0, "'ib' (stated)"), ('fabric = "EFA"\n', 25.0, "'efa' (stated)"),
    ('fabric = "efa-host"\n', 25.0, "'efa-host' (stated)"), ('fabric = "tuning"\n', 25.0, "'tuning' (stated)"),
    ("", 2.0, "'ib' (inferred from the inter link's alpha below 10 us)"),
])
def test_min_nchannels_is_refused_where_the_fabric_does_not_price_channels(tmp_path, capsys, fabric, alpha_us, named):
    # only the sockets fabric prices per channel: elsewhere 4 and 2 channels priced the same, silently
    path = tmp_path / "net.toml"
    path.write_text('traits = "nccl"\n' + fabric + NCCL_HEAD.replace("25.0", str(alpha_us)).format(link=10.0)
                    + "[nccl]\nmin_nchannels = 4\n")
    err = one_line_exit_2(["comm", "--network", str(path), "--workers", "2", "--collective", "all_reduce",
                           "--sizes", "1048576"], capsys, "nccl.min_nchannels acts only on the sockets fabric")
    assert str(path) in err and named in err and "accepted here: nccl.version" in err


def test_a_hosts_rate_prices_a_host_bounce_fabric_and_is_refused_elsewhere(tmp_path, capsys):
    """efa-host copies every byte through host memory: a network stating its host's rate is priced at
    it (a ring over 4 one-GPU nodes moves 2(N-1)/N n at min(link, host)), written back and read
    again; on a fabric that does not bounce through the host the key is refused in one line."""
    n, ranks = 2**30, 4
    moved = 2 * (ranks - 1) / ranks * n

    def ring_bandwidth_s(fabric: str, nccl: str) -> float:
        path = tmp_path / "net.toml"
        path.write_text(f'traits = "nccl"\nfabric = "{fabric}"\n' + NCCL_HEAD.format(link=12.0) + nccl)
        return price(CollectiveCall("all_reduce", n), ranks, load_network(path), "ring").bandwidth_s

    cap = FABRICS.get("efa-host").cap_GBps
    assert ring_bandwidth_s("efa-host", "") == pytest.approx(moved / (cap * 1e9), rel=1e-12)
    assert ring_bandwidth_s("efa-host", "[nccl]\nbounce_GBps = 8.6\n") == pytest.approx(moved / 8.6e9, rel=1e-12)
    assert ring_bandwidth_s("efa-host", "[nccl]\nbounce_GBps = 40\n") == pytest.approx(moved / 12e9, rel=1e-12)
    data = {"inter": {"alpha_us": 25.0, "bandwidth_GBps": 10.0}, "fabric": "efa-host", "nccl": {"bounce_GBps": 8.6}}
    net = network_from_dict(data, source="s", default_name="s")
    assert net.to_dict()["nccl"] == {"bounce_GBps": 8.6} and "8.6 GB/s through the host" in net.sockets.describe()
    path = tmp_path / "ib.toml"
    path.write_text('traits = "nccl"\nfabric = "ib"\n' + NCCL_HEAD.format(link=12.0) + "[nccl]\nbounce_GBps = 8\n")
    err = one_line_exit_2(["comm", "--network", str(path), "--workers", "2", "--sizes", "1048576"], capsys,
                          "nccl.bounce_GBps acts only on the efa-host fabric")
    assert "'ib' (stated)" in err and 'fabric = "efa-host"' in err
    path.write_text('fabric = "efa-host"\n' + NCCL_HEAD.format(link=12.0) + "[nccl]\nbounce_GBps = 0\n")
    one_line_exit_2(["comm", "--network", str(path), "--workers", "2", "--sizes", "1048576"], capsys,
                    "'nccl.bounce_GBps' = 0 is out of range; accepted:")


@pytest.mark.parametrize("head", ['traits = "nccl"\nfabric = "ib"\n', 'traits = "gloo"\nfabric = "sockets"\n',
                                  'traits = "ideal"\n'])
def test_version_acts_on_every_fabric_and_min_nchannels_on_sockets_whatever_the_traits(tmp_path, head):
    # version: every fabric; a gloo or ideal profile may carry the sockets' channels for --traits nccl
    nccl = '[nccl]\nversion = "2.4.7"\n' if "ib" in head else "[nccl]\nmin_nchannels = 4\n"
    path = tmp_path / "net.toml"
    path.write_text(head + NCCL_HEAD.format(link=10.0) + nccl)
    net = load_network(str(path))
    assert net.sockets == (SocketSettings(version="2.4.7") if "ib" in head else SocketSettings(min_nchannels=4))
