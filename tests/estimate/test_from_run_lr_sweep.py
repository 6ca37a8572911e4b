"""`estimate --from-run` of a sweep over lrs at one worker count: the sweep's warning that a best lr is
at its grid's edge is repeated under the time-to-target table (a wider grid may move the figure), and
the caption says the ratios were measured at that one count, not fitted against log N.

The sweep is a real one of a few tiny mlp steps at two lrs; the edges expected are found here from
its sweep_summary.csv by hand (each run's lowest mean final loss over its lrs, at the grid's ends)."""

from __future__ import annotations

import pandas as pd
import pytest

from lionsim.cli.to_target_view import fitted_text
from tests.helpers.cli import exit_code, run_cli

LRS = (0.001, 0.01)
SWEEP = ["sweep", "--workload", "mlp", "--model-size", "tiny", "--workers", "2", "--steps", "4", "--eval-every", "2",
         "--batch-size", "8", "--strategy", "adamw", "--strategy", "lion", "--network", "1gbe",
         "--lr", ",".join(map(str, LRS))]
ESTIMATE = ["estimate", "--params", "1000000", "--tokens-per-worker", "128", "--workers", "4", "--network", "1gbe"]


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    out = tmp_path_factory.mktemp("lr") / "sweep"
    assert exit_code([*SWEEP, "--out", str(out)]) == 0
    return out


def edges_by_hand(root) -> list[str]:
    """Each run's best lr (lowest final loss; of two lrs always an end of the grid), as the sweep says it."""
    summary = pd.read_csv(root / "sweep_summary.csv")
    out = []
    for run, rows in summary.groupby("run", sort=False):
        losses = rows.groupby("lr")["final_loss"].mean()
        best = float(losses.idxmin())
        side = "smallest" if best == min(LRS) else "largest"
        out.append(f"{run}, N=2: best lr is the {side} tried ({best:g}): extend the grid")
    return out


def test_an_lr_sweeps_edge_warning_is_repeated_and_one_count_is_not_a_fit(swept, capsys):
    code, out, err = run_cli([*ESTIMATE, "--from-run", swept], capsys)
    assert code == 0, err
    said = " ".join(out.split())
    for edge in edges_by_hand(swept):
        assert f"{edge} (the lr sweep's warning: a figure from it may move)." in said
    assert "relative to adamw@fp32-allreduce's there (measured at 2 workers only; no fit)." in said
    assert "fitted against log N over its worker counts" not in said
    assert "(the run's own)" in said and "the run's own, fitted" not in said  # the baseline's steps: no fit either
    # only the runs a figure came from (and the baseline): pricing adamw alone leaves lion's out
    code, out, err = run_cli([*ESTIMATE, "--from-run", swept, "-s", "adamw"], capsys)
    said = " ".join(out.split())
    assert code == 0 and "adamw@fp32-allreduce, N=2: best lr" in said and "lion@fp32-allreduce, N=2" not in said


def test_a_sweep_over_several_worker_counts_is_said_fitted():
    assert fitted_text({"to_target_kind": "sweep", "to_target_workers": "2 4"}) == (
        " (fitted against log N over its worker counts). ")
    assert fitted_text({"to_target_kind": "sweep", "to_target_workers": "1024"}) == (
        " (measured at 1,024 workers only; no fit). ")
    assert fitted_text({"to_target_kind": "bench run", "to_target_workers": "8"}) == ". "


@pytest.mark.parametrize("sweep", [[], ["--sweep", "workers=2,4"]])
def test_the_report_of_the_estimate_repeats_the_edge_warnings(swept, tmp_path, sweep):
    """report.md of one estimate and of an estimate sweep carries the lines its table printed,
    read from the estimate's CSV (to_target_lr_edges)."""
    out = tmp_path / "est"
    assert exit_code([*ESTIMATE, "--from-run", str(swept), *sweep, "--out", str(out)]) == 0
    assert exit_code(["report", str(out)]) == 0
    report = " ".join((out / "report.md").read_text().split())
    for edge in edges_by_hand(swept):
        assert f"{edge} (the lr sweep's warning: a figure from it may move)." in report
