"""Runs crossing at the same value share one line and one label (estimate's sweep and to-target
plots): two "16" labels and two dotted lines lay on top of each other."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from lionsim.reports.plots.estimate_marks import mark_crossovers  # noqa: E402


def test_two_runs_crossing_at_16_get_one_label_naming_both_and_one_line():
    marked = pd.DataFrame({"strategy": ["dlion-mavo", "powersgd", "adamw"],
                           "transport": ["hier-1bit", "lowrank-allreduce", "hier:fp8-allreduce"],
                           "crossover": [16.0, 16.0, 32.0], "variable": "workers", "wins": "above"})
    colours = {"dlion-mavo@hier-1bit": "red", "powersgd@lowrank-allreduce": "orange",
               "adamw@hier:fp8-allreduce": "green"}
    fig, ax = plt.subplots()
    ax.set_xscale("log")
    mark_crossovers(ax, marked, colours, 8.0, 64.0)
    labels = sorted(t.get_text() for t in ax.texts)
    assert labels == ["16: dlion-mavo, powersgd", "32"]
    assert sorted(line.get_xdata()[0] for line in ax.get_lines()) == [16.0, 32.0]
    plt.close(fig)
