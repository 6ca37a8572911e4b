"""`lionsim estimate` through the real entry point."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from lionsim.estimate import ESTIMATE_COLUMNS, EstimateConfig, estimate
from tests.helpers.cli import run_cli


def test_estimate_writes_the_csv_the_library_computes(tmp_path, capsys):
    argv = ["estimate", "--params", "3e9", "--tokens-per-worker", "1024", "--workers", "64", "--network",
            "a100x8-4hdr", "--device", "a100", "--overlap", "none", "-s", "adamw@bf16-allreduce",
            "-s", "dlion-mavo@int8-allreduce", "--kernels", "ideal", "--out", str(tmp_path)]
    code, out, err = run_cli(argv, capsys)
    assert (code, err) == (0, "")
    frame = pd.read_csv(tmp_path / "estimate.csv")
    assert list(frame.columns[: len(ESTIMATE_COLUMNS)]) == ESTIMATE_COLUMNS
    expected = estimate(EstimateConfig(params=3_000_000_000, tokens_per_worker=1024, workers=64,
                                       network="a100x8-4hdr", device="a100", overlap="none", kernels="ideal",
                                       strategies=["adamw@bf16-allreduce", "dlion-mavo@int8-allreduce"]))
    assert frame["step_s"].tolist() == pytest.approx(expected["step_s"].tolist())
    assert frame["kernels"].tolist() == ["ideal fused passes"] * 2
    assert frame["strategy"].tolist() == ["adamw", "dlion-mavo"]
    for text in ("3,000,000,000 params", "adamw*", "dlion-mavo", "int8-allreduce", "1.32x", "estimate.csv"):
        assert text in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["estimate.csv", "estimate.json"]  # no temporary file left


def test_sweep_writes_the_crossover_files(tmp_path, capsys):
    argv = ["estimate", "--model", "gpt2-345m", "--tokens-per-worker", "8192", "--workers", "16", "--device", "h100",
            "-s", "lion", "-s", "dlion-mavo@a2a-1bit", "--sweep", "bandwidth=1:1000:7", "--out", str(tmp_path)]
    code, out, err = run_cli(argv, capsys)
    assert (code, err) == (0, "")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["crossover.csv", "estimate.csv", "estimate.json", "sweep.csv",
                                                          "sweep.png", "sweep.svg"]
    assert "wrote estimate.csv, estimate.json, sweep.csv, crossover.csv," in out
    crossing = pd.read_csv(tmp_path / "crossover.csv")
    assert crossing[["strategy", "wins"]].values.tolist() == [["dlion-mavo", "below"]]
    assert len(pd.read_csv(tmp_path / "sweep.csv")) == 2 * 7
    assert "crossovers against lion@fp32-allreduce" in out
    assert "over bandwidth 1 to 1000 GB/s (7 points)" in " ".join(out.split())


def test_a_workers_sweep_says_workers_once(capsys):
    code, out, err = run_cli(["estimate", "-m", "gpt2-124m", "-s", "lion", "-s", "dlion-mavo", "--sweep", "workers=2,4,8"],
                             capsys)  # a run beside the baseline: the baseline alone has nothing to cross
    assert code == 0
    assert "over 2 to 8 workers (3 points)" in " ".join(out.split()) and "over workers" not in out


def test_config_file_and_flags(tmp_path, capsys):
    config = tmp_path / "est.toml"
    config.write_text('model = "gpt2-124m"\nworkers = 16\nnetwork = "10gbe"\ngpus-per-node = 8\n'
                      'strategy = ["lion", "dlion-mavo"]\n')
    code, _, _ = run_cli(["estimate", "--config", str(config), "--workers", "32", "--out", str(tmp_path / "out")], capsys)
    assert code == 0
    frame = pd.read_csv(tmp_path / "out" / "estimate.csv")
    assert frame[["strategy", "workers", "gpus_per_node"]].values.tolist() == [["lion", 32, 8], ["dlion-mavo", 32, 8]]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--params", "1e9"], "--params needs --tokens-per-worker"),
        (["--params", "100", "--tokens-per-worker", "8", "--tensors", "101"],
         "bad --tensors 101; accepted: a whole number from 1 to the parameter count 100"),
        (["--model", "gpt2-124m", "--sweep", "speed=1,2"], "bad --sweep speed=1,2: unknown variable 'speed'"),
        (["--model", "gpt2-124m", "--device", "tpu"], "unknown device 'tpu'"),
        (["--model", "gpt2-124m", "-s", "adamw@a2a-1bit"], "cannot use transport 'a2a-1bit'"),
        # rich would print ":end:" as an emoji: the accepted forms must reach the user as written
        (["--model", "gpt2-124m", "--sweep", "nope"], "workers=START:END:COUNT | bandwidth=GBPS"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, args, message):
    code, out, err = run_cli(["estimate", *args, "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()  # nothing half-written


def test_an_unwritable_out_is_one_line_and_exit_2(capsys):
    code, _, err = run_cli(["estimate", "--model", "gpt2-124m", "--out", "/dev/null/o"], capsys)
    assert code == 2 and err.strip() == "error: bad --out /dev/null/o: /dev/null is not a directory; " \
        "accepted: a writable directory"


def test_extreme_sizes_read_in_large_units_and_separators(capsys):
    from lionsim.numbers import bytes_text

    assert [bytes_text(n) for n in (7e15, 7e12, 2.5e18)] == ["7.00 PB", "7.00 TB", "2,500 PB"]
    code, out, _ = run_cli(["estimate", "--params", "1e15", "--workers", "100000000", "-s", "adamw",
                            "--tokens-per-worker", "1024"], capsys)
    text = " ".join(out.split())
    assert code == 0 and "e+" not in out
    assert "100,000,000 workers" in text
    sent = 2 * (1e8 - 1) / 1e8 * 4e15  # fp32 ring all-reduce: 2 (N - 1) / N x 4 bytes x P
    assert f"{sent / 1e15:.3g}" == "8" and "8.00PB" in text  # 3 significant digits, the zeros kept (a step
    # table's compact form: numbers.step_bytes)


def test_local_step_strategies_per_bucket_say_what_that_runs(tmp_path, capsys):
    argv = ["estimate", "--model", "gpt2-124m", "--workers", "16", "--network", "10gbe", "--tokens-per-worker",
            "4096", "-s", "adamw@bf16-allreduce", "-s", "diloco", "-s", "localsgd", "--overlap"]
    code, out, _ = run_cli([*argv, "buckets", "--out", str(tmp_path / "b")], capsys)
    frame = pd.read_csv(tmp_path / "b" / "estimate.csv")
    assert code == 0 and frame["overlap"].tolist() == ["buckets"] * 3
    text = " ".join(out.split())
    assert "diloco, localsgd: the inner step run in backward per bucket" in text
    code, out, _ = run_cli([*argv, "tensors", "--out", str(tmp_path / "t")], capsys)
    frame = pd.read_csv(tmp_path / "t" / "estimate.csv")
    assert code == 0 and frame["overlap"].tolist() == ["tensors", "after", "after"]
    assert "diloco, localsgd run after backward: their payload exists only after their own step" in " ".join(out.split())


def test_a_widened_container_is_named_in_the_footer(capsys):
    argv = ["estimate", "--model", "gpt2-124m", "-s", "adamw", "-s", "dlion-mavo@int8-allreduce", "--workers"]
    _, out, _ = run_cli([*argv, "127"], capsys)
    assert "int32" not in out
    _, out, _ = run_cli([*argv, "128"], capsys)
    assert ("int8-allreduce sends int32 (32 bits per parameter) from 128 workers on: a sum of 128 workers' values "
            "(each of size at most 1) overflows int8, and neither NCCL nor gloo reduces int16.") in " ".join(out.split())


def test_votes_and_levels_widened_alike_are_named_once(capsys):
    """The default strategies at 128 workers run dlion-mavo's votes and lioncub-l1's levels over
    int8-allreduce, both widened from 128 workers on: the caption said it twice, once a kind."""
    args = ["estimate", "--model", "gpt2-124m", "--workers", "128", "--network", "10gbe"]
    _, csv, _ = run_cli([*args, "--format", "csv"], capsys)
    runs = set(pd.read_csv(io.StringIO(csv))[["strategy", "transport"]].itertuples(index=False, name=None))
    assert {("dlion-mavo", "int8-allreduce"), ("lioncub-l1", "int8-allreduce")} <= runs
    _, out, _ = run_cli(args, capsys)
    assert " ".join(out.split()).count("int8-allreduce sends int32") == 1



def test_an_interrupted_overwrite_says_out_still_holds_its_results(tmp_path, capsys, monkeypatch):
    """Ctrl-C while an estimate --overwrite priced said only "no results were written"; --out's files
    were unchanged (the reference: them, byte for byte), and the line now says so."""
    import lionsim.estimate

    out = tmp_path / "o"
    argv = ["estimate", "--model", "gpt2-124m", "-s", "adamw", "--out", str(out)]
    assert run_cli(argv, capsys)[0] == 0
    old = {p.name: p.read_bytes() for p in out.iterdir()}

    def pricing(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(lionsim.estimate, "estimate", pricing)
    code, _, err = run_cli([*argv, "--overwrite"], capsys)
    assert code == 2 and err.strip().splitlines() == [
        f"error: interrupted: no results were written; {out} still holds its previous results"], err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == old
    code, _, err = run_cli([*argv[:-2], "--out", str(tmp_path / "new")], capsys)
    assert code == 2 and err.strip().splitlines() == ["error: interrupted: no results were written"], err


def test_an_interruption_after_the_files_are_written_says_so(tmp_path, capsys, monkeypatch):
    """Ctrl-C while the tables printed, after the files were published, said "no results were
    written; DIR still holds its previous results". The reference: the files on disk, which are
    those a run that completes writes."""
    import lionsim.cli.estimate_cmd as estimate_cmd
    from tests.helpers.cli import interrupted_while_printing

    argv = ["estimate", "--model", "gpt2-124m", "-s", "adamw"]
    assert run_cli([*argv, "--out", tmp_path / "whole"], capsys)[0] == 0

    out = tmp_path / "o"
    interrupted_while_printing(argv, (estimate_cmd, "out_console"), out, capsys, monkeypatch)
    assert (out / "estimate.csv").read_bytes() == (tmp_path / "whole" / "estimate.csv").read_bytes()
    assert sorted(p.name for p in out.iterdir()) == ["estimate.csv", "estimate.json"]
