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


def test_near_equal_worker_crossovers_keep_their_own_lines_and_whole_counts():
    # 4096 and 4104 share three figures ("4.1e+03"): once one line at 4096 and that label for both
    marked = pd.DataFrame({"strategy": ["dlion-mavo", "powersgd"], "transport": ["hier-1bit", "lowrank-allreduce"],
                           "crossover": [4096.0, 4104.0], "variable": "workers", "wins": "above"})
    colours = {"dlion-mavo@hier-1bit": "red", "powersgd@lowrank-allreduce": "orange"}
    fig, ax = plt.subplots()
    ax.set_xscale("log")
    mark_crossovers(ax, marked, colours, 1024.0, 16384.0)
    assert sorted(t.get_text() for t in ax.texts) == ["4,096", "4,104"]
    assert sorted(line.get_xdata()[0] for line in ax.get_lines()) == [4096.0, 4104.0]
    plt.close(fig)


def test_bandwidth_crossovers_keep_three_figures():
    marked = pd.DataFrame({"strategy": ["dlion-mavo"], "transport": ["hier-1bit"], "crossover": [12.3456],
                           "variable": "bandwidth", "wins": "below"})
    fig, ax = plt.subplots()
    ax.set_xscale("log")
    mark_crossovers(ax, marked, {"dlion-mavo@hier-1bit": "red"}, 1.0, 100.0)
    assert [t.get_text() for t in ax.texts] == ["12.3"]
    plt.close(fig)
