"""time_breakdown.png's title: what its bars are (means over the steps) and how each part's time was
obtained, from the run's own run.json, in the words its tables use."""

from __future__ import annotations

import matplotlib.figure
import numpy as np
import pandas as pd

from lionsim.reports.plots.breakdown import breakdown_plot
from lionsim.reports.plots.style import run_styles
from tests.helpers.timing import run_record


def _title(meta, tmp_path, monkeypatch) -> str:
    """The suptitle breakdown_plot draws for one run of 4 steps under run.json `meta`."""
    said = []
    original = matplotlib.figure.Figure.suptitle

    def keep(fig, text, **kwargs):
        said.append(text)
        return original(fig, text, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "suptitle", keep)
    rows = pd.DataFrame({"step": np.arange(1, 5), "compute_s": 1e-3, "encode_s": 1e-5, "comm_s": 2e-3,
                         "decode_s": 1e-5, "update_s": 1e-4, "step_s": 3.12e-3, "workload": "mlp", "workers": 2,
                         "network": "1gbe"})
    label = "adamw@fp32-allreduce"
    breakdown_plot([(label, rows)], run_styles([label], label), label, rows, tmp_path / "b.png",
                   "mlp", meta)
    return " ".join(said[0].split())


def test_a_measured_run_says_its_parts_are_medians_of_their_kind_and_a_modelled_one_modelled(tmp_path, monkeypatch):
    """The title said "Mean time per step, by part" with no word on how the times were obtained,
    where a gloo run's table says each step's part is the median of its kind."""
    gloo = _title(run_record(compute="measured", backend="gloo", steps=20, warmup=2), tmp_path, monkeypatch)
    assert gloo.startswith("Mean time per step over the run's steps, by part")
    assert "step times measured: comp (median of 10 passes, 3 warm-up dropped)" in gloo
    assert "comm on loopback (median of 18 steps, 2 warm-up dropped)" in gloo
    sim = _title(run_record(), tmp_path, monkeypatch)
    assert "step times modelled: comp on h100 (FLOPs at peak x mfu)" in sim and "comm on 1gbe (alpha-beta)" in sim
    assert "measured" not in sim


def test_a_measured_runs_title_names_the_link_as_its_table_does(tmp_path, monkeypatch):
    """A gloo run's title said how comm was measured but not on what, where the bench table's
    caption says it (titles.measured_on): both name it by that one rule now."""
    from lionsim.reports.tables import _times

    loopback = run_record(compute="measured", backend="gloo", steps=20, warmup=2)
    assert "comm on loopback (median of 18 steps, 2 warm-up dropped)" in _title(loopback, tmp_path, monkeypatch)
    named = {**loopback, "link": {"name": "eth0 (10 GbE)"}}
    title = _title(named, tmp_path, monkeypatch)
    assert "comm on eth0 (10 GbE) (median of 18 steps, 2 warm-up dropped)" in title
    assert " ".join(_times(named).split()) in title  # the table's caption, word for word
