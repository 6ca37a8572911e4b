"""estimate --sweep's sweep.png keeps its texts in their panels: a crossover's value beside its
line inside the speedup panel, at either end of the axis, and each panel's y label within the
panel's own height, so the two labels cannot touch. Checked on the drawn figure's geometry."""

from __future__ import annotations

import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

import lionsim.reports.plots.estimate as estimate_plots
from lionsim.cli.app import main

pytestmark = pytest.mark.plots


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """sweep.csv and crossover.csv of a bandwidth sweep where dlion-mavo@a2a-1bit stops winning
    (at 78.9 GB/s of 0.1-100)."""
    out = tmp_path_factory.mktemp("est") / "est"
    with pytest.raises(SystemExit) as done:
        main(["estimate", "--model", "gpt2-124m", "--workers", "4", "-s", "adamw", "-s", "dlion-mavo@a2a-1bit",
              "--sweep", "bandwidth=0.1:100:10", "--out", str(out)])
    assert done.value.code == 0
    crossings = pd.read_csv(out / "crossover.csv").dropna(subset=["crossover"])
    assert len(crossings) == 1
    return pd.read_csv(out / "sweep.csv"), crossings


@pytest.mark.parametrize("at", [0.1 * 1.03, 100 / 1.03])  # a crossover next to either end of the axis
def test_crossover_labels_and_y_labels_stay_in_their_panels(swept, at, tmp_path, monkeypatch):
    frame, crossings = swept
    figures = []
    monkeypatch.setattr(estimate_plots, "save", lambda fig, path: figures.append(fig) or [])
    estimate_plots.plot_estimate_sweep(frame, crossings.assign(crossover=at), "bandwidth", tmp_path / "sweep.png")
    fig = figures[0]
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    top, bottom = fig.axes[:2]
    panel = bottom.get_window_extent(renderer)
    (label,) = [t for t in bottom.texts if t.get_text() == f"{at:.3g}"]
    box = label.get_window_extent(renderer)
    assert panel.x0 <= box.x0 and box.x1 <= panel.x1, (box, panel)  # not cut at the panel's edge
    for ax in (top, bottom):
        own, ylabel = ax.get_window_extent(renderer), ax.yaxis.label.get_window_extent(renderer)
        assert own.y0 <= ylabel.y0 and ylabel.y1 <= own.y1, (ax.yaxis.label.get_text(), ylabel, own)
