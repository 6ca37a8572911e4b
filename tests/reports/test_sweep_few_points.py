"""A sweep's speedup plots where the sweep has few points (lionsim.reports.plots.sweep): over two
worker counts the span a crossover lies in is the whole panel, so it is said in the legend, not
shaded; a shaded span's legend swatch is drawn as the shade is, its label clear of the baseline;
over two bandwidths a run is its points alone, where three or more still draw the model's curve.
Read from the drawn artists."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.colors as mcolors  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.patches import Polygon, Rectangle  # noqa: E402

from lionsim.reports.plots import sweep  # noqa: E402
from lionsim.reports.plots.style import run_styles  # noqa: E402

pytestmark = pytest.mark.plots

LABELS = ["adamw@allreduce", "lion@allreduce", "dlion-mavo@allreduce"]
BANDWIDTH = {"1gbe": 0.117, "10gbe": 1.17, "100gbe": 11.7}


def _summary(points) -> pd.DataFrame:
    """Two seeds of three runs at each (workers, network) of `points`, lion's speedup given (it
    crosses 1), dlion-mavo's always above."""
    rows = []
    for (workers, network), speedup in points:
        for seed in (0, 1):
            for strategy, value in (("adamw", 1.0), ("lion", speedup + 0.02 * seed), ("dlion-mavo", 1.6 * speedup)):
                rows.append({"cell": f"c{workers}{network}", "workload": "mlp", "seed": seed, "workers": workers,
                             "network": network, "bandwidth_GBps": BANDWIDTH[network], "strategy": strategy,
                             "transport": "allreduce", "speedup": value, "time_to_target_speedup": value,
                             "final_loss": 1.0, "final_eval_acc": 0.5, "baseline": "adamw@allreduce",
                             "step_s": 1.0 / value})
    frame = pd.DataFrame(rows)
    return frame.assign(label=[f"{s}@{t}" for s, t in zip(frame["strategy"], frame["transport"])])


def _draw(monkeypatch, summary: pd.DataFrame, x: str):
    """The speedup plot's figure and the legend's handles and title, as _speedup_plot draws them."""
    drawn = {}
    monkeypatch.setattr(sweep, "save", lambda fig, path: drawn.update(fig=fig) or [])
    monkeypatch.setattr(sweep, "_legend", lambda fig, axes, panels, handles, title=None:
                        drawn.update(handles=handles, title=title))
    facet = "network" if x == "workers" else "workers"
    sweep._speedup_plot(summary, LABELS, run_styles(LABELS, LABELS[0]), LABELS[0], x, facet, "speedup", "t",
                        Path("p.png"), {"1gbe": 1})
    return drawn["fig"], drawn["handles"], drawn["title"]


def _colour(label: str) -> tuple:
    return mcolors.to_rgb(run_styles(LABELS, LABELS[0])[label]["color"])


def _shades(ax) -> list:
    """The spans shaded in `ax` (axvspan: a Rectangle from matplotlib 3.9, a Polygon before)."""
    return [p for p in ax.patches if isinstance(p, (Polygon, Rectangle)) and p.get_alpha() == sweep.SPAN_ALPHA]


def test_over_two_worker_counts_the_crossing_is_said_in_the_legend_not_shaded(monkeypatch):
    """lion crosses 1 between 4 and 8, the panel's two counts: a shade of the whole panel said nothing
    (and its grey swatch matched no shade). The legend names the run and the two counts instead, in
    its colour; nothing is shaded, and no dotted segment lies along the baseline."""
    fig, handles, _ = _draw(monkeypatch, _summary([((4, "1gbe"), 0.9), ((8, "1gbe"), 1.1)]), "workers")
    (ax,) = [a for a in fig.axes if a.get_visible()]
    assert _shades(ax) == [] and len(ax.texts) == 0
    dotted = [line for line in ax.lines if line.get_linestyle() == ":" and len(set(line.get_xdata())) > 1]
    assert dotted == []
    said = [h for h in handles if "crosses 1" in str(h.get_label())]
    assert [h.get_label() for h in said] == ["lion@allreduce: crosses 1\nbetween 4 and 8 workers"]
    assert mcolors.to_rgb(said[0].get_color()) == _colour("lion@allreduce")



