"""`estimate --need utilisation=U`: the bandwidth solved against a closed form (a flat ring with
no latency) and against a brute-force grid over the priced step; unreachable targets, one node,
and bad input."""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from lionsim.cli import app
from lionsim.errors import LionsimError
from lionsim.estimate import EstimateConfig, estimate, estimate_rows, resolve
from lionsim.estimate.need import REL_TOL, Need, busy_share, need_rows, solve
from lionsim.estimate.plain import parse_need
from lionsim.estimate.sweep import with_bandwidth
from tests.helpers.cli import invoke_at, run_cli

FLAT = """name = "flat-alpha0"
workers_per_node = 1
traits = "ideal"
description = "a flat network without latency"
[inter]
alpha_us = 0.0
bandwidth_GBps = 1.0
"""
from lionsim.network.fabrics import SOCKETS

CAP = 2 * SOCKETS.channel_GBps
"""GB/s a node NCCL's sockets move with the generic settings: 2 channels x 1 thread (lionsim.network.sockets)."""


@pytest.fixture
def flat(tmp_path):
    path = tmp_path / "flat.toml"
    path.write_text(FLAT)
    return str(path)


@pytest.mark.parametrize("u", [0.3, 0.5, 0.9])
def test_a_flat_ring_without_latency_needs_its_closed_form(flat, u):
    # a ring all-reduce of S bytes over N workers, alpha 0, nothing overlapped:
    # step = busy + 2 (N-1)/N S / B with busy = compute + local (the worker's own work), so
    # busy / step = U at B = 2 (N-1)/N S / (busy / U - busy)
    n, params = 8, 10**8
    cfg = EstimateConfig(params=params, tokens_per_worker=65536, workers=n, network=flat, overlap="none",
                         kernels="ideal", algorithm="ring", strategies=["sgdm@fp32-allreduce", "adamw@bf16-allreduce"])
    frame = estimate(cfg)
    for row, record, size in zip(frame.itertuples(), need_rows(resolve(cfg), Need(u)), (4 * params, 2 * params)):
        busy = row.compute_s + row.encode_s + row.decode_s + row.update_s
        closed = 2 * (n - 1) / n * size / (busy / u - busy) / 1e9
        assert record["bandwidth_needed_GBps"] == pytest.approx(closed, rel=2 * REL_TOL)
        assert record["need_note"] == ""


def test_the_solved_bandwidth_is_where_a_brute_force_grid_first_reaches_u():
    # independent of the bisection: price each strategy's step on a fine geometric grid of
    # inter-node bandwidths and find the first point whose compute share reaches U
    u = 0.6
    # on InfiniBand: over NCCL's sockets a faster link stops helping at the socket transport's cap
    cfg = EstimateConfig(params=3 * 10**8, tokens_per_worker=16384, workers=32, network="a100x8-4hdr",
                         strategies=["adamw@bf16-allreduce", "dlion-mavo", "onebit-adam", "diloco"])
    r = resolve(cfg)
    grid = np.geomspace(0.3, 300.0, 241)  # 2.9% apart
    shares = np.array([[1 - row["comm_exposed_s"] / row["step_s"]  # the share not waiting for the network
                        for row in estimate_rows(r, r.workers, with_bandwidth(r.network, b))] for b in grid])
    for i, record in enumerate(need_rows(r, Need(u))):
        solved = record["bandwidth_needed_GBps"]
        first = int(np.argmax(shares[:, i] >= u))
        assert shares[first, i] >= u > shares[first - 1, i] and first > 0, "the grid brackets the target"
        assert grid[first - 1] * (1 - 1e-9) <= solved <= grid[first] * (1 + 1e-9), (record, grid[first - 1:first + 1])


def test_a_target_no_bandwidth_reaches_is_nan_with_a_note(tmp_path):
    # a 1 ms latency per message on a flat ring of 8: a 1e6-parameter all-reduce waits 14 ms at
    # any bandwidth, beside a step of a few ms of compute
    path = tmp_path / "slow.toml"
    path.write_text(FLAT.replace("alpha_us = 0.0", "alpha_us = 1000.0"))
    cfg = EstimateConfig(params=10**6, tokens_per_worker=1024, workers=8, network=str(path),
                         strategies=["adamw@bf16-allreduce"])
    (record,) = need_rows(resolve(cfg), Need(0.5))
    assert math.isnan(record["bandwidth_needed_GBps"])
    assert record["need_note"].startswith("unreachable: compute is at most")


