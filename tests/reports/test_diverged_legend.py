"""A run that diverged is one point or a short stub on the loss plots: their legends say where it
diverged, as the bench table does ("diverged at N")."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from lionsim.reports import summarize
from lionsim.reports.plots import run as run_plots
from lionsim.reports.plots.style import run_styles
from lionsim.reports.summary import split_runs
from tests.helpers.frames import frame, rows

pytestmark = pytest.mark.plots


@pytest.mark.parametrize("x_col", ["step", "sim_time_s"])
def test_the_loss_legend_says_where_a_run_diverged(x_col, monkeypatch):
    drawn = []
    monkeypatch.setattr(run_plots, "save", lambda fig, path: drawn.append(fig) or [])
    steps = frame(rows("adamw", 6), rows("lion", 2, diverged_at=2))  # lion's loss is NaN at step 2
    first_nan = int(steps[(steps["strategy"] == "lion") & steps["loss"].map(math.isnan)]["step"].min())
    summary = summarize(steps)
    runs = split_runs(steps)
    baseline = summary["baseline"].iloc[0]
    run_plots._loss_plot(runs, run_styles([label for label, _ in runs], baseline), baseline, steps, x_col,
                         Path("loss.png"), summary)
    labels = [t.get_text() for t in drawn[0].axes[0].get_legend().get_texts()]
    (lion,) = [t for t in labels if t.startswith("lion@")]
    (adamw,) = [t for t in labels if t.startswith("adamw@")]
    assert f"diverged at step {first_nan}" in lion and "diverged" not in adamw
