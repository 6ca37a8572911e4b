"""The tops (and --bucket-mb's floor) of options that had none: a value past one is refused in one
line naming the flag and the value, exit 2, by estimate and bench alike; the bound itself is
accepted. Each bound is checked against what it stands for, worked out here independently."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.helpers.cli import run_cli

EST = ["estimate", "-m", "gpt2-124m", "--format", "csv"]
BENCH = ["bench", "-w", "mlp", "--model-size", "tiny", "--steps", "2", "-n", "2", "-b", "2"]
RUN = ["--steps", "10000000"]
"""A whole run, so that estimate reads the warm-up options (the steady step leaves them out)."""

# (strategy and other arguments, flag, the refused value, the top (or floor) that is accepted)
BOUNDS = [
    (["-s", "qsgd"], "--qsgd-levels", "16777217", "16777216"),
    (["-s", "qsgd"], "--qsgd-levels", "1e10", "16777216"),  # 35-bit codes: the packing's traceback
    (["-s", "muon"], "--muon-ns-steps", "1e23", "100"),
    (["-s", "demo"], "--demo-chunk", "4097", "4096"),
    (["-s", "adamw"], "--bucket-mb", "1e-9", "0.000004"),
    (["-s", "dgc", *RUN], "--dgc-warmup-steps", "1e23", "10000000"),
    (["-s", "onebit-adam", *RUN], "--freeze-steps", "1e23", "10000000"),
    (["-s", "powersgd", *RUN], "--powersgd-warmup-steps", "1e23", "10000000"),
    (["-s", "dlion-mavo", *RUN], "--momentum-sync", "every:10000001", "every:10000000"),
]


def _one_line(argv, flag, value, capsys, tmp_path):
    out = tmp_path / "out"
    code, stdout, err = run_cli([*argv, flag, value, "--out", out] if argv[0] != "comm" else [*argv, flag, value],
                                capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, (argv, err)
    assert lines[0].startswith(f"error: bad {flag} ") and value in lines[0] and "; accepted: " in lines[0], lines[0]
    assert not out.exists()
    return lines[0]


@pytest.mark.parametrize("command", [EST, BENCH], ids=["estimate", "bench"])
@pytest.mark.parametrize("args, flag, bad, top", BOUNDS, ids=[f"{b[1]}={b[2]}" for b in BOUNDS])
def test_past_the_bound_is_one_line_by_estimate_and_bench(command, args, flag, bad, top, capsys, tmp_path):
    args = [a for a in args if command is EST or a not in RUN]  # bench's --steps stays its own
    line = _one_line([*command, *args], flag, bad, capsys, tmp_path)
    bound = top.rpartition(":")[2]
    assert (f"{int(bound):,}" if bound.isdigit() else bound) in line.partition("; accepted: ")[2]  # in its words


@pytest.mark.parametrize("args, flag, bad, top", BOUNDS, ids=[f"{b[1]}={b[2]}" for b in BOUNDS])
def test_the_bound_itself_is_accepted(args, flag, bad, top, capsys, tmp_path):
    code, _, err = run_cli([*EST, *args, flag, top, "--out", tmp_path / "out"], capsys)
    assert code == 0, err


@pytest.mark.parametrize("argv, flag, bad", [
    (["estimate", "-m", "gpt2-124m"], "--gpus-per-node", "200000000"),
    (["comm"], "--gpus-per-node", "200000000"),
    (BENCH, "--eval-every", "1e23"),
    (["sweep", "-s", "adamw", "--steps", "1", "-n", "2", "--model-size", "tiny"], "--jobs", "1025"),
])
def test_a_command_option_past_its_top_names_the_flag(argv, flag, bad, capsys, tmp_path):
    line = _one_line(argv, flag, bad, capsys, tmp_path)
    assert "workers_per_node" not in line  # the flag typed, not the network's key


def test_the_tops_of_eval_every_jobs_and_gpus_per_node_are_accepted():
    from lionsim.config.bench import BenchConfig
    from lionsim.estimate.plain import check_gpus_per_node
    from lionsim.forms import MomentumSync
    from lionsim.sweep.execute import check_jobs

    BenchConfig(eval_every=10**7, steps=2).check_plain()
    check_jobs(1024)
    check_gpus_per_node(2, 10**8)
    assert MomentumSync.parse("schedule:10000000").k == 10**7


@pytest.mark.parametrize("command", [EST, BENCH], ids=["estimate", "bench"])
def test_opt_and_the_strategys_own_flag_disagreeing_is_refused(command, capsys, tmp_path):
    code, _, err = run_cli([*command, "-s", "demo", "--demo-topk", "8", "--opt", "demo.topk=16",
                            "--out", tmp_path / "out"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.strip() == ("error: bad --opt demo.topk=16: --demo-topk 8 sets the same option; accepted: one of "
                           "the two, or both with one value")


def test_opt_and_the_flag_agreeing_or_a_shared_flag_are_accepted(capsys, tmp_path):
    both = [*EST, "-s", "demo", "--demo-topk", "16", "--opt", "demo.topk=16"]
    assert run_cli([*both, "--out", tmp_path / "a"], capsys)[0] == 0
    shared = [*EST, "-s", "diloco,localsgd", "--local-steps", "5", "--opt", "diloco.local_steps=10"]
    assert run_cli([*shared, "--out", tmp_path / "b"], capsys)[0] == 0  # --opt sets diloco's, the flag localsgd's


def test_qsgds_top_is_where_float32_levels_stay_whole_and_the_codes_fit():
    """2**24 is the last whole number float32 holds with its neighbour (2**24 + 1 rounds to 2**24):
    at the top a coordinate holding all of its tensor's norm gets level +s exactly, in a code of
    ceil(log2(2s + 1)) bits (levels -s..s) that the 32-bit fields hold; the old top-less range
    let 2**31 - 1 through, whose level wraps int32."""
    from lionsim.strategies.qsgd import MAX_LEVELS, qsgd_levels
    from lionsim.transports.allgather_levels import level_bits

    assert np.float32(MAX_LEVELS) == MAX_LEVELS and np.float32(MAX_LEVELS + 1) == MAX_LEVELS
    g, norms, draws = torch.tensor([[1.0, -1.0]]), torch.ones(1, 2), torch.zeros(1, 2)
    assert qsgd_levels(g, norms, MAX_LEVELS, draws).tolist() == [[MAX_LEVELS, -MAX_LEVELS]]
    assert level_bits(MAX_LEVELS) == int(np.ceil(np.log2(2 * MAX_LEVELS + 1))) == 26 <= 32
    assert qsgd_levels(g, norms, 2**31 - 1, draws)[0, 0] < 0  # why the packing's 32 bits alone were no top


def test_demos_top_chunk_basis_is_what_its_words_say():
    from lionsim.strategies.dct import chunk_size, dct_matrix
    from lionsim.strategies.demo import MAX_CHUNK

    assert MAX_CHUNK**2 * 8 == 134_217_728  # "134 MB" of float64, as the accepted words say
    assert chunk_size(50_257, MAX_CHUNK) <= MAX_CHUNK  # the basis never passes the top (a divisor at most it)
    d = dct_matrix(8, torch.float64)  # the basis is orthonormal: what a chunk side of n costs is n^2 of these
    assert torch.allclose(d @ d.T, torch.eye(8, dtype=torch.float64))
