"""A run that does not fit on its worker (estimate.csv's memory_fits, the step table's "Does not fit"
note) is marked wherever time to target ranks it: the table, to_target.png's caption and labels,
and the report's headline; against the memory each run needs, counted here from its state rows."""

from __future__ import annotations

import pandas as pd

from lionsim.cli.to_target_view import to_target_table
from lionsim.estimate import EstimateConfig, estimate
from lionsim.reports.plots import to_target as plots
from lionsim.reports.plots.redraw import read_table
from lionsim.reports.to_target import to_target_section
from tests.estimate.test_from_run import bench_dir
from tests.helpers.cli import table_text

RUNS = ["adamw@fp32-allreduce", "dlion-mavo@int8-allreduce"]
H100 = 80 * 2**30
"""An H100's memory: 80 GiB."""


def needs(params: int, state_rows: int) -> int:
    """Float32 weights, gradients and each row of optimizer state."""
    return params * 4 * (2 + state_rows)


def frame(tmp_path) -> pd.DataFrame:
    got = estimate(EstimateConfig(model="llama-7b", tokens_per_worker=8192, workers=32, network="25gbe",
                                  device="h100", strategies=RUNS, from_run=str(bench_dir(tmp_path))))
    got.to_csv(tmp_path / "estimate.csv", index=False)
    return read_table(tmp_path / "estimate.csv", plots.NEEDS)  # as the report and the plots read it back


def test_the_run_that_does_not_fit_is_marked_in_the_table_the_plot_and_the_headline(tmp_path, monkeypatch):
    params = int(estimate(EstimateConfig(model="llama-7b", strategies=RUNS[:1])).iloc[0]["params"])
    assert needs(params, 2) > H100 >= needs(params, 1)  # AdamW's two moments do not fit, D-Lion's one does
    read = frame(tmp_path)
    said = "adamw@fp32-allreduce does not fit on one h100 (80 GiB) unsharded"

    text = table_text(to_target_table(read), 200)
    marked = [line.split()[0] for line in text.splitlines() if line.strip().startswith(("adamw", "dlion"))]
    assert marked == ["adamw*!", "dlion-mavo"]
    assert f"! {said}" in text and "dlion-mavo@int8-allreduce does not fit" not in text

    headline = next(p for p in to_target_section(read).split("\n\n") if p.startswith("First to target"))
    assert said in headline

    captions, labels = [], []
    monkeypatch.setattr(plots, "title_with_caption", lambda fig, title, sub, caption: captions.append(caption))
    real = plots.Figure.subplots

    def subplots(self, *a, **kw):
        ax = real(self, *a, **kw)
        real_ticks = ax.set_yticks
        ax.set_yticks = lambda y, names, **k: (labels.extend(names), real_ticks(y, names, **k))
        return ax

    monkeypatch.setattr(plots.Figure, "subplots", subplots)
    plots.plot_to_target(read, tmp_path / "to_target.png")
    assert f"(does not fit): {said}" in captions[0]
    assert labels == ["adamw@fp32-allreduce (baseline)\n(does not fit)", "dlion-mavo@int8-allreduce"]
