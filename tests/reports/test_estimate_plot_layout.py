"""estimate --sweep's two-panel plots fit a long run list: the legend under the panels (the panels
keep the figure's width), every label inside the figure and each y label within its own panel;
hierarchy.png's log axes say so, with their units; and a workers sweep whose counts stood in for
--workers says so in its titles, drawn by the command and redrawn by `lionsim plot`. Checked on
the drawn figures' geometry and texts."""

from __future__ import annotations

from pathlib import Path

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

import lionsim.reports.plots.estimate as estimate_plots
from lionsim.cli.app import main

pytestmark = pytest.mark.plots

RUNS = ["streaming-diloco@hier:fp8-e5m2-allreduce", "adamw", "lion", "dlion-mavo@hier-1bit",
        "lioncub-l1@hier:int8-allreduce", "powersgd", "diloco", "demo"]  # the baseline first, its name long
REPLACED = "the sweep's counts in place of --workers 24"


def _estimate(tmp_path, monkeypatch, *extra: str) -> dict:
    figures = {}
    monkeypatch.setattr(estimate_plots, "save", lambda fig, path: figures.update({Path(path).stem: fig}) or [])
    with pytest.raises(SystemExit) as done:
        main(["estimate", "--model", "gpt2-124m", "--network", "h100x8-10gbe", *extra,
              *[a for run in RUNS for a in ("-s", run)], "--out", str(tmp_path / "est")])
    assert done.value.code == 0
    return figures


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    monkeypatch = pytest.MonkeyPatch()
    try:
        yield _estimate(tmp_path_factory.mktemp("est"), monkeypatch, "--workers", "24",
                        "--sweep", "workers=8,16,32,64,128,256")
    finally:
        monkeypatch.undo()


def _renderer(fig):
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    return fig.canvas.get_renderer()


@pytest.mark.parametrize("name", ["sweep", "hierarchy"])
def test_a_long_run_list_keeps_the_panels_wide_and_every_label_in_the_figure(drawn, name):
    fig = drawn[name]
    renderer = _renderer(fig)
    page = fig.bbox
    (legend,) = fig.legends  # one legend, the figure's: under the panels
    runs = [t.get_text() for t in legend.get_texts() if "wins" not in t.get_text()]
    assert len(runs) == len(RUNS)  # every run named
    box = legend.get_window_extent(renderer)
    panels = [ax.get_window_extent(renderer) for ax in fig.axes[:2]]
    assert box.y1 <= min(p.y0 for p in panels)  # below both panels, not beside one
    for panel in panels:
        assert panel.width >= 0.8 * page.width, (panel, page)  # no column left for a legend beside them
    for ax, panel in zip(fig.axes[:2], panels):
        label = ax.yaxis.label.get_window_extent(renderer)
        assert panel.y0 <= label.y0 and label.y1 <= panel.y1, (ax.get_ylabel(), label, panel)
    texts = [legend, fig._suptitle, fig.axes[1].xaxis.label, *(ax.yaxis.label for ax in fig.axes[:2])]
    for text in texts:
        b = text.get_window_extent(renderer)
        assert page.x0 <= b.x0 and b.x1 <= page.x1 and page.y0 <= b.y0 and b.y1 <= page.y1, (text, b, page)


def test_hierarchy_names_its_log_axes_and_their_units(drawn):
    top, bottom = drawn["hierarchy"].axes[:2]
    assert [ax.get_yscale() for ax in (top, bottom)] == ["log", "log"] and bottom.get_xscale() == "log"
    assert "bytes" in top.get_ylabel() and "log scale" in top.get_ylabel()
    assert bottom.get_ylabel() == "step time (s, log scale)"  # up to 2.6 s at 256 workers
    assert bottom.get_xlabel() == "workers (log scale)"


@pytest.mark.parametrize("name", ["sweep", "hierarchy"])
def test_a_sweep_that_replaced_workers_says_so_in_its_title(drawn, name):
    assert REPLACED in drawn[name]._suptitle.get_text().replace("\n", " ")


def test_a_sweep_through_the_given_workers_says_nothing_of_it(tmp_path, monkeypatch):
    figures = _estimate(tmp_path, monkeypatch, "--workers", "16", "--sweep", "workers=8,16,32")
    for name in ("sweep", "hierarchy"):
        assert "in place of" not in figures[name]._suptitle.get_text()


def test_the_redrawn_plots_say_it_too(tmp_path, monkeypatch):
    figures = _estimate(tmp_path, monkeypatch, "--workers", "24", "--sweep", "workers=8,16,32")
    assert REPLACED in figures["sweep"]._suptitle.get_text().replace("\n", " ")
    figures.clear()
    with pytest.raises(SystemExit) as done:
        main(["plot", str(tmp_path / "est")])
    assert done.value.code == 0
    for name in ("sweep", "hierarchy"):
        assert REPLACED in figures[name]._suptitle.get_text().replace("\n", " ")
