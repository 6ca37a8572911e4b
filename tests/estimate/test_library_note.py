"""The breakdown caption's lines about the library that priced comm (lionsim.estimate.library_note):
a sockets cap that binds below the user's link is said with the fabric, why it was taken and what
lifts it; a profile fitted on gloo ranks is said to price a GPU with gloo's CPU sums."""

from __future__ import annotations

import pytest

from lionsim.network.fabrics import SOCKETS, TCP_ALPHA_US
from lionsim.network.sockets import CHANNELS_PER_NIC
from tests.helpers.cli import invoke_at

SMALL = ["estimate", "--model", "gpt2-124m", "--tokens-per-worker", "1024", "--workers", "16",
         "-s", "adamw@bf16-allreduce"]
"""A small model on 2 nodes of 8: priced in well under a second."""
CAP = CHANNELS_PER_NIC * SOCKETS.channel_GBps
"""NCCL's default socket transport a node: 2 channels a NIC at a channel's fitted rate (1.96 GB/s)."""


def words(text: str) -> str:
    return " ".join(text.split())


def profile(tmp_path, bandwidth: float, alpha_us: float = 25.0, extra: str = "") -> str:
    path = tmp_path / "mycluster.toml"
    path.write_text(f'name = "team"\nworkers_per_node = 8\ndevice = "h100"\n{extra}\n'
                    f"[inter]\nalpha_us = {alpha_us}\nbandwidth_GBps = {bandwidth}\n"
                    "[intra]\nalpha_us = 1.0\nbandwidth_GBps = 380.0\n")
    return str(path)


def test_a_link_faster_than_the_sockets_cap_is_said_with_the_inferred_fabric_and_what_lifts_it(tmp_path, monkeypatch):
    said = words(invoke_at(80, [*SMALL, "--network", profile(tmp_path, 2.9)], monkeypatch).stdout)
    assert "Inter link 2.9 GB/s a node, but priced at NCCL's lower cap of 1.96 GB/s" in said, said
    assert f"inferred: team names none and its inter alpha_us 25 >= {TCP_ALPHA_US:g} -> sockets" in said
    assert f"moves at most {CAP:g} GB/s a node whatever the link" in said and CAP == pytest.approx(1.96)
    for lift in ("[nccl] min_nchannels", 'fabric = "ib" in a profile', "--traits ideal"):
        assert lift in said
    # one colon, one "cap" before the reason (it read "priced at the cap (...): NCCL's sockets cap: its
    # transport"), and a full stop ending it before the next line
    assert "priced at NCCL's lower cap of 1.96 GB/s (fabric sockets, inferred" in said and ": NCCL's sockets transport moves" in said
    assert "sockets cap:" not in said and "(the link alone, no library's cap)." in said


def test_a_named_fabric_is_said_as_named(tmp_path, monkeypatch):
    said = words(invoke_at(80, [*SMALL, "--network", profile(tmp_path, 2.9, alpha_us=5.0, extra='fabric = "sockets"')],
                           monkeypatch).stdout)
    assert "(fabric sockets, named by team)" in said, said


def test_a_host_bounce_cap_names_its_source_and_what_lifts_it(tmp_path, monkeypatch):
    """efa-host: the fabric's cap is one g4dn GPU's; a profile stating its host's rate is priced at
    that rate, and the line says whose figure it is and names the key among the remedies."""
    from lionsim.network.fabrics import FABRICS

    fabric_cap = FABRICS.get("efa-host").cap_GBps
    said = words(invoke_at(80, [*SMALL, "--network", profile(tmp_path, 12.0, 2.0, 'fabric = "efa-host"')],
                           monkeypatch).stdout)
    assert f"moves at most {fabric_cap:g} GB/s a node whatever the link" in said, said
    assert "[nccl] bounce_GBps (what its hosts move through memory" in said and "its profile states" not in said
    stated = profile(tmp_path, 12.0, 2.0, 'fabric = "efa-host"')
    with open(stated, "a") as f:
        f.write("[nccl]\nbounce_GBps = 8.6\n")
    said = words(invoke_at(80, [*SMALL, "--network", stated], monkeypatch).stdout)
    assert "moves at most 8.6 GB/s a node (the host's rate its profile states, [nccl] bounce_GBps)" in said, said


