"""What docs/sweeps-and-reports.md says a bench run's plots draw is what they draw."""

from __future__ import annotations

from pathlib import Path

from matplotlib.lines import Line2D

from lionsim.reports import summarize
from lionsim.reports.plots import run as run_plots
from lionsim.reports.plots.style import run_styles
from lionsim.reports.summary import split_runs
from tests.helpers.frames import frame, rows

PAGE = Path(__file__).resolve().parents[2] / "docs" / "sweeps-and-reports.md"


def _bench_bullet() -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("- A bench run:")
    return " ".join(text[start:text.index("\n- ", start)].split())


def test_the_page_names_the_mark_where_a_run_reaches_the_target(monkeypatch):
    """The page said "a bar where each run reaches" the target; the loss plots draw a triangle.
    The mark's name is matplotlib's own for the marker drawn (Line2D.markers)."""
    drawn = []
    monkeypatch.setattr(run_plots, "save", lambda fig, path: drawn.append(fig) or [])
    steps = frame(rows("adamw", 10), rows("lion", 10))
    summary = summarize(steps)
    runs = split_runs(steps)
    baseline = summary["baseline"].iloc[0]
    run_plots._loss_plot(runs, run_styles([label for label, _ in runs], baseline), baseline, steps, "step",
                         Path("loss.png"), summary)
    marks = {line.get_marker() for line in drawn[0].axes[0].get_lines()
             if len(line.get_xdata()) == 1 and line.get_ydata()[0] == summary["target_loss"].iloc[0]}
    assert len(marks) == 1
    shape = Line2D.markers[marks.pop()].split("_")[0]  # "v": triangle_down
    bullet = _bench_bullet()
    assert f"a {shape} on it" in bullet and "a bar where" not in bullet
