"""A local-step run is named with its H everywhere estimate names a run (the step table's
`diloco H=100`): the --need table, the crossover table, report.md's tables and the legends of
sweep.png, so a table or plot read on its own says which H it priced."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from typer.testing import CliRunner

from lionsim.cli import app

CLUSTER = ["estimate", "--params", "1e9", "--tokens-per-worker", "8192", "--workers", "16", "--gpus-per-node", "8",
           "--network", "25gbe", "-s", "adamw@bf16-allreduce", "-s", "diloco", "--local-steps", "100"]
H = 100
"""The --local-steps given: the reference each name is checked against."""


def expected(strategy: str, transport: str) -> str:
    return f"{strategy}{f' H={H}' if strategy == 'diloco' else ''}@{transport}"


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    out = tmp_path_factory.mktemp("named") / "run"
    done = CliRunner().invoke(app, [*CLUSTER, "--sweep", "bandwidth=0.1:10:3", "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert CliRunner().invoke(app, ["report", str(out)]).exit_code == 0
    return out, done.stdout


def runs(text: str) -> list[str]:
    """The run cells of a terminal table: a strategy cell and the @transport line under it, joined."""
    lines = text.splitlines()
    return [re.split(r"\s{2,}", line.strip())[0] + below.split()[0]
            for line, below in zip(lines, lines[1:]) if below.strip().startswith("@") and line.strip()]


def test_the_need_table_names_h():
    done = CliRunner().invoke(app, [*CLUSTER, "--need", "utilisation=0.9"])
    assert done.exit_code == 0, done.output
    need = runs(done.stdout.split("inter-node bandwidth for compute")[1])
    assert need == [expected("adamw", "bf16-allreduce"), expected("diloco", "fp32-allreduce")]


def test_the_crossover_table_and_the_report_name_h(swept):
    out, said = swept
    rows = pd.read_csv(out / "sweep.csv")
    assert set(rows.loc[rows["strategy"] == "diloco", "round_steps"]) == {H}
    assert runs(said.split("crossovers against")[1]) == [expected("diloco", "fp32-allreduce")]
    report = (out / "report.md").read_text()
    for heading in ("Step time by bandwidth", "Speedup against", "Bytes one node sends across nodes", "Step-time crossovers"):
        section = report.split(f"## {heading}")[1].split("\n## ")[0]
        assert expected("diloco", "fp32-allreduce") in section and "| diloco@" not in section, heading


def test_the_sweep_plot_legend_names_h(swept, monkeypatch):
    import lionsim.reports.plots.estimate as plots

    out, _ = swept
    drawn = []
    monkeypatch.setattr(plots, "save", lambda fig, path: drawn.append(fig) or [])
    frame = pd.read_csv(out / "sweep.csv")
    plots.plot_estimate_sweep(frame, pd.read_csv(out / "crossover.csv"), "bandwidth", out / "again.png")
    named = [text.get_text() for legend in drawn[0].legends for text in legend.get_texts()]
    runs = dict.fromkeys(zip(frame["strategy"], frame["transport"]))
    assert [n for n in named if "@" in n] == [expected(*run) + (" (baseline)" if run[0] == "adamw" else "")
                                             for run in runs]


def test_the_time_to_target_tables_and_the_fastest_line_name_h(tmp_path):
    """report.md named diloco with its H in the step tables and without it in the time-to-target ones
    of the same sweep (a new user's finding), and the caption's fastest step without it."""
    from tests.estimate.test_from_run import bench_dir

    run = bench_dir(tmp_path, options={"diloco@fp32-allreduce": {"local_steps": 4}})
    out = tmp_path / "scaled"
    done = CliRunner().invoke(app, ["estimate", "--params", "2e8", "--tokens-per-worker", "1024", "--network", "10gbe",
                                    "--from-run", str(run), "--local-steps", "4", "--sweep", "workers=8,16",
                                    "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert CliRunner().invoke(app, ["report", str(out)]).exit_code == 0
    report = (out / "report.md").read_text()
    timed = report.split("Time to target by workers:")[1].split("\n## ")[0]
    assert "diloco H=4@fp32-allreduce" in timed and "| diloco@" not in timed and "- diloco@" not in timed
    plain = CliRunner().invoke(app, [*CLUSTER[:-4], "-s", "diloco", "--local-steps", "100", "--network", "1gbe"])
    assert "Fastest step: diloco H=100@fp32-allreduce" in " ".join(plain.stdout.split())
