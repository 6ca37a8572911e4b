"""A bandwidth sweep's x axis (lionsim.reports.plots.bandwidth_axis): every swept point labelled,
and a swept point at a link preset's rate named as the network given is, on to_target.png and
sweep.png alike. The presets' rates are the figures presets.py's table states."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

import lionsim.reports.plots.estimate as estimate_plots
import lionsim.reports.plots.to_target as to_target_plots
from lionsim.cli.app import main

pytestmark = pytest.mark.plots

MEASURED = Path(__file__).resolve().parents[2] / "reports" / "readme" / "from-run-sweep"
SWEPT = ["0.117", "0.3", "1", "2.9"]  # 1gbe's rate, two points between, 25gbe's (the network given)


def _figures(monkeypatch, tmp_path, sweep: str = ",".join(SWEPT)):
    figures = {}
    for module in (estimate_plots, to_target_plots):
        monkeypatch.setattr(module, "save", lambda fig, path: figures.update({Path(path).stem: fig}) or [])
    with pytest.raises(SystemExit) as done:
        main(["estimate", "--model", "gpt2-345m", "--workers", "16", "--network", "25gbe", "-s", "adamw",
              "-s", "dlion-mavo@a2a-1bit", "--from-run", str(MEASURED), "--sweep", f"bandwidth={sweep}",
              "--out", str(tmp_path / "est")])
    assert done.value.code == 0
    for fig in figures.values():
        fig.canvas.draw()
    return figures


def _labels(ax) -> list[str]:
    low, high = ax.get_xlim()
    return [t.get_text() for t, at in zip(ax.get_xticklabels(), ax.get_xticks()) if t.get_text() and low <= at <= high]


def test_every_swept_point_is_labelled_and_1gbe_is_marked_as_25gbe_is(tmp_path, monkeypatch):
    """to_target.png labelled 0.2, 0.3, 0.4, 0.6, 1, 2, 3: the 0.117 point had no label, and only
    25gbe (the network given) had a line. Now the swept points are the labels and 1gbe's rate has a
    dash-dot line too, grey, named in the legend."""
    figures = _figures(monkeypatch, tmp_path)
    for stem in ("to_target", "sweep"):
        top, bottom = figures[stem].axes[:2]
        assert _labels(bottom) == SWEPT, stem
        for ax in (top, bottom):
            dashdot = sorted((line.get_xdata()[0], line.get_color()) for line in ax.get_lines()
                             if line.get_linestyle() == "-.")
            assert [x for x, _ in dashdot] == [pytest.approx(0.117), pytest.approx(2.9)], stem
        labels = top.get_legend_handles_labels()[1]
        assert "1gbe: 0.117 GB/s" in labels and "25gbe, the network given: 2.9 GB/s" in labels, labels
    plt.close("all")


def test_a_dense_sweep_keeps_round_labels_and_names_no_preset_it_has_no_point_at(tmp_path, monkeypatch):
    figures = _figures(monkeypatch, tmp_path, "0.1:100:20")  # 20 points: too many to label each
    top, bottom = figures["to_target"].axes[:2]
    assert "0.117" not in _labels(bottom) and len(_labels(bottom)) < 20
    assert not any(label.startswith("1gbe") for label in top.get_legend_handles_labels()[1])
    plt.close("all")


def test_the_presets_named_are_the_flat_links_each_rate_once():
    from lionsim.reports.plots.bandwidth_axis import link_presets

    rates = link_presets()
    assert {name: round(rate, 4) for name, rate in rates.items() if "gbe" in name or "mbe" in name} == \
        {"100mbe": 0.0117, "1gbe": 0.117, "10gbe": 1.17, "25gbe": 2.9, "100gbe": round(11.7 * 0.43, 4)}
    assert "loopback" not in rates and not any(name.startswith(("h100x8", "dgx", "a100x8")) for name in rates)


@pytest.mark.parametrize("values, labelled", [([0.117, 0.3, 1, 2.9], True), ([1, 1.02, 10], False),
                                              ([0.1 * 1.5 ** k for k in range(13)], False), ([5.0], False),
                                              # bandwidth=0.5:100:12's steps were labelled 0.809384, 1.31002, ...
                                              (list(np.geomspace(0.5, 100, 12)), False)])
def test_the_swept_points_label_the_axis_only_where_they_are_few_and_apart(values, labelled):
    from lionsim.reports.plots.bandwidth_axis import label_swept

    fig, ax = plt.subplots()
    ax.set_xscale("log")
    assert label_swept(ax.xaxis, values) is labelled
    if labelled:
        assert [t.get_text() for t in ax.get_xticklabels()] == [f"{v:g}" for v in values]
    plt.close(fig)
