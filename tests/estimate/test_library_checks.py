"""Estimate refuses in one line what the network's library cannot price as asked
(lionsim.estimate.library_checks): an --algorithm the library does not run (NCCL: a ring or tree
all-reduce, rings for its other collectives; gloo: a flat ring, pairwise all-to-all, the parameter
server), and under NCCL a profile's reduce_GBps where only NCCL's model (which has no reduction
rate) prices the run's reductions."""

from __future__ import annotations

import pytest

from tests.helpers.cli import run_cli

SMALL = ["estimate", "--params", "1e6", "--tokens-per-worker", "8", "--format", "csv"]
NCCL_NODES = [*SMALL, "--workers", "16", "--network", "h100x8-10gbe", "-s", "adamw@bf16-allreduce",
              "-s", "dlion-mavo@a2a-1bit"]
"""Two nodes of 8 GPUs, NCCL the preset's library; the runs issue an all-reduce and an all-gather."""


def refused(argv, capsys) -> str:
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == "" and "Traceback" not in err, (code, out, err)
    assert len(err.strip().splitlines()) == 1, err
    return err.strip()


NCCL_RUNS = {"all_reduce": "tree, ring, nvls or nvls_tree", "all_gather": "ring", "broadcast and reduce": "ring"}
"""What NCCL runs each op by (tuning.cc: a tree all-reduce, rings for all, NVLS all-reduces)."""


@pytest.mark.parametrize("name, ops", [("rabenseifner", "all_reduce"), ("recursive_doubling", "all_reduce"),
                                       ("bruck", "all_gather"), ("binomial", "broadcast and reduce")])
def test_an_algorithm_nccl_does_not_run_is_refused_under_nccl(name, ops, capsys):
    """The why names the op the algorithm is about, and what NCCL runs that op by (not the all-reduce's
    for bruck, an all-gather)."""
    line = refused([*NCCL_NODES, "--algorithm", name], capsys)
    assert line == (f"error: bad --algorithm {name}: h100x8-10gbe is priced by nccl, which runs no {name} "
                    f"{ops.replace(' and ', ' or ')}: it runs its {ops} as {NCCL_RUNS[ops]}; accepted: auto, ring, "
                    "tree, pairwise or param_server with nccl; or --traits ideal or mpi for the textbook algorithms")


GLOO = [*NCCL_NODES, "--traits", "gloo"]
GLOO_RUNS = {"all_reduce": "ring", "all_gather": "ring", "broadcast": "ring"}
"""gloo as lionsim models it (docs/clusters.md, README: "a flat ring"): ring all-reduce, all-gather and
broadcast, pairwise all-to-all, the parameter server; no tree, no textbook algorithm."""


@pytest.mark.parametrize("name, op", [("rabenseifner", "all_reduce"), ("recursive_doubling", "all_reduce"),
                                      ("tree", "all_reduce"), ("bruck", "all_gather"), ("binomial", "broadcast")])
def test_an_algorithm_gloo_does_not_run_is_refused_under_gloo(name, op, capsys):
    """These priced a hierarchical plan (hier:ring+rabenseifner+bruck) in a row labelled gloo."""
    line = refused([*GLOO, "--algorithm", name], capsys)
    assert line == (f"error: bad --algorithm {name}: h100x8-10gbe is priced by gloo, which runs no {name} {op}: it "
                    f"runs its {op} as {GLOO_RUNS[op]}; accepted: auto, ring, pairwise or param_server with gloo; or "
                    "--traits ideal or mpi for the textbook algorithms")


def test_gloos_ring_is_what_gloo_runs_unasked(capsys):
    """--algorithm ring under gloo prices the flat ring gloo's traits pin: the same rows as auto."""
    code, auto, err = run_cli(GLOO, capsys)
    assert code == 0, err
    code, ring, err = run_cli([*GLOO, "--algorithm", "ring"], capsys)
    assert code == 0, err
    assert ring == auto


@pytest.mark.parametrize("argv", [["--algorithm", "ring"], ["--algorithm", "tree"],
                                  ["--algorithm", "rabenseifner", "--traits", "ideal"],
                                  ["--algorithm", "tree", "--traits", "mpi"]])
