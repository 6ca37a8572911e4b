"""Log axes that read (lionsim.reports.plots.style.labelled_log_axis): one of under a decade is
labelled between its ends, in plain numbers, and no two labels touch."""

from __future__ import annotations

import math

import pytest
from matplotlib.figure import Figure

from lionsim.reports.plots.style import FIGSIZE, labelled_log_axis

pytestmark = pytest.mark.plots  # the plot tests: every figure rendered for real


def _labels(low: float, high: float, axis: str = "y"):
    """The tick labels matplotlib draws on a log axis the helper labelled for data `low` to `high`
    (a panel of the two-panel sweep and hierarchy figures)."""
    fig = Figure(figsize=FIGSIZE, dpi=120, layout="constrained")
    ax = fig.subplots(2, 1)[0]
    getattr(ax, f"set_{axis}scale")("log")
    ax.plot([low, high], [low, high])
    labelled_log_axis(getattr(ax, f"{axis}axis"), low, high)
    fig.canvas.draw()
    lo, hi = getattr(ax, f"get_{axis}lim")()
    return [label for label in getattr(ax, f"get_{axis}ticklabels")()
            if label.get_text() and lo <= label.get_position()[axis == "y"] <= hi], fig


def test_a_step_time_axis_of_50_to_100_ms_is_labelled_between_its_ends():
    """Before, 1, 2, 3, 5 x 10^k alone labelled such an axis 50 and 100 only (sweep.png and
    hierarchy.png of `lionsim estimate --sweep workers=...`)."""
    labels, _ = _labels(52.0, 98.0)
    texts = [label.get_text() for label in labels]
    assert len(texts) >= 3 and texts[0] == "50" and texts[-1] == "100", texts
    assert all(50 <= float(t) <= 100 for t in texts) and all("10^" not in t and "$" not in t for t in texts)


@pytest.mark.parametrize("axis", ["x", "y"])
@pytest.mark.parametrize("low, high", [(52.0, 98.0), (10.0, 20.0), (0.55, 2.5), (21.0, 99.0), (7.0, 3000.0)])
def test_log_labels_never_touch_and_span_the_data(low, high, axis):
    """At least 3 labels, the data between the end ones, and no two labels' boxes overlap on
    the figure (a span of under a decade is where labels crowd)."""
    labels, fig = _labels(low, high, axis)
    values = [float(label.get_text()) for label in labels]
    assert len(values) >= 3 and values[0] <= low and values[-1] >= high, values
    boxes = [label.get_window_extent() for label in labels]
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:]), values
    if math.log10(high / low) < 1:
        assert len(values) >= 4, values  # under a decade: labels between the ends
