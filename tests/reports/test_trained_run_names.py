"""A trained local-step run is named with its H wherever bench and sweep name a run, as estimate's
tables do (columns.run_name: `diloco H=5@fp32-allreduce`): bench's table and every plot
(step_time_distribution's legend and bar labels among them), report.md's tables; a sweep's
tables (cells, seeds, best lr), its plots, and its report's first-to-target and accuracy tables."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from matplotlib.legend import Legend
from matplotlib.text import Text
from typer.testing import CliRunner

from lionsim.cli import app
from lionsim.reports import load_run

H = 5
"""The --local-steps given: the reference every name is checked against."""
NAME = f"diloco H={H}@fp32-allreduce"
COMMON = ["--workload", "mlp", "--model-size", "tiny", "--network", "1gbe", "-s", "adamw", "-s", "diloco",
          "--local-steps", str(H), "--steps", "10"]


def _ran(argv: list[str]) -> str:
    done = CliRunner().invoke(app, argv)
    assert done.exit_code == 0, done.output
    return done.stdout


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "run"
    said = _ran(["bench", *COMMON, "--workers", "4", "--out", str(out)])
    _ran(["report", str(out)])
    return out, said


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "root"
    said = _ran(["sweep", *COMMON, "--workers", "2,4", "--seed", "0,1", "--lr", "0.003,0.01", "--out", str(out)])
    _ran(["report", str(out)])
    return out, said


def table_strategies(text: str) -> list[str]:
    """The first line of each run of a terminal table (its strategy, then the row's numbers: the
    line above the run's @transport), each run named by its first words."""
    lines = text.splitlines()
    return [re.sub(r"^((?:diloco H=\d+)|\S+).*", r"\1", line.strip()) for line, below in zip(lines, lines[1:])
            if below.strip().startswith("@")]


def drawn_texts(monkeypatch, modules, draw) -> list[str]:
    """Every text of every figure `draw()` makes (titles, legends, tick labels), `save` patched in
    `modules` to keep the figures."""
    figures = []
    for module in modules:
        monkeypatch.setattr(module, "save", lambda fig, path: figures.append(fig) or [])
    draw()
    assert figures
    return [t.get_text() for fig in figures for t in fig.findobj(Text) if t.get_text()]


def test_bench_table_names_h(bench):
    _, said = bench
    named = table_strategies(said)
    assert named == ["adamw*", f"diloco H={H}"]


def test_every_bench_plot_names_h(bench, monkeypatch):
    import lionsim.reports.plots.breakdown as breakdown
    import lionsim.reports.plots.run as run
    import lionsim.reports.plots.steptimes as steptimes

    out, _ = bench
    steps, summary, meta = load_run(out)
    texts = drawn_texts(monkeypatch, (run, breakdown, steptimes), lambda: run.plot_run(out, steps, summary, meta))
    assert not [t for t in texts if "diloco@" in t or re.search(r"\bdiloco\n", t)]
    assert any(NAME in t for t in texts)


def test_step_time_distribution_names_h_in_its_legend_and_bars(bench, monkeypatch):
    import lionsim.reports.plots.steptimes as steptimes

    out, _ = bench
    steps, summary, meta = load_run(out)
    figures = []
    monkeypatch.setattr(steptimes, "save", lambda fig, path: figures.append(fig) or [])
    from lionsim.reports.plots.run import plot_run

    plot_run(out, steps, summary, meta)
    (fig,) = figures
    cdf, bars = fig.axes[:2]
    (legend,) = fig.findobj(Legend)
    legend = [t.get_text() for t in legend.get_texts()]
    assert legend[:2] == ["adamw@fp32-allreduce (baseline)", NAME]
    assert [t.get_text() for t in bars.get_yticklabels()] == ["adamw@fp32-allreduce (baseline)", NAME]


def test_bench_report_names_h_in_every_table(bench):
    out, _ = bench
    text = (out / "report.md").read_text()
    assert "diloco@" not in text
    first = text.split("## Which strategy reaches the target loss first")[1].split("\n## ")[0]
    assert f"| adamw@fp32-allreduce | {NAME} |" in first


def test_sweep_tables_name_h(sweep):
    _, said = sweep
    named = table_strategies(said)
    assert "best lr per run" in said and "across seeds" in said
    assert set(named) == {"adamw", f"diloco H={H}"} and len(named) == 16 + 8 + 4  # cells, seed groups, best lrs


def test_sweep_report_names_h_in_first_to_target_and_accuracy(sweep):
    out, _ = sweep
    text = (out / "report.md").read_text()
    assert "diloco@" not in text
    first = text.split("## Which strategy reaches the target loss first")[1].split("\n## ")[0]
    assert f"| adamw@fp32-allreduce | {NAME} |" in first  # the header's run columns
    accuracy = text.split("## Accuracy by worker count")[1].split("\n## ")[0]
    assert f"\n| {NAME} | " in accuracy
    best = text.split("## Best learning rate per run")[1].split("\n## ")[0]
    assert f"\n| {NAME} | 2 |" in best and f"\n| {NAME} | 4 |" in best


def test_every_sweep_plot_names_h(sweep, monkeypatch):
    import lionsim.reports.plots.sweep as plots

    out, _ = sweep
    summary, steps = pd.read_csv(out / "sweep_summary.csv"), pd.read_csv(out / "sweep_steps.csv")
    texts = drawn_texts(monkeypatch, (plots,), lambda: plots.plot_sweep(out, steps, summary))
    assert not [t for t in texts if "diloco@" in t]
    assert sum(t.startswith(NAME) for t in texts) >= 4  # a legend entry in each plot
