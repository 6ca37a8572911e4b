"""bytes_per_step.png of a local-step method (0 B on its local steps, the full exchange on the
others): its min-max whisker runs under its bar, not through it, and every bar's note ends inside
the axes, whose right border is drawn. Checked on the drawn figure against the bytes given."""

from __future__ import annotations

from pathlib import Path

import pytest
from matplotlib.container import ErrorbarContainer

from lionsim.reports.plots import run as run_plots
from lionsim.reports.plots.style import run_styles
from lionsim.reports.summary import split_runs
from tests.helpers.figures import drawn_texts
from tests.helpers.frames import frame, rows

pytestmark = pytest.mark.plots


def test_a_local_step_methods_whisker_runs_under_its_bar_and_the_notes_stay_inside(monkeypatch):
    drawn = []
    monkeypatch.setattr(run_plots, "save", lambda fig, path: drawn.append(fig) or [])
    local = rows("diloco", 6)
    for k, row in enumerate(local):
        row["wire_bytes"] = 0 if k % 2 == 0 else 8000  # syncs every other step: 0 B, then 8000 B
    steps = frame(rows("adamw", 6), local)  # adamw: 4000 B every step
    runs = split_runs(steps)
    baseline = "adamw@fp32-allreduce"
    run_plots._bytes_plot(runs, run_styles([label for label, _ in runs], baseline), baseline, steps, Path("b.png"))
    fig = drawn[0]
    ax = fig.axes[0]
    drawn_texts(fig)  # lays it out as saved
    renderer = fig.canvas.get_renderer()
    bars = ax.patches
    assert [bar.get_width() for bar in bars] == [4000, 4000]  # both means 4000 B
    (whisker,) = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]  # adamw's bytes never vary
    (span,) = whisker.lines[2]  # the whisker's horizontal segment
    (x0, y0), (x1, y1) = span.get_segments()[0]
    assert (min(x0, x1), max(x0, x1)) == (0, 8000) and y0 == y1
    diloco = bars[1]
    assert not diloco.get_y() <= y0 <= diloco.get_y() + diloco.get_height()  # under the bar, not through it
    assert y0 < ax.get_ylim()[0]  # and inside the axes (the y axis is inverted)
    panel = ax.get_window_extent(renderer)
    for note in ax.texts:
        box = note.get_window_extent(renderer)
        assert panel.x0 <= box.x0 and box.x1 <= panel.x1, (note.get_text(), box, panel)
    assert ax.spines["right"].get_visible()
