"""report.md's "which strategy reaches the target loss first" leaves out a run that never left its
warm-up (a DiLoCo at H=50 trained 12 steps never synced: a new user's sweep report crowned it),
naming it "warm-up only" with the step it never reached (run.json's runs[].warmup_until)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.helpers.cli import exit_code, run_cli

COMMON = ["-w", "mlp", "--model-size", "tiny", "-n", "2", "-b", "8", "--steps", "12", "--eval-every", "12",
          "-s", "adamw", "-s", "diloco", "--local-steps", "50", "--target-loss", "2.5"]


@pytest.mark.parametrize("command", ["bench", "sweep"])
def test_a_run_that_never_left_its_warm_up_is_not_first_to_target(tmp_path, command):
    out = tmp_path / command
    assert exit_code([command, *COMMON, "--out", str(out)]) == 0
    metas = [out / "run.json"] if command == "bench" else sorted(out.glob("cells/*/run.json"))
    entries = {e["run"]: e for m in metas for e in json.loads(m.read_text())["runs"]}
    assert entries["diloco@fp32-allreduce"]["warmup_until"] == 50  # H=50: the first sync, never reached
    assert exit_code(["report", str(out)]) == 0
    report = (out / "report.md").read_text()
    section = report.split("## Which strategy reaches the target loss first", 1)[1].split("\n## ", 1)[0]
    row = next(line for line in section.splitlines() if line.startswith("| 2 |"))
    assert "**adamw@fp32-allreduce**" in row and "warm-up only" in row
    assert ("warm-up only, not ranked: its steps end before its first step past the warm-up, 50 "
            "(it trained as another method).") in " ".join(section.split())


@pytest.mark.parametrize("command", ["bench", "sweep"])
def test_a_run_that_never_left_its_warm_up_shows_no_speedup(tmp_path, capsys, command):
    """Its table (and report.md's summary) marks it "warm-up only" with "-" for its speedup, as a
    diverged run's: its step time was another method's (DiLoCo before its first sync sends nothing,
    which read as a 2.4x win). summary.csv keeps the figure."""
    out = tmp_path / command
    code, said, _ = run_cli([command, *COMMON, "--out", str(out)], capsys)
    assert code == 0
    idle = next(i for i, line in enumerate(said.splitlines()) if line.lstrip().startswith("diloco H=50"))
    lines = said.splitlines()
    assert lines[idle].rstrip().endswith("-") and "warm-up only" in lines[idle + 2]
    adamw = next(line for line in lines if line.lstrip().startswith("adamw"))
    assert "1.00x" in adamw  # the baseline keeps its figure
    assert '"-" for its speedup' in " ".join(said.split())
    summary = pd.read_csv(next(out.glob("*summary.csv")))
    assert (summary.loc[summary["strategy"] == "diloco", "speedup"] > 1).all()  # the CSV keeps the figure
    assert exit_code(["report", str(out)]) == 0
    table = (out / "report.md").read_text().split("## Summary", 1)[1].split("\n## ", 1)[0]
    row = next(line for line in table.splitlines() if line.startswith("| diloco"))
    assert "(warm-up only)" in row and row.rstrip(" |").endswith("-")
