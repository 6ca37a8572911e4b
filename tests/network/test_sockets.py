"""NCCL's socket-transport settings (lionsim.network.sockets): the per-node rate they give the
sockets fabric, checked against the rule worked by hand from NCCL's net_socket.cc and
ncclTopoPostset (channels x threads a connection x the fitted rate a thread, the link bounding
it); a profile's [nccl] table acts; bad values are refused in one line, exit 2. Never a timing."""

from __future__ import annotations

import pytest

from lionsim.errors import LionsimError
from lionsim.network import CollectiveCall, load_network, price
from lionsim.network.fabrics import SOCKETS
from lionsim.network.profile import network_from_dict
from lionsim.network.sockets import GENERIC, SocketSettings
from tests.helpers.cli import one_line_exit_2

R = SOCKETS.thread_GBps
NCCL_HEAD = "[inter]\nalpha_us = 25.0\nbandwidth_GBps = {link}\n"


@pytest.mark.parametrize("settings, channels, threads, sockets", [
    (GENERIC, 2, 1, 0),  # generic NIC: 0 helper threads, the proxy thread on the control socket
    (SocketSettings(nic="aws"), 2, 2, 16),  # ENA: 2 threads x 8 sockets
    (SocketSettings(nic="gcp"), 2, 4, 4),  # gVNIC: 4 threads x 1 socket
    (SocketSettings(socket_nthreads=2, min_nchannels=4), 4, 2, 2),  # NVIDIA/nccl issue 450's tuning
    (SocketSettings(nic="gcp", socket_nthreads=4, nsocks_perthread=3), 2, 4, 12),
    (SocketSettings(min_nchannels=1), 2, 1, 0),  # MIN_NCHANNELS only ever raises the 2 a NIC
    (SocketSettings(nic="aws", nsocks_perthread=32), 2, 2, 64),  # at NCCL's 64 sockets a connection
    (SocketSettings(nsocks_perthread=4), 2, 1, 0),  # sockets per thread without threads: still none
    (SocketSettings(socket_nthreads=16, nsocks_perthread=4, min_nchannels=64), 64, 16, 64),
])
def test_the_node_rate_is_channels_x_threads_x_the_rate_a_thread(settings, channels, threads, sockets):
    assert (settings.channels, settings.moving_threads, settings.sockets) == (channels, threads, sockets)
    assert settings.node_GBps(R) == pytest.approx(channels * threads * R, rel=1e-12)


def test_a_profiles_settings_set_the_price_of_a_ring_the_link_bounding_them(tmp_path):
    """4 nodes of one GPU: a ring all-reduce moves 2(N-1)/N n through each node at
    min(link, channels x threads x R)."""
    n, ranks = 2**30, 4

    def ring_bandwidth_s(link: float, nccl: str) -> float:
        path = tmp_path / "net.toml"
        path.write_text('traits = "nccl"\nfabric = "sockets"\n' + NCCL_HEAD.format(link=link) + nccl)
        return price(CollectiveCall("all_reduce", n), ranks, load_network(path), "ring").bandwidth_s

    moved = 2 * (ranks - 1) / ranks * n
    assert ring_bandwidth_s(50.0, "") == pytest.approx(moved / (2 * 1 * R * 1e9), rel=1e-12)
    assert ring_bandwidth_s(50.0, '[nccl]\nnic = "aws"\n') == pytest.approx(moved / (2 * 2 * R * 1e9), rel=1e-12)
    tuned = "[nccl]\nsocket_nthreads = 2\nmin_nchannels = 4\n"
    assert ring_bandwidth_s(50.0, tuned) == pytest.approx(moved / (4 * 2 * R * 1e9), rel=1e-12)
    assert ring_bandwidth_s(1.5, tuned) == pytest.approx(moved / 1.5e9, rel=1e-12)  # the link binds first


def test_a_profiles_settings_are_written_back_and_read_again():
    data = {"inter": {"alpha_us": 25.0, "bandwidth_GBps": 10.0}, "nccl": {"nic": "gcp", "nsocks_perthread": 3}}
    net = network_from_dict(data, source="s", default_name="s")
    assert net.sockets == SocketSettings(nic="gcp", nsocks_perthread=3) and net.to_dict()["nccl"] == data["nccl"]
    assert network_from_dict(net.to_dict(), source="again", default_name="again").sockets == net.sockets
    assert "nccl" not in network_from_dict({"inter": data["inter"]}, source="s", default_name="s").to_dict()


@pytest.mark.parametrize("nccl, message", [
    ("socket_nthreads = 0", "nccl.socket_nthreads = 0 is not accepted; an integer from 1 to 16"),
    ("nsocks_perthread = -1", "nccl.nsocks_perthread = -1 is not accepted; an integer from 1 to 64"),
    ("min_nchannels = 0", "nccl.min_nchannels = 0 is not accepted; an integer from 1 to 64"),
    ("socket_nthreads = 17", "nccl.socket_nthreads = 17 is not accepted; an integer from 1 to 16"),
    ("socket_nthreads = 8\nnsocks_perthread = 9", "72 sockets a connection, above NCCL's limit of 64"),
    ('nic = "aws"\nnsocks_perthread = 33', "66 sockets a connection, above NCCL's limit of 64"),
    ('socket_nthreads = "2"', "nccl.socket_nthreads = '2' is not accepted"),
    ('nic = "azure"', "nccl.nic = 'azure' is not a NIC lionsim knows; accepted: generic, aws, gcp"),
    ("nthreads = 2", "unknown key 'nccl.nthreads'; accepted: nccl.nic, nccl.socket_nthreads"),
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
