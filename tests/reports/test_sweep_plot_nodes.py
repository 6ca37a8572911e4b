"""sweep.png of a workers sweep on nodes of several GPUs says what a node holds and which library
priced comm (as estimate's title does), and marks the counts that fit in one node, where nothing
crosses a node (sweep.csv's inter_bytes are 0 there)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import lionsim.reports.plots.estimate as estimate_plots
from lionsim.cli.app import main

pytestmark = pytest.mark.plots

CLUSTER = ["--params", "1e9", "--tokens-per-worker", "8192", "--workers", "32", "--gpus-per-node", "8",
           "--network", "25gbe", "-s", "adamw@bf16-allreduce", "-s", "dlion-mavo@a2a-1bit"]


def drawn(monkeypatch, tmp_path, sweep):
    figures = {}
    monkeypatch.setattr(estimate_plots, "save", lambda fig, path: figures.update({Path(path).stem: fig}) or [])
    with pytest.raises(SystemExit) as done:
        main(["estimate", *CLUSTER, "--sweep", sweep, "--out", str(tmp_path / "est")])
    assert done.value.code == 0
    fig = figures["sweep"]
    fig.canvas.draw()
    return fig, pd.read_csv(tmp_path / "est" / "sweep.csv")


def test_the_title_names_gpus_a_node_and_library_and_the_one_node_count_is_marked(tmp_path, monkeypatch):
    fig, rows = drawn(monkeypatch, tmp_path, "workers=8,16,32,64")
    title = " ".join(fig._suptitle.get_text().split())
    first = rows.iloc[0]
    assert f"25gbe (8 GPUs a node, library: {first['library']} over {first['fabric']})" in title, title
    within = sorted(rows.loc[rows["inter_bytes"] == 0, "sweep_value"].unique())
    assert within == [8]  # nothing crosses a node at 8 workers
    ticks = {round(t.get_loc()): t.label1.get_text() for t in fig.axes[1].xaxis.get_major_ticks()}
    assert {w for w, text in ticks.items() if "(one node)" in text} == set(within)


def test_many_counts_shade_the_ones_within_one_node(tmp_path, monkeypatch):
    fig, rows = drawn(monkeypatch, tmp_path, "workers=2:256:20")
    within = rows.loc[rows["inter_bytes"] == 0, "sweep_value"]
    for ax in fig.axes[:2]:
        (span,) = [p for p in ax.patches if p.get_width() > 0]  # axvspan: one shaded rectangle
        assert span.get_x() == pytest.approx(within.min()) and span.get_x() + span.get_width() == pytest.approx(
            within.max())
    assert any(f"one node (up to {within.max():g} workers)" in t.get_text() for t in fig.axes[0].texts)