def test_a_crossing_said_in_the_legend_has_no_glyph_and_reads_in_the_runs_colour(monkeypatch):
    """The entry drew a dotted line, which promised a mark the panel does not have. As the legend is
    drawn (the real _legend): nothing where its handle goes (no line, no marker), its words in
    lion's colour; the run entries keep their line and marker."""
    drawn = {}
    monkeypatch.setattr(sweep, "save", lambda fig, path: drawn.update(fig=fig) or [])
    sweep._speedup_plot(_summary([((4, "1gbe"), 0.9), ((8, "1gbe"), 1.1)]), LABELS, run_styles(LABELS, LABELS[0]),
                        LABELS[0], "workers", "network", "speedup", "t", Path("p.png"), {"1gbe": 1})
    (legend,) = [ax.get_legend() for ax in drawn["fig"].axes if ax.get_legend() is not None]
    entries = dict(zip((t.get_text() for t in legend.get_texts()), zip(legend.legend_handles, legend.get_texts())))
    glyph, text = entries["lion@allreduce: crosses 1\nbetween 4 and 8 workers"]
    assert glyph.get_linestyle() == "None" and glyph.get_marker() in ("None", "none", "", None)
    assert mcolors.to_rgb(text.get_color()) == _colour("lion@allreduce")
    run, _ = entries["lion@allreduce"]
    assert run.get_linestyle() == "-" and run.get_marker() not in ("None", "none", "", None)

def test_a_shaded_span_has_a_swatch_as_drawn_and_a_label_clear_of_the_baseline(monkeypatch):
    """Over 4, 8 and 16 workers lion's crossing lies between 4 and 8: shaded there, in lion's colour,
    and the legend's swatch is that colour at that alpha (it was grey); the span's label sits at the
    panel's top, not on the y = 1 line. Nothing in lion's colour lies on the baseline: a dotted
    segment along y = 1 over the span, which no legend entry named, read as a second lion at 1.00x."""
    summary = _summary([((4, "1gbe"), 0.9), ((8, "1gbe"), 1.1), ((16, "1gbe"), 1.3)])
    fig, handles, _ = _draw(monkeypatch, summary, "workers")
    (ax,) = [a for a in fig.axes if a.get_visible()]
    lion = [line for line in ax.lines if mcolors.to_rgb(line.get_color()) == _colour("lion@allreduce")]
    means = summary[summary["strategy"] == "lion"].groupby("workers")["speedup"].mean()  # over the seeds
    assert len(lion) == 1 and list(lion[0].get_ydata()) == pytest.approx(list(means)), lion  # its line alone
    (shade,) = _shades(ax)
    assert mcolors.to_rgb(shade.get_facecolor()) == _colour("lion@allreduce")
    (swatches,) = [h for h in handles if h.get_label() == sweep.SPAN_TURNS]
    assert [(mcolors.to_rgb(p.get_facecolor()), p.get_alpha()) for p in swatches] == \
        [(_colour("lion@allreduce"), shade.get_alpha())]
    (label,) = ax.texts
    assert label.get_text() == "between 4 and 8 workers"
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    box = label.get_window_extent(fig.canvas.get_renderer())
    baseline = ax.transData.transform((8.0, 1.0))[1]
    assert box.y0 > baseline + 20  # pixels: clear of the baseline's line and the markers on it
    left, right = ax.transData.transform([(4.0, 1.0), (8.0, 1.0)])[:, 0]
    assert left <= box.x0 and box.x1 <= right  # over its span


