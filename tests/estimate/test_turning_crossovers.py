"""A speedup that turns more than once over a sweep (loses at 8 workers, wins at 16, ties at 32,
wins at 64): every change of side is a crossover, and every output says the whole verdict, never
"wins from 16" alone. The reference is a brute-force scan of the points' sides (a win above
1 + TIE, a loss below 1 - TIE, a tie between) and, over workers, the estimate at every valid count."""

from __future__ import annotations

import io
import itertools

import pandas as pd
import pytest

from lionsim.estimate.config import EstimateConfig, resolve
from lionsim.estimate.plain import Sweep
from lionsim.estimate.sweep import crossovers, run_sweep
from lionsim.estimate.table import estimate_rows
from lionsim.numbers import TIE


def side(speedup: float) -> int:
    return 1 if speedup > 1 + TIE else -1 if speedup < 1 - TIE else 0


def spans(rows: pd.DataFrame, first: float, last: float) -> list[tuple[float, float]]:
    """Where crossover.csv's rows of one run say it wins, read off the rows alone: from each "above"
    to the next "below" (the sweep's ends where none)."""
    out, start = [], first
    for row in rows.itertuples(index=False):
        if row.wins == "above":
            start = row.crossover
        else:
            out.append((start, row.crossover))
            start = None
    if start is not None and rows["wins"].iloc[-1] == "above":
        out.append((start, last))
    return out


def frame(values, speedups) -> pd.DataFrame:
    return pd.DataFrame([{"strategy": "lion", "transport": "t", "sweep_value": v, "speedup": s,
                          "baseline": "adamw@t"} for v, s in zip(values, speedups)])


@pytest.mark.parametrize("pattern", list(itertools.product((0.9, 0.998, 1.2), repeat=5)))
def test_every_change_of_side_is_a_crossover_and_the_rows_win_exactly_where_the_points_do(pattern):
    values = (1.0, 2.0, 4.0, 8.0, 16.0)
    got = crossovers(frame(values, pattern), Sweep("bandwidth", values))
    wins = [side(s) > 0 for s in pattern]
    changes = [k for k in range(len(values) - 1) if wins[k] != wins[k + 1]]  # the brute-force scan
    edges = got[got["crossover"].notna()]
    assert len(edges) == len(changes)
    sides = ["above" if wins[k + 1] else "below" for k in changes]
    # a run that never loses wins "partly" (its rows' side unsaid: the scan's), every other row its side
    partly = not any(side(s) < 0 for s in pattern)
    assert edges["wins"].tolist() == (["partly"] * len(changes) if partly else sides)
    if not changes:
        return
    edges = edges.assign(wins=sides)
    won = spans(edges, values[0], values[-1])
    for v, s in zip(values, pattern):  # inside a span it wins there, outside it does not
        assert any(a <= v <= b for a, b in won) == (side(s) > 0), (v, s)
    if len(edges) > 1 and any(side(s) < 0 for s in pattern):  # it turns: one verdict naming each side
        (where,) = set(edges["wins_where"])
        losing = [f"{v:.4g}" for v, s in zip(values, pattern) if side(s) < 0]
        assert f"loses at {losing[0]}" in where and where.startswith("wins ")
        assert ("ties at" in where) == any(side(s) == 0 for s in pattern)


CONFIG = EstimateConfig(model="gpt2-345m", workers=32, network="h100x8-100gbe", device="h100", tokens_per_worker=16384,
                        baseline="adamw@bf16-allreduce", strategies=["adamw@bf16-allreduce", "diloco"])
"""The case found: diloco H=2 at 0.96x (8 workers), 1.11x (16), 0.998x (32: a tie), 1.09x (64)."""


@pytest.fixture(scope="module")
def swept():
    return run_sweep(CONFIG, "workers=8,16,32,64")


def test_a_run_that_loses_wins_ties_and_wins_again_over_workers_wins_only_where_every_count_does(swept):
    speedups = dict(zip(swept.rows.loc[swept.rows["strategy"] == "diloco", "sweep_value"],
                        swept.rows.loc[swept.rows["strategy"] == "diloco", "speedup"]))
    assert [side(speedups[w]) for w in (8, 16, 32, 64)] == [-1, 1, 0, 1]  # the case as found
    rows = swept.crossings
    assert rows["wins"].tolist() == ["above", "below", "above"]  # was one row: "above" 16, wins from 16
    assert rows["loses_at"].tolist()[0] == 8 and rows["loses_at"].isna().tolist()[1:] == [True, True]
    (where,) = set(rows["wins_where"])
    assert where.endswith("workers; loses at 8, ties at 32 workers")
    # brute force: every valid count from 8 to 64 (whole nodes of 8) priced, a win exactly inside the spans
    won, r = spans(rows, 8, 64), resolve(CONFIG)
    for workers in range(8, 65, 8):
        diloco = next(row for row in estimate_rows(r, workers, r.network) if row["strategy"] == "diloco")
        assert any(a <= workers <= b for a, b in won) == (side(diloco["speedup"]) > 0), workers
    # the words name the spans the rows hold
    assert where.startswith("wins " + " and ".join(f"at {a:.0f}" if a == b else f"from {a:.0f} to {b:.0f}"
                                                     for a, b in won) + " workers")


def test_the_table_the_report_and_the_legend_say_the_one_verdict(swept, tmp_path, monkeypatch):
    """The terminal's crossover table, report.md's and sweep.png's legend each say where it wins,
    loses and ties, once a run; none says "from 16" (a win from 16 on, false at 32)."""
    monkeypatch.setenv("COLUMNS", "200")
    from matplotlib.figure import Figure
    from rich.console import Console

    from lionsim.cli.estimate_view import crossover_table
    from lionsim.reports.estimate_report import _crossovers
    from lionsim.reports.plots.estimate_marks import mark_crossovers

    (where,) = set(swept.crossings["wins_where"])
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(crossover_table(swept.crossings, swept.sweep, swept.rows))
    table = console.export_text()
    assert table.count(where) == 1 and "from 16 " not in table and "8-16, 16, 40" in table
    report = _crossovers(swept.crossings, "workers", values=[8, 16, 32, 64])
    assert report.count(where) == 1 and "| from 16 |" not in report
    ax = Figure().add_subplot()
    mark_crossovers(ax, swept.crossings, {"diloco@fp32-allreduce": "orange"}, 8, 64, ax)
    legend = [line.get_label() for line in ax.get_lines() if not len(line.get_xdata())]
    said = " ".join(" ".join(label.split()) for label in legend)
    assert said.count(" ".join(where.split())) == 1 and "wins from 16 workers" not in said
    assert "also turns at 40 workers" in said  # the other line named, its verdict not repeated
