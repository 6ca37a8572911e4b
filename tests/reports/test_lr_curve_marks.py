"""loss_vs_step_by_lr's marks (lionsim.reports.plots.lr_curves): a line that leaves the loss axis
for good, by blowing up while finite or by going non-finite, ends in an X where it left, worked
out here by hand from the drawn points."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from lionsim.reports.plots import lr_curves

LOSSES = {  # lr -> loss at steps 1..6: 0.01 settles; 1.0 spikes out and back; 5.0 blows up and stays finite
    0.01: [2.0, 1.9, 1.8, 1.7, 1.6, 1.5],
    1.0: [2.0, 1.9, 3.5, 1.9, 1.8, 1.7],
    5.0: [2.0, 2.4, 2.9, 40.0, 900.0, 7000.0],
}


def test_left_at_is_the_last_crossing_of_the_top_between_the_points_either_side():
    from lionsim.reports.plots.lr_curves import left_at

    assert left_at([1, 2, 3, 4], [2.0, 2.9, 40.0, 900.0], 3.0) == pytest.approx(2 + (3.0 - 2.9) / (40.0 - 2.9))
    assert left_at([1, 2, 3, 4], [2.0, 5.0, 2.0, 9.0], 3.0) == pytest.approx(3 + 1 / 7)  # the last exit, not the first
    assert left_at([1, 2, 3], [2.0, 5.0, 2.0], 3.0) is None  # back in range at the end: not gone
    assert left_at([1, 2], [4.0, 5.0], 3.0) == 1.0  # out from the first point


def _frames(diverged: dict[float, int] | None = None):
    diverged = diverged or {}
    summary, steps = [], []
    for lr, losses in LOSSES.items():
        cell = f"mlp-w2-1gbe-s0-lr{lr}-lion@fp32-allreduce"
        summary.append({"cell": cell, "workload": "mlp", "workers": 2, "network": "1gbe", "seed": 0, "strategy": "lion",
                        "transport": "fp32-allreduce", "lr": lr, "final_loss": losses[-1] if lr not in diverged else math.nan,
                        "diverged_at_step": diverged.get(lr, math.nan)})
        for k, loss in enumerate(losses, start=1):
            if lr in diverged and k >= diverged[lr]:
                loss = math.nan
            steps.append({"cell": cell, "workload": "mlp", "workers": 2, "network": "1gbe", "seed": 0,
                          "strategy": "lion", "transport": "fp32-allreduce", "step": k, "loss": loss})
    return pd.DataFrame(summary), pd.DataFrame(steps)


def _drawn(monkeypatch, tmp_path, diverged=None):
    figures = []
    monkeypatch.setattr(lr_curves, "save", lambda fig, path: figures.append(fig) or [])
    lr_curves.plot_lr_curves(tmp_path / "x", *_frames(diverged))
    fig = figures[0]
    ax = next(a for a in fig.axes if a.get_visible())
    marks = [(float(l.get_xdata()[0]), float(l.get_ydata()[0]), l.get_color()) for l in ax.get_lines() if l.get_marker() == "X"]
    legends = [*fig.legends, *(a.get_legend() for a in fig.axes if a.get_legend() is not None)]
    labels = [t.get_text() for legend in legends for t in legend.get_texts()]
    return ax, marks, labels


def test_a_finite_blow_up_is_marked_where_it_left_the_axis(monkeypatch, tmp_path):
    """lr 5's loss reached thousands, finite, and ran off the top of the plot unmarked (no cell
    diverged, so no X). Now an X on the top edge where it crossed it; lr 1's spike, back in range,
    is not marked; the axis stays cut at 1.5x the first step's loss."""
    ax, marks, labels = _drawn(monkeypatch, tmp_path)
    top = ax.get_ylim()[1]
    assert top == pytest.approx(1.5 * 2.0)
    colour = lr_curves.lr_colours(LOSSES)[5.0]
    assert len(marks) == 1
    x, y, c = marks[0]
    assert x == pytest.approx(3 + (top - 2.9) / (40.0 - 2.9)) and y == top and tuple(c) == tuple(colour)
    assert any(label.startswith("X: diverged: where it\nleft the axis") for label in labels)


def test_a_non_finite_lr_in_range_is_marked_at_its_last_finite_loss(monkeypatch, tmp_path):
    ax, marks, _ = _drawn(monkeypatch, tmp_path, {0.01: 4, 5.0: 5})
    top = ax.get_ylim()[1]
    assert sorted((x, y) for x, y, _ in marks) == sorted([(3.0, 1.8), (3 + (top - 2.9) / (40.0 - 2.9), top)])
