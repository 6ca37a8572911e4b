"""A bench sweep's worker crossovers are whole counts, as `estimate --sweep workers` says them
(lionsim.estimate.sweep.worker_crossover: the first count on the winning side): the plots labelled
"2.39 workers", an interpolation between measured counts 2 and 4 that no run can have. Which counts
neighbour is the run's nodes' (lionsim.whole_nodes.neighbour_count): 8 and 16 on nodes of 8, where
the plot once shaded "between 8 and 16 workers" while estimate named 16."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from lionsim.reports.plots import sweep  # noqa: E402
from lionsim.reports.plots.style import run_styles  # noqa: E402
from lionsim.reports.plots.sweep import worker_crossing_text, worker_crossings  # noqa: E402


def test_a_crossover_between_two_measured_counts_apart_is_the_span_between_them():
    spans = worker_crossings(np.array([2.0, 4.0]), np.array([0.99, 1.04]))
    assert spans == [(2, 4)] and worker_crossing_text(spans[0]) == "between 2 and 4 workers"


def test_neighbouring_counts_give_the_winning_sides_count_as_estimate_does():
    # wins above (slower at 2, faster at 3): the first winning count, 3; wins below: the last, 2
    assert worker_crossings(np.array([2.0, 3.0, 4.0]), np.array([0.9, 1.1, 1.2])) == [(3, 3)]
    assert worker_crossings(np.array([2.0, 3.0]), np.array([1.1, 0.9])) == [(2, 2)]
    assert worker_crossing_text((3, 3)) == "3 workers"


def test_no_crossing_no_crossover_and_several_each_whole():
    assert worker_crossings(np.array([2.0, 4.0, 8.0]), np.array([1.1, 1.2, 1.3])) == []
    spans = worker_crossings(np.array([2.0, 4.0, 8.0, 9.0]), np.array([0.8, 1.2, 1.1, 0.9]))
    assert spans == [(2, 4), (8, 8)]
    assert all(isinstance(v, int) for span in spans for v in span)


def test_neighbours_are_the_valid_counts_on_the_runs_nodes():
    # nodes of 8: 8 and 16 neighbour (whole nodes), so the crossover is 16, the count estimate names
    assert worker_crossings(np.array([8.0, 16.0]), np.array([0.9, 1.1]), per_node=8) == [(16, 16)]
    assert worker_crossings(np.array([8.0, 16.0]), np.array([1.1, 0.9]), per_node=8) == [(8, 8)]
    # one GPU a node: 2 and 4 are not neighbours (3 lies between), as before
    assert worker_crossings(np.array([2.0, 4.0]), np.array([0.9, 1.1]), per_node=1) == [(2, 4)]
    assert worker_crossings(np.array([4.0, 8.0]), np.array([0.9, 1.1]), per_node=8) == [(4, 8)]


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

    def keep(fig, path):
        texts.extend(t.get_text() for ax in fig.axes for t in ax.texts)
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
    assert _annotations(tmp_path, summary) == ["between 8 and 16 workers"]  # unknown: one a node
    for cell in summary["cell"].unique():
        (tmp_path / "cells" / cell).mkdir(parents=True)
        (tmp_path / "cells" / cell / "run.json").write_text(json.dumps({"network": {"workers_per_node": 8}}))
    assert _annotations(tmp_path, summary) == ["16 workers"]
