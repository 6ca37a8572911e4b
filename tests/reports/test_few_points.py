"""A series of one point (a run evaluated once) is its marker: drawn large, inside the axes, and
the legend says the runs are points; the sweep's step axis around one eval runs from 0 in whole
steps. Read from the drawn figures' artists and geometry."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from lionsim.reports.plots import run as run_plots
from lionsim.reports.plots import sweep
from lionsim.reports.plots.style import FEW_MARKER, run_styles
from lionsim.reports.summary import split_runs

pytestmark = pytest.mark.plots

BENCH = Path(__file__).resolve().parents[2] / "reports" / "readme" / "default-bench"  # a 100-step default bench
ONCE = "one evaluation a run: a point each"


@pytest.fixture
def figures(monkeypatch):
    drawn = []
    for module in (run_plots, sweep):
        monkeypatch.setattr(module, "save", lambda fig, path: drawn.append(fig) or [])
    return drawn


def _evaluated_once():
    """The default bench with each run's evaluations dropped but its last."""
    steps, summary = pd.read_csv(BENCH / "steps.csv"), pd.read_csv(BENCH / "summary.csv")
    last = steps["step"] == steps["step"].max()
    steps = steps.assign(eval_loss=steps["eval_loss"].where(last), eval_acc=steps["eval_acc"].where(last))
    assert steps["eval_acc"].notna().any()
    runs = split_runs(steps)
    baseline = summary["baseline"].iloc[0]
    return runs, run_styles([label for label, _ in runs], baseline), baseline, steps


def _inside(fig, ax, lines) -> None:
    """Each marker of each of `lines` wholly within `ax` (its centre at least half a marker from
    every edge), in the figure drawn once (a draw of a whole figure takes about half a second)."""
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    box = ax.get_window_extent(fig.canvas.get_renderer())
    for line in lines:
        half = line.get_markersize() / 2 * fig.dpi / 72
        for x, y in ax.transData.transform(np.column_stack([line.get_xdata(), line.get_ydata()])):
            assert box.x0 + half <= x + 1e-6 and x - 1e-6 <= box.x1 - half, (x, half, box)
            assert box.y0 + half <= y + 1e-6 and y - 1e-6 <= box.y1 - half, (y, half, box)


@pytest.mark.parametrize("x_col", ["step", "sim_time_s"])
def test_a_run_evaluated_once_is_a_large_point_inside_the_axes(figures, x_col):
    runs, styles, baseline, steps = _evaluated_once()
    run_plots._eval_acc_plot(runs, styles, baseline, steps, x_col, Path("a.png"))
    run_plots._loss_plot(runs, styles, baseline, steps, x_col, Path("l.png"))
    acc, loss = figures
    (ax,) = acc.axes
    points = [line for line in ax.get_lines() if len(line.get_xdata()) == 1]
    assert len(points) == len(runs)  # one point a run
    for line in points:
        assert line.get_marker() not in (None, "None", "") and line.get_markersize() >= FEW_MARKER
    _inside(acc, ax, points)
    assert ax.get_legend().get_title().get_text() == ONCE
    (ax,) = loss.axes
    diamonds = [line for line in ax.get_lines() if line.get_marker() == "D" and len(line.get_xdata()) == 1]
    assert len(diamonds) == len(runs) and all(line.get_markersize() >= FEW_MARKER for line in diamonds)
    assert f"eval loss ({ONCE})" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_the_sweep_step_axis_around_one_eval_runs_from_zero_in_whole_steps(figures):
    rows = [{"cell": f"{w}-{s}", "workload": "mlp", "seed": 0, "workers": w, "network": "1gbe", "strategy": s,
             "transport": "t", "step": step, "loss": 1.0 / step, "eval_acc": 0.5 if step == 10 else np.nan}
            for w in (2, 4) for s in ("adamw", "lion") for step in range(1, 11)]
    steps = sweep._labelled(pd.DataFrame(rows), {})
    labels = ["adamw@t", "lion@t"]
    sweep._curve_plot(steps, labels, run_styles(labels, "adamw@t"), "adamw@t", "eval_acc", "acc", "t", Path("e.png"))
    fig = figures[0]
    for ax in fig.axes[:2]:
        low, high = ax.get_xlim()
        assert low == 0 and 10 < high < 11  # the eval at step 10 just inside the end
        ticks = [t for t in ax.get_xticks() if low <= t <= high]
        assert ticks and all(float(t).is_integer() for t in ticks) and 10 in ticks
        for line in ax.get_lines():
            assert line.get_markersize() >= FEW_MARKER
        _inside(fig, ax, ax.get_lines())
    (legend,) = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]
    assert legend.get_title().get_text() == ONCE
