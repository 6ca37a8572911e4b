"""A bench sweep's worker crossovers are whole counts, as `estimate --sweep workers` says them
(lionsim.estimate.sweep.worker_crossover: the first count on the winning side): the plots labelled
"2.39 workers", an interpolation between measured counts 2 and 4 that no run can have. Which counts
neighbour is the run's nodes' (lionsim.whole_nodes.neighbour_count): 8 and 16 on nodes of 8, where
the plot once shaded "between 8 and 16 workers" while estimate named 16."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from lionsim.numbers import TIE  # noqa: E402

from lionsim.reports.plots import sweep  # noqa: E402
from lionsim.reports.plots.style import run_styles  # noqa: E402
from lionsim.reports.plots.sweep import worker_crossing_text, worker_crossings  # noqa: E402


def spans(workers, speedups, per_node=1) -> list[tuple[int, int]]:
    """worker_crossings' (low, high) each."""
    return [tuple(c[:2]) for c in worker_crossings(np.array(workers, dtype=float),
                                                      np.array(speedups, dtype=float), per_node)]


def test_a_crossover_between_two_measured_counts_apart_is_the_span_between_them():
    (got,) = spans([2.0, 4.0], [0.99, 1.04])
    assert got[:2] == (2, 4) and worker_crossing_text(got) == "between 2 and 4 workers"


def test_neighbouring_counts_give_the_winning_sides_count_as_estimate_does():
    # wins above (slower at 2, faster at 3): the first winning count, 3; wins below: the last, 2
    assert spans([2.0, 3.0, 4.0], [0.9, 1.1, 1.2]) == [(3, 3)]
    assert spans([2.0, 3.0], [1.1, 0.9]) == [(2, 2)]
    assert worker_crossing_text((3, 3)) == "3 workers"


def test_no_crossing_no_crossover_and_several_each_whole():
    assert spans([2.0, 4.0, 8.0], [1.1, 1.2, 1.3]) == []
    got = spans([2.0, 4.0, 8.0, 9.0], [0.8, 1.2, 1.1, 0.9])
    assert got == [(2, 4), (8, 8)]
    assert all(isinstance(v, int) for span in got for v in span)


def test_neighbours_are_the_valid_counts_on_the_runs_nodes():
    # nodes of 8: 8 and 16 neighbour (whole nodes), so the crossover is 16, the count estimate names
    assert spans([8.0, 16.0], [0.9, 1.1], per_node=8) == [(16, 16)]
    assert spans([8.0, 16.0], [1.1, 0.9], per_node=8) == [(8, 8)]
    # one GPU a node: 2 and 4 are not neighbours (3 lies between), as before
    assert spans([2.0, 4.0], [0.9, 1.1], per_node=1) == [(2, 4)]
    assert spans([4.0, 8.0], [0.9, 1.1], per_node=8) == [(4, 8)]


def _summary(network: str) -> pd.DataFrame:
    rows = []
    for workers, speedup in ((8, 0.9), (16, 1.1)):
        for strategy, value in (("adamw", 1.0), ("lion", speedup)):
            rows.append({"cell": f"c{workers}", "workload": "mlp", "seed": 0, "workers": workers, "network": network,
                         "bandwidth_GBps": 12.5, "strategy": strategy, "transport": "allreduce", "speedup": value,
                         "time_to_target_speedup": value, "final_loss": 1.0, "final_eval_acc": 0.5,
                         "baseline": "adamw@allreduce"})
    return pd.DataFrame(rows)


def _annotations(root, summary) -> list[str]:
    texts = []
    labelled = summary.assign(label=[f"{s}@{t}" for s, t in zip(summary["strategy"], summary["transport"])])
    labels = ["adamw@allreduce", "lion@allreduce"]
    original = sweep.save

    def keep(fig, path):  # the panel's labels, and a crossing the legend says (a span as wide as the panel)
        legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]
        texts.extend(t.get_text() for ax in fig.axes for t in ax.texts)
        texts.extend(t.get_text() for legend in legends for t in legend.get_texts() if ": crosses 1\n" in t.get_text())
        return original(fig, path)

    sweep.save = keep
    try:
        sweep._speedup_plot(labelled, labels, run_styles(labels, labels[0]), labels[0], "workers", "network",
                            "speedup", "t", root / "speedup_vs_workers.png", sweep.workers_per_node(root, summary))
    finally:
        sweep.save = original
    return texts


