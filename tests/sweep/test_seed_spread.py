"""The seed spread of a sweep: each run's spread over seeds in its table and summary, none for one
seed, and the spread the time model quotes is the regress baselines'."""

from __future__ import annotations

import pytest

from tests.helpers import REPO
from tests.helpers.cli import run_cli


def test_a_sweep_over_two_seeds_shows_each_runs_spread_in_its_table_and_summary(tmp_path, capsys):
    import pandas as pd

    out = tmp_path / "s"
    code, table, err = run_cli(["sweep", "--workload", "mlp", "--model-size", "tiny", "--workers", "2",
                           "--seed", "0,1", "--steps", "3", "--eval-every", "1", "-s", "adamw,lion", "--out", str(out)], capsys)
    assert code == 0, err
    summary = pd.read_csv(out / "sweep_summary.csv")
    assert len(summary) == 4 and (summary["seed_count"] == 2).all()
    for _, rows in summary.groupby("run"):
        loss, acc = rows["final_loss"].tolist(), rows["final_eval_acc"].tolist()
        # the sample standard deviation of two values: |a - b| / sqrt(2)
        assert rows["final_loss_seed_sd"].tolist() == pytest.approx([abs(loss[0] - loss[1]) / 2**0.5] * 2)
        assert rows["final_eval_acc_seed_sd"].tolist() == pytest.approx([abs(acc[0] - acc[1]) / 2**0.5] * 2)
    assert summary["final_loss_seed_sd"].gt(0).all()  # two seeds train differently
    words = " ".join(table.split())
    assert "across seeds: mean ± sd" in words and "does not rank strategies" in words
    adamw = summary[summary["run"] == "adamw@fp32-allreduce"]
    mean, sd = adamw["final_eval_acc"].mean(), adamw["final_eval_acc"].std(ddof=1)
    assert f"{mean * 100:.1f}% ± {sd * 100:.1f} pp" in words  # the sd in percentage points, not a share


def test_one_seed_has_no_spread_and_no_seed_table():
    import pandas as pd

    from lionsim.cli.sweep_view import seed_table
    from lionsim.sweep.tables import seed_spread

    summary = pd.DataFrame({"workload": "mlp", "workers": 2, "network": "1gbe", "seed": 0,
                            "run": ["adamw@fp32-allreduce", "lion@fp32-allreduce"],
                            "final_loss": [1.0, 2.0], "final_eval_acc": [0.5, 0.6]})
    spread = seed_spread(summary)
    assert (spread["seed_count"] == 1).all() and spread["final_eval_acc_seed_sd"].isna().all()
    assert seed_table(spread) is None


def test_the_seed_spread_the_time_model_quotes_is_the_regress_baselines():
    import json
    import re

    cases = json.loads((REPO / "reports" / "baselines" / "regress.json").read_text())["cases"]
    page = (REPO / "docs" / "time-model.md").read_text()
    section = page.split("### What one seed shows", 1)[1].split("\n## ", 1)[0]
    vit = cases["vit-n4-iid"]["runs"]
    for run, label in (("adamw@fp32-allreduce", "adamw"), ("lion@fp32-allreduce", "lion"),
                       ("dlion-mavo@a2a-1bit", "dlion-mavo@a2a-1bit")):
        m = vit[run]["metrics"]["eval_acc"]
        row = f"| {label} | {m['value'] * 100:.1f}% | {m['sd'] * 100:.1f} points | {m['noise_rms'] * 100:.1f} points |"
        assert row in section, row
    for case in ("mlp-n4-iid", "gpt-n4-iid"):
        runs = ("adamw", "lion", "dlion-mavo")
        metrics = cases[case]["runs"]
        values = [metrics[next(r for r in metrics if r.split("@")[0] == name)]["metrics"]["eval_acc"]["value"]
                  for name in runs]
        assert " / ".join(f"{v * 100:.1f}" for v in values) + "%" in section
    assert re.search(r"one seed's accuracy does not rank strategies", section, re.I)


def test_the_seed_table_counts_the_seeds_that_diverged():
    """Of three seeds one diverged: the table showed 'seeds 3' beside the other two's mean."""
    import pandas as pd

    from lionsim.cli.sweep_view import seed_table
    from tests.helpers.cli import table_text

    nan = float("nan")
    summary = pd.DataFrame([{"workload": "mlp", "run": "adamw@fp32-allreduce", "workers": 2, "network": "1gbe",
                             "seed": seed, "final_loss": loss, "final_eval_acc": 0.5, "diverged_at_step": at}
                            for seed, loss, at in ((0, 1.0, nan), (1, 3.0, nan), (2, nan, 4))])
    words = " ".join(table_text(seed_table(summary), width=100).split())
    assert "3 (1 diverged) 2.000 ± 1.414" in words, words  # mean and sample sd of 1 and 3
    assert "K diverged: K of the seeds diverged (a loss or gradient went non-finite" in words
