"""Legends that scale: a run of up to 30 strategies shows every legend entry inside the figure,
clear of the title, with axes of a usable size; and axes that read as plain numbers."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pandas as pd
import pytest

import lionsim.reports.plots.breakdown as breakdown
import lionsim.reports.plots.run as run_plots
import lionsim.reports.plots.steptimes as steptimes
from lionsim.reports import STEP_COLUMNS, summarize

pytestmark = pytest.mark.plots  # the plot tests: every figure rendered for real

NAN = math.nan
MIN_AXES_INCHES = 2.5  # the smallest plot area (height and width) that still reads


def many_runs(n: int, steps: int = 6) -> pd.DataFrame:
    """n runs with long labels, eval points, and half of them reaching the baseline's target."""
    rows = []
    for i in range(n):
        drop = 0.1 if i == 0 else (0.15 if i % 2 else 0.05)
        for k in range(1, steps + 1):
            ev = k % 3 == 0
            rows.append({"strategy": f"strategy-number-{i:02d}", "transport": "compressed-allreduce",
                         "workers": 8, "network": "1gbe", "backend": "sim", "workload": "mlp", "seed": 0,
                         "step": k, "loss": 3.0 - drop * k + 0.001 * i, "compute_s": 0.05, "encode_s": 0.0,
                         "comm_s": 0.05 + 0.001 * i, "decode_s": 0.0, "update_s": 0.0, "step_s": 0.1 + 0.001 * i,
                         "sim_time_s": (0.1 + 0.001 * i) * k, "wire_bytes": 4000, "bits_per_param_up": 32,
                         "bits_per_param_down": 32, "params": 1000, "eval_loss": 2.9 - drop * k if ev else NAN,
                         "eval_acc": 0.3 + 0.01 * i + 0.02 * k if ev else NAN})
    return pd.DataFrame(rows)[STEP_COLUMNS]


def drawn(monkeypatch, steps: pd.DataFrame, tmp_path: Path) -> dict:
    """Every figure of plot_run, laid out (not written), by stem."""
    figures = {}

    def keep(fig, path):
        figures[Path(path).stem] = fig
        return []

    for module in (run_plots, steptimes, breakdown):
        monkeypatch.setattr(module, "save", keep)
    run_plots.plot_run(tmp_path, steps, summarize(steps))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "constrained_layout not applied ..." fails the test
        for fig in figures.values():
            fig.draw_without_rendering()
    return figures


def _inside(inner, outer, slack: float = 1.0) -> bool:
    return (inner.x0 >= outer.x0 - slack and inner.y0 >= outer.y0 - slack and inner.x1 <= outer.x1 + slack
            and inner.y1 <= outer.y1 + slack)


@pytest.mark.parametrize("n", [22, 30])
def test_every_legend_entry_shows_clear_of_the_title_and_the_axes_keep_their_size(monkeypatch, tmp_path, n):
    steps = many_runs(n)
    reached = int(summarize(steps)["time_to_target_s"].notna().sum())
    assert reached >= n // 2
    figures = drawn(monkeypatch, steps, tmp_path)
    for stem in ("loss_vs_time", "loss_vs_step", "eval_acc_vs_step", "eval_acc_vs_time", "step_time_distribution"):
        fig = figures[stem]
        legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)
        assert len(legends) == 1, stem
        legend = legends[0]
        labels = [t.get_text() for t in legend.get_texts()]
        assert sum(label.startswith("strategy-number-") for label in labels) == n, stem
        box = legend.get_window_extent()
        assert _inside(box, fig.bbox), (stem, box, fig.bbox)  # no entry cut at an edge
        assert not box.overlaps(fig._suptitle.get_window_extent()), stem  # nor over the title
        for ax in fig.axes:
            size = ax.get_position().transformed(fig.transFigure)
            assert size.height >= MIN_AXES_INCHES * fig.dpi and size.width >= MIN_AXES_INCHES * fig.dpi, stem
    # the "reaches the target" triangles stay on the plot, below the title
    for stem in ("loss_vs_time", "loss_vs_step"):
        fig = figures[stem]
        ax = fig.axes[0]
        title = fig._suptitle.get_window_extent()
        marks = [line for line in ax.get_lines() if line.get_marker() == "v" and line.get_linestyle() == "None"]
        assert len(marks) == reached, stem
        for mark in marks:
            x, y = mark.get_transform().transform((mark.get_xdata()[0], mark.get_ydata()[0]))
            assert y <= ax.get_window_extent().y1 and y < title.y0, (stem, y)


def test_eval_axes_read_as_plain_numbers_without_an_offset(monkeypatch, tmp_path):
    # one eval point per run, close together: matplotlib's default would write "+2.094" and 1e-4 ticks
    steps = many_runs(2, steps=3)
    steps["eval_acc"] = steps["eval_acc"].where(steps["eval_acc"].isna(), 0.020940 + 1e-6 * steps["step"])
    steps.loc[steps["strategy"].str.endswith("01") & steps["eval_acc"].notna(), "eval_acc"] += 2e-6
    figures = drawn(monkeypatch, steps, tmp_path)
    for stem in ("eval_acc_vs_step", "eval_acc_vs_time"):
        ax = figures[stem].axes[0]
        for axis in (ax.xaxis, ax.yaxis):
            assert axis.get_major_formatter().get_offset() == "", stem


def test_the_wait_for_the_slowest_worker_is_a_part_named_as_the_table_names_it(monkeypatch, tmp_path):
    from matplotlib.colors import to_rgb

    steps = many_runs(2)
    steps["wait_s"] = 0.03  # a compute spread's wait, inside step_s: 0.05 compute + 0.03 wait + comm
    steps["step_s"] += 0.03
    fig = drawn(monkeypatch, steps, tmp_path)["time_breakdown"]
    absolute, share, log = fig.axes[:3]
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend()] + list(fig.legends)
    labels = [t.get_text() for legend in legends for t in legend.get_texts()]
    assert "wait for the slowest worker" in labels and not any(label.startswith("other") for label in labels)
    # drawn from wait_s: its bar is 30 ms wide (the time axis in ms) right after compute's 50 ms
    colour = to_rgb(breakdown.COMPONENT_COLOURS["wait_s"])
    wait = [bar for bar in absolute.patches if bar.get_facecolor()[:3] == pytest.approx(colour)]
    assert [(round(bar.get_x(), 6), round(bar.get_width(), 6)) for bar in wait] == [(50.0, 30.0)] * 2
    # and on the log panel: one marker per run at 30 ms
    points = [c.get_offsets() for c in log.collections if c.get_paths() and len(c.get_offsets()) == 2]
    assert any(sorted(p[:, 0].round(6)) == [30.0, 30.0] for p in points)
