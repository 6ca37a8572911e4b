"""Hierarchical votes and uneven workers end to end: bench on the simulator and on 4 gloo ranks
grouped as 2 nodes of 2, estimate's bytes across nodes against the closed form, the plots and
the report."""

import math

import numpy as np
import pandas as pd
import pytest

from lionsim.bench import BenchConfig, run_bench
from lionsim.cli.app import main
from lionsim.estimate import EstimateConfig, estimate
from lionsim.network import IDEAL, price
from lionsim.network.presets import NETWORKS
from lionsim.transports.abstain import FLAG_CALL

TWO_NODES = """workers_per_node = 2
[inter]
alpha_us = 25.0
bandwidth_GBps = 1.17
[intra]
alpha_us = 1.0
bandwidth_GBps = 100.0
"""
RUNS = ["dlion-mavo@int8-allreduce", "dlion-mavo@hier-exact", "dlion-mavo@hier-1bit"]


def cli(argv: list[str]) -> int:
    """`lionsim ARGV`'s exit code."""
    try:
        main(argv)
    except SystemExit as e:
        return e.code or 0
    return 0


def losses(steps: pd.DataFrame, transport: str) -> list[float]:
    return steps[steps["transport"] == transport].sort_values("step")["loss"].tolist()


def test_bench_hier_exact_trains_as_the_flat_vote_and_hier_1bit_reports_its_agreement():
    cfg = BenchConfig(workload="mlp", workers=16, network="h100x8-10gbe", steps=8, eval_every=100,
                      strategies=[*RUNS, "dlion-mavo@a2a-1bit"])
    steps = run_bench(cfg).steps
    assert losses(steps, "hier-exact") == losses(steps, "int8-allreduce") == losses(steps, "a2a-1bit")
    agreement = steps[steps["transport"] == "hier-1bit"]["vote_agreement"]
    assert agreement.between(0, 1).all() and agreement.min() < 1  # 2 nodes of 8: node majorities differ
    assert steps[steps["transport"] != "hier-1bit"]["vote_agreement"].isna().all()
    flat, hier = (steps[steps["transport"] == t]["wire_bytes"].iloc[0] for t in ("a2a-1bit", "hier-exact"))
    assert hier < flat


def test_estimate_64_workers_on_8_h100_nodes_sends_across_nodes_by_the_closed_form():
    """n parameters, g = 8 per node, M = 8 nodes, d = 2 downlink bits (even N, sign(0) = 0),
    b = ceil(log2(g + 1)) = 4 bits per node sum; bytes one node sends across nodes (its g workers'
    inter phases, each on 1/g of the vector):
        int8-allreduce  2 (M-1)/M n                a2a-1bit    (M-1)/M (g n/8 + n d / 8)
        hier-exact      (M-1)/M n (b + d) / 8      hier-1bit   (M-1)/M n (2 + 2) / 8
    (a node's 8-vote majority can tie: 2 bits; the 8 node votes' too), plus the 1-byte flag; the ideal
    library, whose cheapest plan is the hierarchical one (NCCL's would run a flat ring)."""
    n, g, m, d = 8 * 64 * 1_000_000, 8, 8, 2
    rows = estimate(EstimateConfig(params=n, tokens_per_worker=1024, workers=64, network="h100x8-10gbe",
                                   traits="ideal", overlap="none", strategies=["adamw@bf16-allreduce", *RUNS, "dlion-mavo@a2a-1bit"]))
    across = dict(zip(rows["transport"], rows["inter_bytes"]))
    flag = math.ceil(price(FLAG_CALL, 64, NETWORKS.get("h100x8-10gbe").with_traits(IDEAL)).inter_bytes - 1e-9)
    share = (m - 1) / m
    assert across["int8-allreduce"] == pytest.approx(2 * share * n, rel=1e-9)
    assert across["a2a-1bit"] - flag == pytest.approx(share * (g * n / 8 + n * d / 8), rel=1e-9)
    assert across["hier-exact"] - flag == pytest.approx(share * n * (4 + d) / 8, rel=1e-9)
    assert across["hier-1bit"] - flag == pytest.approx(share * n * (2 + 2) / 8, rel=1e-9)
    assert (across["a2a-1bit"] - flag) / (across["hier-exact"] - flag) == pytest.approx((g + d) / (4 + d))
    assert across["int8-allreduce"] / (across["hier-exact"] - flag) == pytest.approx(16 / (4 + d))
    step = dict(zip(rows["transport"], rows["step_s"]))
    assert step["hier-exact"] < step["a2a-1bit"] < step["int8-allreduce"]


