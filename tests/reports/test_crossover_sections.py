"""An estimate sweep's report.md with --from-run holds two crossover tables, each headed for what it
compares (the step's time, or the time to target) and each saying why the two can differ: time to
target also counts each run's steps to the target."""

from __future__ import annotations

import pandas as pd
from typer.testing import CliRunner

from lionsim.cli.app import app
from tests.estimate.test_from_run import CELLS, sweep_dir


def test_the_step_time_and_time_to_target_crossovers_are_two_tables_each_named(tmp_path):
    out = tmp_path / "est"
    args = ["estimate", "--params", "2e8", "--tokens-per-worker", "1024", "--workers", "64", "--network",
            "h100x8-100gbe", "-s", "adamw", "-s", "dlion-mavo@a2a-1bit", "--from-run", str(sweep_dir(tmp_path, CELLS)),
            "--steps", "1000", "--sweep", "bandwidth=1,10,100", "--out", str(out)]
    assert CliRunner().invoke(app, args, env={"COLUMNS": "80"}).exit_code == 0
    assert CliRunner().invoke(app, ["report", str(out)]).exit_code == 0
    report = (out / "report.md").read_text()
    assert "## Crossovers" not in report  # was one table so headed, beside the time to target's other verdicts
    step = report.split("## Step-time crossovers\n\n")[1].split("\n## ")[0]
    timed = report.split("## Time-to-target crossovers\n\n")[1].split("\n## ")[0]
    why = "time to target also counts each run's steps to the target."
    assert step.startswith("Where each run's step is faster than the baseline's.") and why in step.split("\n")[0]
    assert timed.startswith("Where each run reaches the target sooner than the baseline.") and why in timed.split("\n")[0]
    # each table's rows are its own CSV's: the run's verdict on the step, and on the time to target
    for section, csv in ((step, "crossover.csv"), (timed, "to_target_crossover.csv")):
        row = next(line for line in section.splitlines() if line.startswith("| dlion-mavo@a2a-1bit"))
        wins = pd.read_csv(out / csv).set_index("strategy").loc["dlion-mavo", "wins"]
        assert row.split("|")[3].strip().startswith(str(wins)), (csv, row)


def test_without_a_time_to_target_the_step_time_table_stands_alone(tmp_path):
    out = tmp_path / "est"
    args = ["estimate", "--params", "2e8", "--tokens-per-worker", "1024", "--workers", "64", "--network", "h100x8-100gbe", "-s", "adamw",
            "-s", "dlion-mavo@a2a-1bit", "--sweep", "bandwidth=1,10,100", "--out", str(out)]
    assert CliRunner().invoke(app, args, env={"COLUMNS": "80"}).exit_code == 0
    assert CliRunner().invoke(app, ["report", str(out)]).exit_code == 0
    report = (out / "report.md").read_text()
    assert "## Step-time crossovers\n\n| run |" in report and "Time-to-target crossovers" not in report
