"""`estimate --from-run DIR` without -s prices DIR's runs, its baseline first: the step table's caption
and the report say which baseline that is where it is not a plain estimate's, what a plain estimate's
step makes of the speedups, and the command that trains the plain one beside DIR's runs; and
`--baseline` then prices against it (it failed wherever a hier: form was priced for the caption)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from lionsim.cli import app
from lionsim.estimate import EstimateConfig, estimate
from lionsim.numbers import ms_text

FP32, BF16, DLION = "adamw@fp32-allreduce", "adamw@bf16-allreduce", "dlion-mavo@a2a-1bit"
CLUSTER = ["--params", "1e9", "--tokens-per-worker", "8192", "--workers", "32", "--network", "h100x8-100gbe"]
SWEEP_ARGV = ["/venv/bin/lionsim", "sweep", "--workload", "mlp", "--workers", "4,8", "-s", "adamw", "-s", DLION,
              "--out", "/data/my sweep"]


def sweep_dir(tmp_path: Path, reached: dict[str, int], argv=SWEEP_ARGV) -> Path:
    """A finished sweep root: `reached` steps to target at 4 and 8 workers, FP32 the baseline, its argv recorded."""
    out = tmp_path / "sweep"
    out.mkdir()
    rows = [{"cell": f"c{n}-{label}", "strategy": label.split("@")[0], "transport": label.split("@")[1],
             "workers": n, "network": "1gbe", "workload": "mlp", "seed": 0, "steps_to_target": steps,
             "target_loss": 0.5, "target_rule": f"{FP32}'s loss at step 90 of 100", "baseline": FP32, "params": 1000}
            for n in (4, 8) for label, steps in reached.items()]
    pd.DataFrame(rows).to_csv(out / "sweep_summary.csv", index=False)
    (out / "sweep.json").write_text(json.dumps({"kind": "sweep", "cells": len(rows), "argv": argv}))
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
    assert f"{ms_text(plain[BF16]['step_s'] * 1e3)} ms a step here" in said
    assert f"speedup against it is {ratio:.2f}x the table's" in said
    assert ran[DLION]["speedup"] * ratio == pytest.approx(plain[DLION]["speedup"], rel=1e-9)


def test_the_command_is_the_runs_own_with_the_plain_baseline_added_and_the_report_says_it_by_the_steps(tmp_path):
    root = sweep_dir(tmp_path, {FP32: 80, DLION: 60})
    out = tmp_path / "run"
    said = invoke(["estimate", *CLUSTER, "--from-run", str(root), "--out", str(out)])
    command = re.search(r"`(lionsim sweep [^`]*)`", said).group(1)
    assert shlex.split(command) == ["lionsim", *SWEEP_ARGV[1:], "-s", BF16]  # the recorded one, quoting kept
    assert f"then add --baseline {BF16} to this estimate" in said
    record = json.loads((out / "estimate.json").read_text())
    invoke(["report", str(out)])
    report = (out / "report.md").read_text()
    step, rest = report.split("## Step", 1)[1].split("## Time to target", 1)
    assert record["baseline_note"] in step and record["baseline_note"] not in rest  # by the speedups, once


@pytest.mark.parametrize("argv, says", [
    ([], f"rerun its `lionsim sweep` command with -s {BF16} added"),  # none recorded
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
