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


def test_the_legend_names_each_dotted_line_drawn_in_its_colour_and_no_other():
    """Three runs crossing at 16 share one grey line: the legend had three coloured dotted entries
    (one a run) that matched no line drawn. Each legend entry is a line drawn, in its colour."""
    marked = pd.DataFrame({"strategy": ["dlion-mavo", "diloco", "onebit-adam", "powersgd"],
                           "transport": ["a2a-1bit", "fp32-allreduce", "compressed-allreduce", "lowrank-allreduce"],
                           "crossover": [16.0, 16.0, 16.0, 64.0], "loses_at": [8.0, 8.0, 8.0, 32.0],
                           "variable": "workers", "wins": "above"})
    colours = {"dlion-mavo@a2a-1bit": "red", "diloco@fp32-allreduce": "green",
               "onebit-adam@compressed-allreduce": "orange", "powersgd@lowrank-allreduce": "purple"}
    fig, (legend_ax, ax) = plt.subplots(2, 1)
    ax.set_xscale("log")
    mark_crossovers(ax, marked, colours, 8.0, 512.0, legend_ax)
    drawn = [(line.get_xdata()[0], matplotlib.colors.to_hex(line.get_color())) for line in ax.get_lines()]
    handles, labels = legend_ax.get_legend_handles_labels()
    named = [matplotlib.colors.to_hex(h.get_color()) for h in handles if h.get_linestyle() == ":"]
    assert sorted(colour for _, colour in drawn) == sorted(named)  # one entry a line, in the line's colour
    assert dict(drawn)[64.0] == matplotlib.colors.to_hex("purple")
    shared = next(label for label in labels if "dlion-mavo" in label)  # every run on the grey line named in its entry
    assert all(run in shared for run in ("dlion-mavo@a2a-1bit", "diloco@fp32-allreduce",
                                         "onebit-adam@compressed-allreduce"))
    assert "16: dlion-mavo, diloco, onebit-adam" in [t.get_text() for t in ax.texts]
    plt.close(fig)
