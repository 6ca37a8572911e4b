"""--need's answer and a bandwidth sweep's values are what the inter link moves, after the network's
efficiency; the link's own rate that moves it is that / efficiency (lionsim.reports.rates). Checked
against the closed form of a flat ring without latency, on a link stated at 2 GB/s, efficiency 0.5."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from lionsim.estimate import EstimateConfig, estimate, resolve
from lionsim.estimate.need import REL_TOL, Need, need_rows
from lionsim.estimate.sweep import run_sweep
from tests.helpers.cli import invoke_at

HALF = """name = "half"
traits = "ideal"
[inter]
alpha_us = 0.0
bandwidth_GBps = 2.0
efficiency = 0.5
"""
N, PARAMS, U = 8, 10**7, 0.5
ARGS = ["--params", str(PARAMS), "--tokens-per-worker", "4096", "--workers", str(N), "--overlap", "none",
        "--kernels", "ideal", "--algorithm", "ring", "-s", "sgdm@fp32-allreduce"]


@pytest.fixture
def half(tmp_path):
    path = tmp_path / "half.toml"
    path.write_text(HALF)
    return str(path)


def config(network: str) -> EstimateConfig:
    return EstimateConfig(params=PARAMS, tokens_per_worker=4096, workers=N, network=network, overlap="none",
                          kernels="ideal", algorithm="ring", strategies=["sgdm@fp32-allreduce"])


def closed_form(network: str) -> float:
    """GB/s moved at which busy / step = U: step = busy + 2 (N-1)/N S / B (a flat ring, alpha 0)."""
    row = estimate(config(network)).iloc[0]
    busy = row.compute_s + row.encode_s + row.decode_s + row.update_s
    return 2 * (N - 1) / N * 4 * PARAMS / (busy / U - busy) / 1e9


def test_the_need_is_moved_and_the_link_rate_is_it_over_the_efficiency(half, monkeypatch):
    moved = closed_form(half)
    (record,) = need_rows(resolve(config(half)), Need(U))
    assert record["bandwidth_needed_GBps"] == pytest.approx(moved, rel=2 * REL_TOL)
    assert record["link_needed_GBps"] == pytest.approx(moved / 0.5, rel=2 * REL_TOL)
    said = " ".join(invoke_at(80, ["estimate", *ARGS, "--network", half, "--need", f"utilisation={U}"],
                              monkeypatch).stdout.split())
    assert f"sgdm {moved:.4g} {moved * 8:.4g} {moved * 8 / 0.5:.4g} " in said, said  # GB/s, Gbit/s, link Gbit/s
    assert ("needed: what the inter link moves a node on half, after its efficiency 0.5; link: the link's own rate "
            "that moves it, needed / 0.5") in said, said


def test_a_bandwidth_sweep_point_at_what_the_given_link_moves_prices_its_step(half, monkeypatch):
    """The link stated at 2 GB/s moves 1 GB/s: the sweep's point 1 is the network given, its point 2 is not."""
    given = estimate(config(half)).iloc[0]["step_s"]
    rows = run_sweep(config(half), "bandwidth=1,2").rows
    assert rows.loc[rows["sweep_value"] == 1, "step_s"].iloc[0] == pytest.approx(given, rel=1e-12)
    assert rows.loc[rows["sweep_value"] == 2, "step_s"].iloc[0] < given
    assert (rows["inter_efficiency"] == 0.5).all() and (rows["network_GBps"] == 1.0).all()
    said = " ".join(invoke_at(80, ["estimate", *ARGS, "-s", "lion", "--network", half, "--sweep", "bandwidth=1,2"],
                              monkeypatch).stdout.split())
    assert ("bandwidth: what the inter link moves a node on half, after its efficiency 0.5; the link's own rate that "
            "moves it is bandwidth / 0.5") in said, said


def test_at_efficiency_one_the_columns_agree_and_no_link_column_is_shown(tmp_path, monkeypatch):
    path = tmp_path / "whole.toml"
    path.write_text(HALF.replace("bandwidth_GBps = 2.0\nefficiency = 0.5", "bandwidth_GBps = 1.0").replace("half", "whole"))
    out = invoke_at(80, ["estimate", *ARGS, "--network", str(path), "--need", f"utilisation={U}", "--format", "csv"],
                    monkeypatch).stdout
    frame = pd.read_csv(io.StringIO(out))
    assert (frame["link_needed_GBps"] == frame["bandwidth_needed_GBps"]).all() and (frame["inter_efficiency"] == 1).all()
    assert frame["bandwidth_needed_GBps"].iloc[0] == pytest.approx(closed_form(str(path)), rel=2 * REL_TOL)
    said = " ".join(invoke_at(80, ["estimate", *ARGS, "--network", str(path), "--need", f"utilisation={U}"],
                              monkeypatch).stdout.split())
    assert "link Gbit/s" not in said and "needed: the inter link's rate a node on whole (its efficiency is 1" in said


def test_each_rate_column_has_one_unambiguous_header_and_the_csv_keeps_its_columns(half, monkeypatch):
    """The link's rate is headed "link Gbit/s" on one line (folded over two, its "Gbit/s" stood beside the
    needed rate's as a second bare "Gbit/s"); the CSV's columns are the data's, as they were."""
    lines = invoke_at(80, ["estimate", *ARGS, "--network", half, "--need", f"utilisation={U}"], monkeypatch).stdout
    lines = lines.splitlines()
    header = [line for line in lines if line.split()[:1] == ["run"]][-1]  # the need table's, under the step table
    assert header.split() == ["run", "GB/s", "Gbit/s", "link", "Gbit/s", "now", "note"]
    assert "link Gbit/s" in header and not [line for line in lines if line.strip() == "link"]
    out = invoke_at(80, ["estimate", *ARGS, "--network", half, "--need", f"utilisation={U}", "--format", "csv"],
                    monkeypatch).stdout
    columns = list(pd.read_csv(io.StringIO(out)).columns)
    assert {"bandwidth_needed_GBps", "link_needed_GBps"} <= set(columns)
    assert not [c for c in columns if "Gbit" in c or " " in c]