@pytest.mark.slow
def test_estimate_sweep_draws_the_hierarchy_plot_and_report_shows_it(tmp_path, capsys):
    out = tmp_path / "est"
    code = cli(["estimate", "--model", "gpt2-124m", "--network", "h100x8-100gbe", "--sweep", "workers=16,64,256",
                 "-s", "dlion-mavo@a2a-1bit", "-s", "dlion-mavo@hier-exact", "--compute-spread", "lognormal:0.2",
                 "--out", str(out)])
    assert code == 0
    text = capsys.readouterr().out
    said = " ".join(text.split())  # the table at --workers 8 sits on one node: no `across`, a line saying so
    header = next(line for line in text.splitlines() if line.strip().startswith("run "))
    assert "All 8 workers sit on one node of h100x8-100gbe (8 a node)" in said and "across" not in header
    assert "uneven workers: lognormal:0.2, 8 workers (exact)" in text
    assert {"hierarchy.png", "hierarchy.svg", "sweep.png"} <= {p.name for p in out.iterdir()}
    sweep = pd.read_csv(out / "sweep.csv")
    assert (sweep["step_p99_s"] > sweep["step_p50_s"]).all() and (sweep["spread_method"] == "exact").all()
    (out / "hierarchy.png").unlink()
    assert cli(["report", str(out)]) == 0
    report = (out / "report.md").read_text()
    assert "![hierarchy](hierarchy.png)" in report and "Bytes one node sends across nodes" in report
    assert "Step time p99 (uneven workers)" in report and (out / "hierarchy.png").is_file()


@pytest.mark.slow
@pytest.mark.plots  # checks the PNG it renders
def test_bench_draws_the_step_time_distribution(tmp_path):
    out = tmp_path / "run"
    code = cli(["bench", "-w", "mlp", "-n", "4", "--steps", "4", "-s", "adamw", "-s", "dlion-mavo",
                 "--compute-spread", "lognormal:0.3", "--out", str(out)])
    assert code == 0
    assert (out / "step_time_distribution.png").stat().st_size > 1000
    summary = pd.read_csv(out / "summary.csv")
    steps = pd.read_csv(out / "steps.csv")
    for label, rows in steps.groupby("strategy"):
        row = summary[summary["strategy"] == label].iloc[0]
        for q, col in ((0.5, "step_p50_s"), (0.99, "step_p99_s")):  # nearest rank: a step that happened
            assert row[col] == pytest.approx(float(np.sort(rows["step_s"])[math.ceil(q * len(rows)) - 1]))
        assert row["wait_s"] == pytest.approx(rows["wait_s"].mean()) and row["wait_s"] > 0


@pytest.mark.slow
def test_gloo_ranks_as_two_nodes_of_two_with_a_straggler(tmp_path, capsys):
    """4 gloo ranks on this machine grouped as 2 nodes of 2: hier-exact trains exactly as the flat
    vote and as the simulator; --compute-spread slow:1:3 makes one rank sleep, and the measured
    per-rank compute shows it."""
    net = tmp_path / "two.toml"
    net.write_text(TWO_NODES)
    common = ["bench", "-w", "mlp", "--model-size", "tiny", "-n", "4", "--steps", "6", "--eval-every", "100",
              "--network", str(net), *sum((["-s", r] for r in RUNS), [])]
    # 4 processes on a busy 2-core machine: a generous collective timeout
    code = cli([*common, "--backend", "gloo", "--ranks", "4", "--timeout", "300", "--compute-spread", "slow:1:3",
                "--out", str(tmp_path / "gloo")])
    assert code == 0, capsys.readouterr().err
    assert cli([*common, "--compute", "measured", "--out", str(tmp_path / "sim")]) == 0
    real, sim = pd.read_csv(tmp_path / "gloo" / "steps.csv"), pd.read_csv(tmp_path / "sim" / "steps.csv")
    assert losses(real, "hier-exact") == losses(real, "int8-allreduce") == losses(sim, "hier-exact")
    assert losses(real, "hier-1bit") == losses(sim, "hier-1bit")
    ratio = (real["compute_max_s"] / real["compute_median_s"]).median()
    # one rank of four sleeps 2x its compute: 3x on an idle machine; 1.42 was seen with the slow tier's
    # other tests on the same 2 cores inflating every rank's compute, so the bound only says the sleep shows
    assert ratio > 1.25, real[["compute_median_s", "compute_max_s"]]
    assert np.allclose(real["wait_s"], real["compute_max_s"] - real["compute_median_s"])
    assert np.allclose(real["step_s"], real[["compute_s", "wait_s", "encode_s", "comm_exposed_s", "decode_s",
                                             "update_s"]].sum(axis=1))
    assert real[real["transport"] == "hier-1bit"]["vote_agreement"].between(0, 1).all()


def test_a_sweep_trains_a_vote_of_votes_once_per_node_size():
    """hier-1bit's training depends on how workers sit in nodes, hier-exact's does not: networks of
    different node sizes share hier-exact's training, not hier-1bit's."""
    from lionsim.sweep.cells import grid_units
    from lionsim.sweep.grid import Grid

    grid = Grid.parse(workload=["mlp"], workers=["16"], network=["10gbe,h100x8-10gbe,h100x8-100gbe"], seed=["0"],
                      strategies=["dlion-mavo@hier-exact", "dlion-mavo@hier-1bit"], transport=None)
    units = grid_units(grid)
    assert [(u.run.transport, u.nodes) for u in units] == [("hier-exact", 0), ("hier-1bit", 1), ("hier-1bit", 8)]
    served = {u.nodes: [net for net in grid.networks if u.trains_on(net)] for u in units if u.nodes}
    assert served == {1: ["10gbe"], 8: ["h100x8-10gbe", "h100x8-100gbe"]}
    assert all(cell.unit in units for cell in (u.cell(net) for u in units for net in grid.networks if u.trains_on(net)))