def test_a_fabric_whose_transport_caps_a_node_says_the_cap_stops_it():
    # NCCL over TCP sockets moves at most CAP a node with its generic settings (lionsim.network.sockets): a 1.3B model's
    # bf16 all-reduce per 8,192-token step cannot hide behind compute at any link rate; on RDMA
    # (the same nodes on a100x8-4hdr's InfiniBand, no cap) the same target is reached
    base = dict(model="gpt2-1.3b", tokens_per_worker=8192, workers=16, strategies=["adamw@bf16-allreduce"])
    (capped,) = need_rows(resolve(EstimateConfig(network="h100x8-100gbe", **base)), Need(0.9))
    assert math.isnan(capped["bandwidth_needed_GBps"])
    assert capped["need_note"].startswith("unreachable, compute at most")
    assert f"NCCL's sockets transport moves at most {CAP:g} GB/s a node" in capped["need_note"]
    (rdma,) = need_rows(resolve(EstimateConfig(network="a100x8-4hdr", **base)), Need(0.9))
    assert rdma["bandwidth_needed_GBps"] > CAP and rdma["need_note"] == ""


def test_an_answer_above_the_cap_of_the_networks_fabric_says_so():
    """The 10gbe preset runs the ideal library (no cap), its fabric NCCL's sockets (CAP a node):
    a need above CAP is reachable only uncapped, and the note names the cap; below it, no note."""
    base = dict(model="gpt2-124m", workers=16, strategies=["adamw@bf16-allreduce"], network="10gbe")
    (high,) = need_rows(resolve(EstimateConfig(**base)), Need(0.9))
    assert high["bandwidth_needed_GBps"] > CAP and f"{CAP:g} GB/s a node" in high["need_note"]
    assert "sockets" in high["need_note"]
    (low,) = need_rows(resolve(EstimateConfig(**base)), Need(0.01))
    assert low["bandwidth_needed_GBps"] < CAP and low["need_note"] == ""


@pytest.mark.parametrize("value, target, text", [(0.8996, 0.9, "89.96%"), (0.89999, 0.9, "89.999%"),
                                                 (0.9, 0.9, "90.0%"), (0.90004, 0.9, "90.004%"),
                                                 (0.2312, 0.9, "23.1%")])
def test_a_share_is_never_printed_on_the_other_side_of_the_target(value, target, text):
    from lionsim.estimate.need import percent, target_text

    assert percent(value, target) == text
    assert target_text(0.955) == "95.5%" and target_text(0.9) == "90%"


def test_one_node_needs_no_inter_node_bandwidth():
    cfg = EstimateConfig(model="gpt2-345m", tokens_per_worker=16384, workers=8, network="dgx-h100",
                         strategies=["adamw@bf16-allreduce"])
    (record,) = need_rows(resolve(cfg), Need(0.5))
    assert record["bandwidth_needed_GBps"] == 0.0 and record["need_note"] == "needs no inter-node bandwidth"


def test_the_cli_adds_the_columns_and_a_table_line_per_run():
    args = ["estimate", "--params", "1.3e9", "--workers", "64", "--network", "a100x8-4hdr",
            "-s", "adamw@bf16-allreduce", "-s", "dlion-mavo"]
    csv = CliRunner().invoke(app, [*args, "--tokens-per-worker", "32768", "--need", "utilization=0.8",
                                   "--format", "csv"])
    assert csv.exit_code == 0, csv.output
    frame = pd.read_csv(io.StringIO(csv.stdout))
    assert (frame["bandwidth_needed_GBps"] > 0).all() and (frame["need_utilisation"] == 0.8).all()
    table = CliRunner().invoke(app, [*args, "--tokens-per-worker", "1024", "--need", "utilisation=0.95"])
    assert table.exit_code == 0, table.output
    assert "inter-node bandwidth for compute at 95% of the step" in table.stdout
    assert table.stdout.count("GB/s") >= 1 and "adamw" in table.stdout and "dlion-mavo" in table.stdout


def test_the_cap_shared_by_unreachable_runs_is_said_once_under_the_table_with_both_remedies(monkeypatch):
    """Each run the sockets fabric's cap stops is marked [1] in the table and the reason (the cap named
    first, more channels through a profile's [nccl] min_nchannels, an RDMA fabric, --traits ideal)
    printed once under it,
    at 80 columns; estimate.csv's need_note keeps each run's whole text."""
    args = ["estimate", "--model", "gpt2-1.3b", "--tokens-per-worker", "32768", "--workers", "64", "--network",
            "h100x8-100gbe", "-s", "adamw@bf16-allreduce", "-s", "dlion-mavo", "-s", "onebit-adam", "--need",
            "utilisation=0.9"]
    remedies = ("[nccl] min_nchannels", "NCCL_MIN_NCHANNELS", "NCCL's socket settings", 'fabric = "ib"',
                "--network dgx-h100", "--traits ideal")
    table = invoke_at(80, args, monkeypatch)
    need = table.stdout[table.stdout.index("inter-node bandwidth"):]
    assert max(map(len, need.splitlines())) <= 80
    words = " ".join(need.split())
    assert words.count(f"at most {CAP:g} GB/s a node whatever the link") == 1
    assert words.count("of the step [1]") == 3 and words.count("[1] NCCL's sockets transport moves") == 1
    assert all(words.count(remedy) == 1 for remedy in remedies), words
    # the breakdown's caption leaves its own line out (the cap was printed twice), and [1] ends once
    everything = " ".join(table.stdout.split())
    assert everything.count("whatever the link") == 1 and "Inter link" not in everything, everything
    assert "no library's cap). " in words + " " and "cap).." not in words
    csv = CliRunner().invoke(app, [*args, "--format", "csv"])
    notes = pd.read_csv(io.StringIO(csv.stdout))["need_note"]
    assert len(notes) == 3 and all(f"at most {CAP:g} GB/s a node" in n and all(r in n for r in remedies) for n in notes)


