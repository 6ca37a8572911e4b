"""A workload's own metric: named, and ranked in its own direction (an error rate's best is its
smallest) in summaries, tables, plots, sweeps and regress; a bad naming is one line."""

from __future__ import annotations

import pytest

from tests.helpers import REPO, write_plugin
from tests.helpers.cli import run_cli

EXAMPLE = REPO / "examples" / "plugins" / "cnn_workload.py"


@pytest.fixture()
def example_data(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("CNN_WORKLOAD_DATA", str(tmp_path_factory.getbasetemp() / "cnn" / "images.pt"))


def test_an_error_rate_is_named_and_its_best_is_its_smallest_in_summary_table_and_plots(tmp_path, capsys, monkeypatch,
                                                                                         example_data):
    import pandas as pd
    from matplotlib.axes import Axes

    labels = []
    real = Axes.set_ylabel
    def set_ylabel(self, text, *args, **kwargs):
        labels.append(text)
        return real(self, text, *args, **kwargs)

    monkeypatch.setattr(Axes, "set_ylabel", set_ylabel)
    out = tmp_path / "e"
    code, table, err = run_cli(["bench", "-w", f"{EXAMPLE}:make_with_eval", "-n", "2", "-b", "8", "--steps", "6",
                           "--eval-every", "1", "-s", "adamw", "--out", str(out)], capsys)
    assert code == 0, err
    steps, summary = pd.read_csv(out / "steps.csv"), pd.read_csv(out / "summary.csv")
    assert set(steps["eval_metric"]) == {"error rate"} and set(steps["eval_higher_is_better"]) == {0}
    row = summary.iloc[0]
    assert row["eval_metric"] == "error rate" and row["eval_higher_is_better"] == 0
    scored = steps["eval_acc"].dropna()
    assert scored.nunique() > 1  # the reference below can tell the smallest from the largest
    assert row["best_eval_acc"] == pytest.approx(scored.min())  # an error rate's best is its smallest
    assert row["final_eval_acc"] == pytest.approx(scored.iloc[-1])
    words = " ".join(table.split())
    assert "error rate" in words and "lower is better" in words and f"{scored.iloc[-1]:.4g}" in words
    assert "eval error rate (lower is better)" in labels and "eval accuracy (%)" not in labels


def test_summaries_take_the_metric_and_direction_from_the_steps_and_default_to_accuracy():
    import pandas as pd

    from lionsim.reports import summarize
    from lionsim.reports.columns import STEP_COLUMNS

    base = {c: 0.0 for c in STEP_COLUMNS} | {"strategy": "adamw", "transport": "fp32-allreduce", "workers": 2,
                                              "network": "1gbe", "backend": "sim", "workload": "w", "seed": 0,
                                              "params": 10, "step_s": 1.0, "sim_time_s": 1.0}
    rows = [base | {"step": i + 1, "loss": 1.0 / (i + 1), "eval_acc": acc} for i, acc in enumerate([0.4, 0.1, 0.3])]
    old = pd.DataFrame(rows)
    assert summarize(old).iloc[0]["best_eval_acc"] == 0.4 and summarize(old).iloc[0]["eval_metric"] == "accuracy"
    own = old.assign(eval_metric="error rate", eval_higher_is_better=0)
    got = summarize(own).iloc[0]
    assert got["best_eval_acc"] == 0.1 and got["eval_metric"] == "error rate" and got["eval_higher_is_better"] == 0


def test_regress_keeps_a_lower_is_better_metric_apart_and_worse_when_it_rises():
    import pandas as pd

    from lionsim.regress.metrics import LOWER_EVAL, is_worse, run_metrics

    rows = pd.DataFrame({"step": [1, 2], "loss": [1.0, 0.9], "eval_loss": [1.0, 0.8], "eval_acc": [0.3, 0.2],
                         "eval_metric": "error rate", "eval_higher_is_better": 0})
    metrics = run_metrics(rows)
    assert metrics[LOWER_EVAL] == 0.2 and "eval_acc" not in metrics
    assert is_worse(LOWER_EVAL, 0.2, 0.3, 0.05) and not is_worse(LOWER_EVAL, 0.2, 0.1, 0.05)
    assert run_metrics(rows.drop(columns=["eval_metric", "eval_higher_is_better"]))["eval_acc"] == 0.2


@pytest.mark.parametrize("extra, message", [
    ('"metric_name": "top-1"', "metric_name and higher_is_better describe a metric of your own"),
    ('"metric": lambda o, t: 0.5, "metric_name": "x" * 41', "metric_name 'xxxx"),
    ('"metric": lambda o, t: 0.5, "higher_is_better": "no"', "higher_is_better is 'no'; accepted: True or False"),
])
def test_a_bad_metric_naming_is_one_line(tmp_path, monkeypatch, capsys, extra, message):
    plugin = write_plugin(tmp_path, f"""
        import torch
        from torch import nn

        def make():
            data = torch.utils.data.TensorDataset(torch.randn(40, 4), torch.randint(0, 2, (40,)))
            return {{"model": nn.Linear(4, 2), "train": data, "loss": nn.functional.cross_entropy, {extra}}}
    """)
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(["bench", "--workload", f"{plugin}:make", "-n", "2", "--steps", "1", "--out", "o"], capsys)
    assert code == 2 and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "o").exists()


def test_a_sweep_table_and_report_name_the_metric(tmp_path):
    import pandas as pd
    from rich.console import Console

    from lionsim.cli.sweep_view import sweep_table
    from lionsim.reports.markdown import _summary_rows

    summary = pd.DataFrame({"run": ["adamw@fp32-allreduce"], "strategy": ["adamw"], "transport": ["fp32-allreduce"],
                            "workload": ["w"], "workers": [2], "network": ["1gbe"], "seed": [0], "final_loss": [0.5],
                            "final_eval_acc": [0.125], "step_s": [0.01], "speedup": [1.0], "comm_s": [0.001],
                            "bits_per_param_up": [32.0], "bits_per_param_down": [32.0],
                            "time_to_target_speedup": [1.0], "eval_metric": ["error rate"],
                            "eval_higher_is_better": [0]})
    console = Console(width=200, record=True)
    console.print(sweep_table(summary))
    text = console.export_text()
    assert "error rate" in text and "0.125" in text and "12.5%" not in text
    report = _summary_rows(summary, "modelled")
    assert "eval error rate (lower is better)" in report and "0.125" in report
