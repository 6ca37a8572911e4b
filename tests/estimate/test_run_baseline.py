"""`estimate --from-run DIR` without -s prices DIR's runs, its baseline first: the step table's caption
and the report say which baseline that is where it is not a plain estimate's, what a plain estimate's
step makes of the speedups, and the command that trains the plain one beside DIR's runs; and
`--baseline` then prices against it (it failed wherever a hier: form was priced for the caption)."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from lionsim.cli import app
from lionsim.estimate import EstimateConfig, estimate
from lionsim.numbers import ms_text
from tests.helpers.cli import TINY_BENCH, run_cli

FP32, BF16, DLION = "adamw@fp32-allreduce", "adamw@bf16-allreduce", "dlion-mavo@a2a-1bit"
CLUSTER = ["--params", "1e9", "--tokens-per-worker", "8192", "--workers", "32", "--network", "h100x8-100gbe"]
SWEEP_ARGV = ["/venv/bin/lionsim", "sweep", "--workload", "mlp", "--workers", "4,8", "-s", "adamw", "-s", DLION,
              "--out", "/data/my sweep"]


def sweep_dir(tmp_path: Path, reached: dict[str, int], argv=SWEEP_ARGV) -> Path:
    """A finished sweep root: `reached` steps to target at 4 and 8 workers, FP32 the baseline, its argv
    and runs recorded."""
    out = tmp_path / "sweep"
    out.mkdir()
    rows = [{"cell": f"c{n}-{label}", "strategy": label.split("@")[0], "transport": label.split("@")[1],
             "workers": n, "network": "1gbe", "workload": "mlp", "seed": 0, "steps_to_target": steps,
             "target_loss": 0.5, "target_rule": f"{FP32}'s loss at step 90 of 100", "baseline": FP32, "params": 1000}
            for n in (4, 8) for label, steps in reached.items()]
    pd.DataFrame(rows).to_csv(out / "sweep_summary.csv", index=False)
    (out / "sweep.json").write_text(json.dumps({"kind": "sweep", "cells": len(rows), "argv": argv,
                                                "grid": {"runs": list(reached)}}))
    return out


def invoke(args: list[str]) -> str:
    done = CliRunner().invoke(app, args, env={"COLUMNS": "80"})
    assert done.exit_code == 0, done.output
    return " ".join(done.output.split())


def csv_rows(path: Path) -> dict[str, pd.Series]:
    frame = pd.read_csv(path)
    return {f"{r.strategy}@{r.transport}": r for _, r in frame.iterrows()}


def test_the_caption_names_the_baseline_the_csv_holds_and_what_a_plain_estimate_would_price(tmp_path):
    root = sweep_dir(tmp_path, {FP32: 80, DLION: 60})
    said = invoke(["estimate", *CLUSTER, "--from-run", str(root), "--out", str(tmp_path / "run")])
    invoke(["estimate", *CLUSTER, "--format", "csv", "--out", str(tmp_path / "plain")])
    ran, plain = csv_rows(tmp_path / "run" / "estimate.csv"), csv_rows(tmp_path / "plain" / "estimate.csv")
    run_base = next(iter(ran.values()))["baseline"]
    plain_base = next(iter(plain.values()))["baseline"]
    assert (run_base, plain_base) == (FP32, BF16)  # the two baselines the user compares
    assert f"Baseline: {run_base}, the baseline {root} trained" in said
    assert f"not a plain estimate's {plain_base}" in said
    # the plain baseline's step on this cluster, and what it makes of the table's speedups: the plain
    # estimate's own step, and its D-Lion speedup over the run's
    ratio = plain[BF16]["step_s"] / ran[FP32]["step_s"]
    workers, network = plain[BF16]["workers"], plain[BF16]["network"]  # the point priced, named for a sweep's report
    assert f"{ms_text(plain[BF16]['step_s'] * 1e3)} ms a step at {int(workers):,} workers on {network}" in said
    assert f"speedup against it is {ratio:.2f}x the table's" in said
    assert ran[DLION]["speedup"] * ratio == pytest.approx(plain[DLION]["speedup"], rel=1e-9)


def test_the_command_is_the_runs_own_with_the_plain_baseline_added_and_the_report_says_it_by_the_steps(tmp_path):
    root = sweep_dir(tmp_path, {FP32: 80, DLION: 60})
    out = tmp_path / "run"
    said = invoke(["estimate", *CLUSTER, "--from-run", str(root), "--out", str(out)])
    command = re.search(r"`(lionsim sweep [^`]*)`", said).group(1)
    # the recorded one, quoting kept, into DIR (the --from-run folder, not the one it was trained into)
    assert shlex.split(command) == ["lionsim", *SWEEP_ARGV[1:-2], "-s", BF16, "--out", str(root)]
    assert f"then add --baseline {BF16} to this estimate" in said
    record = json.loads((out / "estimate.json").read_text())
    invoke(["report", str(out)])
    report = (out / "report.md").read_text()
    step, rest = report.split("## Step", 1)[1].split("## Time to target", 1)
    assert record["baseline_note"] in step and record["baseline_note"] not in rest  # by the speedups, once


def test_a_command_whose_path_passes_the_line_prints_whole_at_80_columns(tmp_path):
    """rich folded a path wider than the line mid-path: the command pasted from a pipe named another folder."""
    deep = tmp_path / ("a-folder-name-long-enough-to-pass-eighty-columns-" * 2)
    deep.mkdir()
    root = sweep_dir(deep, {FP32: 80, DLION: 60})
    assert len(str(root)) > 80
    done = CliRunner().invoke(app, ["estimate", *CLUSTER, "--from-run", str(root)], env={"COLUMNS": "80"})
    assert done.exit_code == 0, done.output
    assert f"{root}`" in done.stdout.splitlines()  # whole, a line of its own
    command = re.search(r"`(lionsim sweep [^`]*)`", " ".join(done.stdout.split())).group(1)
    assert shlex.split(command) == ["lionsim", *SWEEP_ARGV[1:-2], "-s", BF16, "--out", str(root)]


def trained(argv: list[str], capsys) -> None:
    code, _, err = run_cli(argv, capsys)
    assert code == 0, err


def command_for(tmp_path: Path, from_run: str, capsys) -> list[str]:
    """The command `estimate --from-run` (run in tmp_path) says trains BF16 beside the runs, as argv."""
    code, out, err = run_cli(["estimate", *CLUSTER, "--from-run", from_run], capsys)
    assert code == 0, err
    said = " ".join(out.split())  # a path longer than the 80-column pipe stays whole (xdist's tmp paths)
    found = re.search(r"train adamw@bf16-allreduce beside its runs: `(lionsim [^`]*)` \(([^)]*)\)", said)
    assert found, said
    return shlex.split(found.group(1)), found.group(2)


def runs_of(folder: Path) -> list[str]:
    frame = pd.read_csv(folder / "summary.csv")
    return [f"{s}@{t}" for s, t in zip(frame["strategy"], frame["transport"])]


@pytest.mark.parametrize("made", [
    [*TINY_BENCH, "--out", "b"],  # bench's default strategies: a -s added replaced them, training one run
    [*TINY_BENCH, "--batch-size", "4", "-s", "adamw,dlion-mavo", "--transport", "a2a-1bit", "--out", "b"],
])
def test_a_bench_gets_the_command_that_trains_its_runs_and_the_baseline_into_its_folder(made, tmp_path, capsys,
                                                                                         monkeypatch):
    """The command names what DIR trained (bench's defaults filled in) and the plain baseline after them,
    writes DIR (it wrote ./reports/bench), keeps every option that trains and says --overwrite once.
    The reference is the command itself, run from another folder: DIR then holds its runs, trained as
    before (losses equal), and the baseline; then --baseline prices against it."""
    for name in ("made", "asked", "elsewhere"):
        (tmp_path / name).mkdir()
    monkeypatch.chdir(tmp_path / "made")
    trained(made, capsys)
    before, record = pd.read_csv(tmp_path / "made" / "b" / "steps.csv"), (tmp_path / "made" / "b" / "run.json")
    config = json.loads(record.read_text())["config"]
    monkeypatch.chdir(tmp_path / "asked")
    command, said = command_for(tmp_path, "../made/b", capsys)
    assert command[:2] == ["lionsim", "bench"] and command.count("--overwrite") == 1
    assert said == "every run trained again"  # bench adds no run to a finished one: --resume refuses it
    monkeypatch.chdir(tmp_path / "elsewhere")
    trained(command[1:], capsys)
    folder = tmp_path / "made" / "b"
    labels = runs_of(folder)
    assert labels[-1] == BF16 and len(labels) == len(set(labels))
    assert labels[:-1] == list(before.drop_duplicates(["strategy", "transport"]).pipe(
        lambda f: [f"{s}@{t}" for s, t in zip(f["strategy"], f["transport"])]))
    after = pd.read_csv(folder / "steps.csv")
    old = after.merge(before, on=["strategy", "transport", "step"], suffixes=("", "_before"))
    assert len(old) == len(before) and (old["loss"] == old["loss_before"]).all()
    again = json.loads((folder / "run.json").read_text())["config"]
    assert {k: v for k, v in again.items() if k not in ("strategy", "hyper")} == \
        {k: v for k, v in config.items() if k not in ("strategy", "hyper")}
    assert again["hyper"] | config["hyper"] == again["hyper"]  # each run's hyperparameters as recorded
    monkeypatch.chdir(tmp_path / "asked")
    trained(["estimate", *CLUSTER, "--from-run", "../made/b", "--baseline", BF16], capsys)


def test_a_default_sweep_gets_its_runs_named_and_only_the_baselines_cell_trains(tmp_path, capsys, monkeypatch):
    """A sweep given no -s (its default set) or a --transport: the command names its runs, as resolved,
    before the plain baseline (a -s added alone replaced them); its cells stay and only the new one trains."""
    for name in ("made", "asked"):
        (tmp_path / name).mkdir()
    monkeypatch.chdir(tmp_path / "made")
    made = ["sweep", *TINY_BENCH[1:], "--out", "sw"]
    monkeypatch.setattr(sys, "argv", ["lionsim", *made])  # sweep.json records the process's own command line
    trained(made, capsys)
    cells = sorted(p.name for p in (tmp_path / "made" / "sw" / "cells").iterdir())
    monkeypatch.chdir(tmp_path / "asked")
    command, said = command_for(tmp_path, "../made/sw", capsys)
    assert command[:2] == ["lionsim", "sweep"] and said == "only the new cells train"
    monkeypatch.setattr(sys, "argv", command)
    code, out, err = run_cli(command[1:], capsys)
    assert code == 0, err
    assert "1 training this run; 5 cells were already finished" in " ".join((out + err).split())
    now = sorted(p.name for p in (tmp_path / "made" / "sw" / "cells").iterdir())
    assert set(cells) < set(now) and len(now) == len(cells) + 1 and BF16 in (set(now) - set(cells)).pop()


@pytest.mark.parametrize("argv, transport", [
    (["lionsim", "sweep", "--workload", "mlp", "--transport", "a2a-1bit", "--out", "s"], None),
    (["lionsim", "sweep", "--workload", "mlp", "-s", "adamw", "-s", DLION, "--transport", "fp32-allreduce", "-os"],
     "fp32-allreduce"),
])
def test_a_sweeps_transport_goes_where_its_runs_are_named_resolved_and_stays_with_its_own_s(tmp_path, argv,
                                                                                           transport):
    root = sweep_dir(tmp_path, {FP32: 80, DLION: 60}, argv)
    said = invoke(["estimate", *CLUSTER, "--from-run", str(root)])
    command = shlex.split(re.search(r"`(lionsim sweep [^`]*)`", said).group(1))
    assert command[-2:] == ["--out", str(root)] and command.count("--out") == 1 and "-os" not in command
    given = [command[i + 1] for i, a in enumerate(command) if a == "-s"]
    assert given[-1] == BF16 and (given[:-1] == ["adamw", DLION] if transport else given[:-1] == [f"adamw,{DLION}"])
    assert (command[command.index("--transport") + 1] if "--transport" in command else None) == transport


@pytest.mark.parametrize("launcher", ["/venv/bin/lionsim", "/usr/lib/python3/site-packages/lionsim/__main__.py",
                                      "/home/me/lionsim/cli.py"])
def test_each_launcher_of_lionsim_gets_the_command_and_a_users_own_script_the_words(tmp_path, launcher):
    """`python cli.py ARGS` is `lionsim ARGS` (the checkout's cli.py), as the script and `python -m
    lionsim` are; the rule was written twice without cli.py, so such a sweep got words, no command,
    and its report's Reproduce kept `cli.py` as the program."""
    from lionsim.reports.md import command_line

    root = sweep_dir(tmp_path, {FP32: 80, DLION: 60}, [launcher, *SWEEP_ARGV[1:]])
    said = invoke(["estimate", *CLUSTER, "--from-run", str(root)])
    assert f"`lionsim sweep --workload mlp --workers 4,8 -s adamw -s {DLION} -s {BF16} --out " in said, said
    assert command_line([launcher, "bench", "--steps", "3"]) == "lionsim bench --steps 3 --overwrite"
    mine = ["/home/me/train.py", "bench", "--steps", "3"]  # another program: its own command line as is
    assert command_line(mine) == "/home/me/train.py bench --steps 3 --overwrite"


@pytest.mark.parametrize("argv, says", [
    ([], f"rerun its `lionsim sweep` command with -s {BF16} added"),  # none recorded
    ([*SWEEP_ARGV[:4], "--config", "s.toml"], f"rerun its `lionsim sweep` command with -s {BF16} added"),
    (["lionsim", "sweep", "merge", "/data/s"], f"rerun its `lionsim sweep` command with -s {BF16} added"),
    ([*SWEEP_ARGV, "--shard", "1/2"], f"rerun its `lionsim sweep` command with -s {BF16} added"),
])
def test_a_command_it_cannot_rerun_as_recorded_is_said_in_words(tmp_path, argv, says):
    root = sweep_dir(tmp_path, {FP32: 80, DLION: 60}, argv)
    assert says in invoke(["estimate", *CLUSTER, "--from-run", str(root)])


def test_once_trained_the_baseline_option_prices_against_it_as_a_plain_estimate_does(tmp_path):
    """DIR trained BF16 too: the caption says so; --baseline BF16 (no -s) gives each step speedup a plain
    estimate gives, and every time to target against BF16's (its own steps to target x its time a step)."""
    root = sweep_dir(tmp_path, {FP32: 80, DLION: 60, BF16: 80})
    said = invoke(["estimate", *CLUSTER, "--from-run", str(root)])
    assert f"{root} trained {BF16} too: add --baseline {BF16} to this estimate for that baseline" in said
    assert "`lionsim sweep" not in said
    invoke(["estimate", *CLUSTER, "--from-run", str(root), "--baseline", BF16, "--out", str(tmp_path / "bf16")])
    invoke(["estimate", *CLUSTER, "--format", "csv", "--out", str(tmp_path / "plain")])
    got, plain = csv_rows(tmp_path / "bf16" / "estimate.csv"), csv_rows(tmp_path / "plain" / "estimate.csv")
    assert {r["baseline"] for r in got.values()} == {BF16}
    assert got[DLION]["speedup"] == pytest.approx(plain[DLION]["speedup"], rel=1e-9)
    assert got[DLION]["to_target_speedup"] == pytest.approx(
        got[BF16]["time_to_target_s"] / got[DLION]["time_to_target_s"], rel=1e-9)


def test_no_line_where_the_baseline_is_the_plain_one_or_the_user_chose(tmp_path):
    root = sweep_dir(tmp_path, {FP32: 80, DLION: 60, BF16: 80})
    cfg = dict(params=10**9, tokens_per_worker=8192, workers=32, network="h100x8-100gbe", from_run=str(root))
    assert "baseline_line" in estimate(EstimateConfig(**cfg)).attrs
    assert "baseline_line" not in estimate(EstimateConfig(**cfg, baseline=BF16)).attrs
    assert "baseline_line" not in estimate(EstimateConfig(**cfg, strategies=[FP32, DLION])).attrs  # as named
    bf16_first = tmp_path / "b"
    bf16_first.mkdir()
    frame = pd.read_csv(root / "sweep_summary.csv").assign(baseline=BF16)
    (bf16_first / "sweep").mkdir()
    frame.to_csv(bf16_first / "sweep" / "sweep_summary.csv", index=False)
    (bf16_first / "sweep" / "sweep.json").write_text((root / "sweep.json").read_text())
    assert "baseline_line" not in estimate(EstimateConfig(**{**cfg, "from_run": str(bf16_first / "sweep")})).attrs