@pytest.mark.parametrize("text", ["x", "utilisation", "utilisation=", "utilisation=1", "utilisation=0",
                                  "utilisation=-0.5", "utilisation=1.5", "utilisation=abc", "utilisation=nan",
                                  "speed=0.5"])
def test_bad_need_is_refused(text):
    with pytest.raises(LionsimError, match="bad --need"):
        parse_need(text)


def test_both_spellings_are_accepted():
    assert parse_need("utilisation=0.95") == parse_need("Utilization = 0.95") == Need(0.95)


@pytest.mark.parametrize("text", ["x", "utilisation=1.5"])
def test_bad_need_on_the_command_line_is_one_line_exit_2_and_writes_nothing(tmp_path, capsys, text):
    out = tmp_path / "out"
    code, stdout, stderr = run_cli(["estimate", "--params", "1e8", "--tokens-per-worker", "100", "--need", text,
                                    "--out", str(out)], capsys)
    assert code == 2 and stdout == ""
    assert "bad --need" in stderr and len(stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_need_and_sweep_are_refused_together(tmp_path, capsys):
    code, _, stderr = run_cli(["estimate", "--params", "1e8", "--tokens-per-worker", "100", "--need",
                               "utilisation=0.5", "--sweep", "bandwidth=1,2", "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and "--need" in stderr and not (tmp_path / "o").exists()




def test_solve_finds_the_lowest_rate_when_a_flip_lowers_the_share():
    # a share that reaches the target on [2, 5) GB/s, falls below it (a flip) and reaches it again
    # from 1,000: the lowest rate is 2, which a bisection assuming a rising share misses
    def share(b):
        return 0.1 if b < 2 else 0.6 if b < 5 else 0.3 if b < 1000 else 0.8
    gbps, note = solve(share, 0.5)
    assert gbps == pytest.approx(2.0, rel=2 * REL_TOL) and note == ""
    gbps, note = solve(lambda b: 0.6 if 2 <= b < 5 else 0.3, 0.7)
    assert math.isnan(gbps) and "at most 60.0%" in note


def test_need_on_a_flip_finds_the_rate_before_it():
    # NCCL on 2 x 8 A100 over InfiniBand: past ~240 GB/s a link as fast as the NVLink per GPU flips
    # NCCL's choice for the 1.3B model's buckets to one the ib fabric prices slower (LL128), and the
    # share falls from 81% to 65%, back above 80% only past ~450 GB/s; an 80% target is met just below
    # the flip (the brute-force grid), the lowest rate that meets it (compute as an H100's, where the
    # flip sits between two 80% points; the preset's own a100-40gb computes slower and never drops below)
    cfg = EstimateConfig(model="gpt2-1.3b", tokens_per_worker=2048, workers=16, network="a100x8-4hdr",
                         device="h100", strategies=["adamw@bf16-allreduce"])
    r = resolve(cfg)
    grid = np.geomspace(10.0, 10**4, 241)
    shares = np.array([busy_share(estimate_rows(r, r.workers, with_bandwidth(r.network, b))[0]) for b in grid])
    first = int(np.argmax(shares >= 0.80))
    assert shares[first] >= 0.80 and (shares[first:] < 0.80).any(), "the share falls below the target past the flip"
    (record,) = need_rows(r, Need(0.80))
    assert grid[first - 1] * (1 - 1e-9) <= record["bandwidth_needed_GBps"] <= grid[first] * (1 + 1e-9)
    assert record["need_note"] == ""


def test_the_table_defines_unreachable_only_where_a_row_is(monkeypatch):
    """The caption's "Unreachable: ..." says what an unreachable row means: printed where some row has
    no bandwidth (NaN in estimate.csv), left out where every row was solved."""
    base = ["estimate", "--model", "gpt2-1.3b", "--tokens-per-worker", "32768", "--workers", "64", "-s",
            "adamw@bf16-allreduce", "-s", "dlion-mavo"]
    for network, need in (("h100x8-100gbe", "utilisation=0.9"), ("10gbe", "utilisation=0.5")):
        args = [*base, "--network", network, "--need", need]
        words = " ".join(invoke_at(80, args, monkeypatch).stdout.split())
        solved = pd.read_csv(io.StringIO(CliRunner().invoke(app, [*args, "--format", "csv"]).stdout))
        unreachable = solved["bandwidth_needed_GBps"].isna().any()
        assert ("Unreachable: per-call latencies" in words) == unreachable, (network, words)
        assert unreachable == (network == "h100x8-100gbe")  # both kinds are met: the test can fail