def test_over_two_bandwidths_a_run_is_its_points_alone(monkeypatch):
    """A curve from 1gbe's point to 10gbe's drew speedups at bandwidths no cell priced: each run is
    its two points (with whiskers for the seeds), its legend entry has no line, and the legend says
    why; the crossover is still marked where the model puts it."""
    fig, handles, title = _draw(monkeypatch, _summary([((8, "1gbe"), 0.8), ((8, "10gbe"), 1.2)]), "bandwidth_GBps")
    ax = fig.axes[0]
    for label in LABELS:
        ours = [line for line in ax.lines if mcolors.to_rgb(line.get_color()) == _colour(label)]
        joined = [line for line in ours if line.get_linestyle() != "None" and len(set(line.get_xdata())) > 1]
        assert joined == [], label  # no line between its points (a crossover's vertical line is at one x)
        assert any(sorted(line.get_xdata()) == [0.117, 1.17] for line in ours)  # the points themselves
    entries = {h.get_label(): h for h in handles}
    assert all(entries[f"{label} (baseline)" if label == LABELS[0] else label].get_linestyle() == "None"
               for label in LABELS)
    assert title == "points alone: 2 bandwidths\nare too few for a curve"
    assert "point: mean over 2 seeds\nwhiskers: min-max over seeds" in entries
    assert any(line.get_marker() == "X" for line in ax.lines)  # the crossover, on y = 1


def test_over_three_bandwidths_the_curve_is_drawn_as_before(monkeypatch):
    fig, handles, title = _draw(monkeypatch, _summary([((8, "1gbe"), 0.8), ((8, "10gbe"), 1.2),
                                                       ((8, "100gbe"), 1.3)]), "bandwidth_GBps")
    ax = fig.axes[0]
    curve = [line for line in ax.lines if mcolors.to_rgb(line.get_color()) == _colour("lion@allreduce")
             and line.get_linestyle() != "None" and len(line.get_xdata()) > 3]
    assert curve and np.ptp(curve[0].get_xdata()) == pytest.approx(11.7 - 0.117)
    assert title is None and "line: mean over 2 seeds\nband: min-max over seeds" in [h.get_label() for h in handles]


@pytest.mark.parametrize("x", ["workers", "bandwidth_GBps"])
def test_the_crossover_marker_says_it_marks_a_crossing_of_1_or_the_edge_of_a_tie(monkeypatch, x):
    """lion ties (within TIE of 1.00x: lionsim.numbers.TIE), then wins: its X marks where it leaves the
    tie band, which is no crossing of 1, and the legend says both (estimate's sweep.png: "ties", "turns")."""
    from lionsim.numbers import TIE

    points = ([((2, "1gbe"), 1 + TIE / 2), ((3, "1gbe"), 1.3), ((4, "1gbe"), 1.4)] if x == "workers" else
              [((8, "1gbe"), 1 + TIE / 2), ((8, "10gbe"), 1.3), ((8, "100gbe"), 1.4)])
    _fig, handles, _ = _draw(monkeypatch, _summary(points).query("seed == 0"), x)
    labels = [h.get_label() for h in handles if not isinstance(h, tuple)]
    marker = [label for label in labels if label.startswith("crossover:")]
    assert marker and all("crosses 1\nor a win meets a tie" in label for label in marker), labels


def test_a_whole_panels_span_says_whether_it_crosses_1_or_meets_a_tie(monkeypatch):
    """4 and 8 workers on nodes of one are not neighbours: the crossover lies between them, the whole
    panel, said in the legend in words: "crosses 1" from a loss, "a win meets a tie" from a tie."""
    from lionsim.numbers import TIE

    for first, words in ((0.9, "crosses 1"), (1 + TIE / 2, "a win meets a tie")):
        summary = _summary([((4, "1gbe"), first), ((8, "1gbe"), 1.3)]).query("seed == 0")
        _fig, handles, _ = _draw(monkeypatch, summary, "workers")
        labels = [h.get_label() for h in handles if not isinstance(h, tuple)]
        assert f"lion@allreduce: {words}\nbetween 4 and 8 workers" in labels, labels