def test_nccls_own_algorithms_and_the_textbook_ones_elsewhere_price(argv, capsys):
    code, out, err = run_cli([*NCCL_NODES, *argv], capsys)
    assert code == 0, err


def test_a_profiles_traits_table_runs_what_its_model_runs(tmp_path, capsys):
    """A [traits] table with model = "nccl" (as a fit writes it) runs NCCL's algorithms; one that pins
    the all-reduce's algorithm (a fitted gloo) runs that one."""
    for traits, name in (('model = "nccl"', "nccl"), ('ops.all_reduce = { algorithm = "ring" }', "lab")):
        path = tmp_path / f"{name}.toml"
        path.write_text(f"workers_per_node = 8\n[inter]\nalpha_us = 4\nbandwidth_GBps = 50\n[intra]\nalpha_us = 1\n"
                        f"bandwidth_GBps = 380\n[traits]\nname = \"{name}\"\n{traits}\n")
        line = refused([*SMALL, "--workers", "16", "--network", str(path), "-s", "adamw@bf16-allreduce",
                        "--algorithm", "rabenseifner"], capsys)
        assert f"is priced by {name}, which runs no rabenseifner all_reduce" in line, line


def test_an_algorithm_no_run_issues_is_still_refused(capsys):
    line = refused([*SMALL, "--workers", "16", "--network", "h100x8-10gbe", "-s", "adamw@bf16-allreduce",
                    "--algorithm", "pairwise"], capsys)
    assert "--algorithm pairwise runs all_to_all and no run issues one" in line


def profile(tmp_path, nodes_of: int, reduce: bool) -> str:
    """A profile with or without inter.reduce_GBps = 1; NCCL prices it in estimate (no traits key)."""
    intra = "[intra]\nalpha_us = 1\nbandwidth_GBps = 380\n" if nodes_of > 1 else ""
    path = tmp_path / f"p{nodes_of}{'r' * reduce}.toml"
    path.write_text(f"workers_per_node = {nodes_of}\n[inter]\nalpha_us = 4\nbandwidth_GBps = 50\n"
                    + ("reduce_GBps = 1.0\n" if reduce else "") + intra)
    return str(path)


def test_reduce_rate_nccls_model_would_ignore_is_refused(tmp_path, capsys):
    path = profile(tmp_path, 1, True)
    line = refused([*SMALL, "--workers", "32", "--network", path, "-s", "adamw@bf16-allreduce"], capsys)
    assert line.startswith(f"error: {path}: inter.reduce_GBps = 1 changes nothing here: NCCL prices this network "
                           "and its tuning model has no reduction rate")
    assert line.endswith("accepted here: no reduce_GBps, or --traits ideal or mpi (every reduction pays it)")


def comm_s(argv, capsys) -> float:
    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    header, row = out.strip().splitlines()[:2]
    return float(row.split(",")[header.split(",").index("comm_s")])


def test_reduce_rate_is_priced_where_it_acts(tmp_path, capsys):
    """--traits ideal on a flat network: the one all-reduce of 4 MB (fp32) among 2 workers is a ring's
    2(p-1)/p n beta + (p-1)/p n gamma plus latencies, so reduce_GBps = 1 adds n/2 / 1 GB/s exactly
    (the same algorithm priced both ways: the gamma term is the only change). Under NCCL a
    hierarchical transport's inter-node all-reduce pays it too."""
    flat = [*SMALL, "--workers", "2", "-s", "adamw@fp32-allreduce", "--overlap", "none", "--traits", "ideal",
            "--algorithm", "ring"]
    with_rate = comm_s([*flat, "--network", profile(tmp_path, 1, True)], capsys)
    without = comm_s([*flat, "--network", profile(tmp_path, 1, False)], capsys)
    assert with_rate - without == pytest.approx(4e6 / 2 / 1e9, rel=1e-6)
    hier = [*SMALL, "--workers", "32", "-s", "adamw@hier:bf16-allreduce"]
    assert comm_s([*hier, "--network", profile(tmp_path, 8, True)], capsys) > comm_s(
        [*hier, "--network", profile(tmp_path, 8, False)], capsys)