def test_a_link_below_full_efficiency_says_what_it_moves(tmp_path, monkeypatch):
    path = profile(tmp_path, 11.7)
    text = open(path).read().replace("bandwidth_GBps = 11.7\n", "bandwidth_GBps = 11.7\nefficiency = 0.43\n")
    open(path, "w").write(text)
    said = words(invoke_at(80, [*SMALL, "--network", path], monkeypatch).stdout)
    assert f"Inter link 11.7 GB/s ({11.7 * 0.43:.3g} GB/s moved at efficiency 0.43) a node, but priced at NCCL's lower cap of" in said


@pytest.mark.parametrize("case", [
    {"bandwidth": 1.5},  # below the cap: the link binds, as the title's library says
    {"bandwidth": 2.9, "extra": "[nccl]\nmin_nchannels = 4"},  # 4 channels: 3.92 GB/s, above the link
    {"bandwidth": 2.9, "extra": 'fabric = "ib"'},  # RDMA: no cap
    {"bandwidth": 2.9, "options": ["--traits", "ideal"]},  # no library's cap
    {"bandwidth": 2.9, "options": ["--workers", "8"]},  # one node: nothing crosses
])
def test_no_line_where_the_cap_does_not_bind(tmp_path, monkeypatch, case):
    argv = [*SMALL, "--network", profile(tmp_path, case["bandwidth"], extra=case.get("extra", "")),
            *case.get("options", [])]
    said = words(invoke_at(80, argv, monkeypatch).stdout)
    assert "priced at the cap" not in said and "whatever the link" not in said, said


GLOO_FIT = ('name = "fit"\n[inter]\nalpha_us = 25.0\nbandwidth_GBps = 1.3635\n'
            '[traits]\nname = "fit"\nbackend = "{backend}"\nhost_GBps = 1.363\n'
            '[traits.reduce_GBps]\nbfloat16 = 0.1729\n'
            '[traits.ops.all_reduce]\nfloor_us = 360.4\nalgorithm = "ring"\n'
            '[measured]\nbackend = "{backend}"\nranks = 2\n')
"""A profile as `lionsim comm --backend gloo --ranks 2 --fit` writes it, cut to what prices an all-reduce."""


def fitted(tmp_path, backend: str = "gloo") -> str:
    path = tmp_path / "fit.toml"
    path.write_text(GLOO_FIT.format(backend=backend))
    return str(path)


GLOO_ARGS = ["estimate", "--model", "gpt2-124m", "--tokens-per-worker", "1024", "--workers", "2",
             "-s", "adamw@bf16-allreduce"]


def test_traits_fitted_on_gloo_are_said_to_price_a_gpu_with_cpu_sums(tmp_path, monkeypatch):
    said = words(invoke_at(80, [*GLOO_ARGS, "--network", fitted(tmp_path)], monkeypatch).stdout)
    assert ("fit.toml's library (fit) was measured on 2 gloo ranks (CPU sums at 0.173 GB/s for bfloat16); "
            "GPUs reduce on the device: --traits nccl prices NCCL on this link.") in said, said


@pytest.mark.parametrize("backend, options", [("gloo", ["--traits", "nccl"]), ("nccl", [])])
def test_no_gloo_line_where_nccl_prices_or_the_fit_is_nccls(tmp_path, monkeypatch, backend, options):
    said = words(invoke_at(80, [*GLOO_ARGS, "--network", fitted(tmp_path, backend), *options], monkeypatch).stdout)
    assert "gloo ranks" not in said and "CPU sums" not in said, said