def test_the_plot_reads_workers_per_node_from_the_network_or_a_cells_run_json(tmp_path):
    assert _annotations(tmp_path, _summary("h100x8-100gbe")) == ["16 workers"]  # a preset of 8 a node
    # a profile file since moved: the cell's run.json says how many a node it priced
    summary = _summary(str(tmp_path / "gone.toml"))
    # unknown: one a node, so the crossing lies between 8 and 16, the panel's whole width: said in the legend
    assert _annotations(tmp_path, summary) == ["lion@allreduce: crosses 1\nbetween 8 and 16 workers"]
    for cell in summary["cell"].unique():
        (tmp_path / "cells" / cell).mkdir(parents=True)
        (tmp_path / "cells" / cell / "run.json").write_text(json.dumps({"network": {"workers_per_node": 8}}))
    assert _annotations(tmp_path, summary) == ["16 workers"]


def brute_force(speedups) -> list[int]:
    """Where a bench sweep over neighbouring counts 2, 3, 4, ... crosses, by a plain walk: a point wins
    above 1 + TIE, loses below 1 - TIE, ties between. Between a loss and the next win (either order)
    the crossover is the winning count from which, up to the winning point, every count reads above
    1 (the crossing nearest the win); a run that never loses has an edge at each win beside a tie."""
    side = ["win" if s > 1 + TIE else "loss" if s < 1 - TIE else "tie" for s in speedups]
    found = []
    if "win" in side and "loss" in side:
        sided = [k for k, v in enumerate(side) if v != "tie"]
        for i, j in zip(sided, sided[1:]):
            if side[i] == side[j]:
                continue
            c = j if side[j] == "win" else i
            step = -1 if side[j] == "win" else 1
            while speedups[c + step] > 1:
                c += step
            found.append(c + 2)
    elif "win" in side:
        found = [k + 2 + (side[k + 1] == "win") for k in range(len(side) - 1)
                 if (side[k] == "win") != (side[k + 1] == "win")]
    return found


@pytest.mark.parametrize("speedups", [
    [0.9, 1.003],  # loses, then ties: no crossover (a plain ratio above 1 said "3 workers")
    [0.998, 1.002, 0.999],  # ties throughout
    [0.9, 1.003, 0.998, 1.2],  # level points between a loss and a win: the crossing nearest the win, at 5
    [1.2, 0.998, 1.003, 0.9],  # and mirrored: the last count that wins, 2
    [1.002, 1.1, 1.001],  # ties and wins, never loses: an edge each side of the win
    [0.998, 1.1],  # an edge where it starts to win
    [0.9, 1.1, 1.2],
    [1.1, 0.9, 0.8, 1.2],
    [1.3, 1.2, 1.1],
])
def test_worker_crossovers_take_the_tie_rule_and_the_segment_nearest_the_win(speedups):
    counts = list(range(2, 2 + len(speedups)))
    got = spans(counts, speedups)
    assert all(low == high for low, high in got)  # neighbouring counts: a whole count each
    assert [low for low, _ in got] == brute_force(speedups)


def _figure(summary, monkeypatch, x="workers", by="network"):
    figures = []
    monkeypatch.setattr(sweep, "save", lambda fig, path: figures.append(fig) or [])
    labelled = summary.assign(label=[f"{s}@{t}" for s, t in zip(summary["strategy"], summary["transport"])])
    labels = ["adamw@allreduce", "lion@allreduce"]
    sweep._speedup_plot(labelled, labels, run_styles(labels, labels[0]), labels[0], x, by, "speedup", "t",
                        Path("unused.png"), {str(n): 8 for n in summary["network"]})
    return figures[0].axes[0], run_styles(labels, labels[0])["lion@allreduce"]["color"]


def _line_at(ax, colour, at: float) -> float:
    """The run's drawn line (straight on the log x axis between its points) read at `at`."""
    line = next(ln for ln in ax.lines if ln.get_color() == colour and len(ln.get_xdata()) > 2
                and ln.get_linestyle() != "None")
    x, y = np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata(), dtype=float)
    return float(np.interp(np.log(at), np.log(x), y))


def test_a_worker_crossovers_marker_sits_on_the_line(monkeypatch):
    """The X stood at 1.0 at the winning count, where the line reads that count's speedup (1.1)."""
    rows = []
    for workers, speedup in ((8, 0.9), (16, 1.1), (32, 1.2)):
        for strategy, value in (("adamw", 1.0), ("lion", speedup)):
            rows.append({"cell": f"c{workers}", "workload": "mlp", "seed": 0, "workers": workers,
                         "network": "h100x8-100gbe", "bandwidth_GBps": 12.5, "strategy": strategy,
                         "transport": "allreduce", "speedup": value, "time_to_target_speedup": value,
                         "final_loss": 1.0, "final_eval_acc": 0.5, "baseline": "adamw@allreduce"})
    ax, colour = _figure(pd.DataFrame(rows), monkeypatch)
    (marker,) = [ln for ln in ax.lines if ln.get_marker() == "X"]
    (at,), (y,) = marker.get_xdata(), marker.get_ydata()
    assert at == 16 and y == pytest.approx(_line_at(ax, colour, at), abs=1e-12)
