"""A run that reached the target is never called "not reached" because its baseline did not: the
bench table, summary.csv, report.md and the sweep's legend say one thing (lionsim.reports.target_speedup).

The reference: hand-made runs of 10 steps against --target-loss 1.0, whose smoothed loss is the
loss itself (a trailing mean over ceil(10% of 10) = 1 step):

    A, the baseline, 2 ms a step, loss 2.0 throughout: never gets there (its whole run: 20 ms)
    B, 1 ms a step, loss 2.0 for steps 1-5, then 0.5: gets there at step 6, at 6 ms
    C, 1 ms a step, loss 2.0 throughout: never gets there

B's speedup cannot be computed (A has no time to target) but is above A's 20 ms / B's 6 ms = 3.33x.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from lionsim.reports import summary_table, write_run
from lionsim.reports.files import SUMMARY_FILE
from lionsim.reports.markdown import write_report
from lionsim.reports.plots.sweep import unreached
from lionsim.reports.summary import SummaryRule, summarize
from lionsim.reports.target_speedup import to_target_text
from tests.helpers.cli import table_text

STEPS, TARGET = 10, 1.0
RUNS = {"adamw": (0.002, lambda k: 2.0), "dlion-mavo": (0.001, lambda k: 2.0 if k <= 5 else 0.5),
        "signsgd": (0.001, lambda k: 2.0)}
A, B, C = (f"{s}@int8-allreduce" for s in RUNS)
B_TIME, A_WHOLE = 6 * 0.001, STEPS * 0.002


def steps_frame(workers: int = 4, runs=RUNS) -> pd.DataFrame:
    rows = []
    for strategy, (step_s, loss) in runs.items():
        for k in range(1, STEPS + 1):
            rows.append({"strategy": strategy, "transport": "int8-allreduce", "workers": workers, "network": "1gbe",
                         "backend": "sim", "workload": "mlp", "seed": 0, "step": k, "loss": loss(k),
                         "compute_s": step_s / 2, "encode_s": 0.0, "comm_s": step_s / 2, "decode_s": 0.0,
                         "update_s": 0.0, "step_s": step_s, "sim_time_s": step_s * k, "wire_bytes": 100,
                         "bits_per_param_up": 8.0, "bits_per_param_down": 8.0, "params": 25,
                         "eval_loss": math.nan, "eval_acc": math.nan})
    return pd.DataFrame(rows)


def summary() -> pd.DataFrame:
    return summarize(steps_frame(), SummaryRule(target_loss=TARGET))


def test_summary_csv_keeps_the_runs_time_and_its_lower_bound(tmp_path):
    write_run(tmp_path, steps_frame(), summary(), {"status": "complete", "config": {"target_loss": TARGET}})
    back = pd.read_csv(tmp_path / SUMMARY_FILE).set_index("run")
    assert back["target_reached"].tolist() == [False, True, False]
    assert back.loc[B, "time_to_target_s"] == pytest.approx(B_TIME) and back.loc[B, "steps_to_target"] == 6
    assert math.isnan(back.loc[B, "time_to_target_speedup"])  # no speedup: A has no time to target
    assert back.loc[B, "time_to_target_speedup_above"] == pytest.approx(A_WHOLE / B_TIME)
    assert back.loc[[A, C], "time_to_target_speedup_above"].isna().all()  # never got there: no bound


def test_the_bench_table_shows_the_bound_and_says_what_it_is():
    text = table_text(summary_table(summary(), {"config": {"steps": STEPS}}), 80)
    rows = {line.split()[0].rstrip("*"): line.split()[-1] for line in text.splitlines()
            if line.split()[:1] and line.split()[0].rstrip("*") in RUNS}
    assert rows == {"adamw": "reached", "dlion-mavo": f">{A_WHOLE / B_TIME:.2f}x", "signsgd": "reached"}
    assert text.count("not reached") >= 2 and ">3.33x" in text
    assert ">: at least this, the baseline's whole run's time / this run's (the baseline never got there)" in \
        " ".join(text.split())


def test_the_report_agrees_with_the_table_and_its_first_to_target_table(tmp_path):
    meta = {"status": "complete", "config": {"workload": "mlp", "workers": 4, "steps": STEPS, "target_loss": TARGET}}
    write_run(tmp_path, steps_frame(), summary(), meta)
    text = write_report(tmp_path).read_text()
    rows = {line.split(" | ")[0].lstrip("| ").removesuffix(" (baseline)"): line.split(" | ")[-1].rstrip(" |")
            for line in text.split("## Summary")[1].split("## Which")[0].splitlines() if line.startswith("| ")}
    assert {run: rows[run] for run in (A, B, C)} == {A: "not reached", B: ">3.33x", C: "not reached"}
    assert f"| **{B}** | not reached | {B_TIME * 1e3:.2f} ms | not reached |" in text
    assert "(the baseline never got there)" in text


@pytest.mark.parametrize("row, text", [
    ({"target_loss": 1.0, "target_reached": True, "time_to_target_s": 0.004, "time_to_target_speedup": 2.5}, "2.50x"),
    ({"target_loss": 1.0, "target_reached": False, "time_to_target_s": math.nan, "time_to_target_speedup": math.nan},
     "not reached"),
    ({"target_loss": math.nan, "target_reached": False, "time_to_target_s": math.nan,
      "time_to_target_speedup": math.nan}, "n/a"),
    # reached, the baseline not, in a summary written before the bound: said in words, never "not reached"
    ({"target_loss": 1.0, "target_reached": True, "time_to_target_s": 0.004, "time_to_target_speedup": math.nan},
     "baseline not reached"),
])
def test_each_case_has_its_own_words(row, text):
    assert to_target_text(pd.Series(row)) == text


def test_the_sweep_legend_says_which_missed_the_target_in_a_cell():
    """Two cells: at 4 workers the baseline gets there (B's speedup is drawn), at 8 it does not, so B
    has no point there: "baseline not reached", not "not reached" as for C."""
    reaching = {**RUNS, "adamw": (0.002, lambda k: 2.0 if k <= 8 else 0.5)}
    cells = pd.concat([summarize(steps_frame(4, reaching), SummaryRule(target_loss=TARGET)),
                       summarize(steps_frame(8), SummaryRule(target_loss=TARGET))], ignore_index=True)
    cells = cells.assign(label=cells["run"])
    assert cells.loc[(cells["run"] == B) & (cells["workers"] == 4), "time_to_target_speedup"].item() == \
        pytest.approx(9 * 0.002 / B_TIME)
    assert unreached(cells, [A, B, C], "time_to_target_speedup") == {
        A: (" (not reached in 1 of 2 cells)", True), B: (" (baseline not reached in 1 of 2 cells)", True),
        C: (": not reached, no line", False)}


@pytest.mark.plots
def test_a_sweep_whose_baseline_never_got_there_still_draws_its_time_to_target_plot(tmp_path):
    """No cell has a speedup to draw (the baseline, A, never gets there): the plot's log axes had no
    limits and saving it raised a traceback; it is drawn, every run named in its legend."""
    from lionsim.reports.plots.style import run_styles
    from lionsim.reports.plots.sweep import _speedup_plot

    cells = pd.concat([summarize(steps_frame(), SummaryRule(target_loss=TARGET)).assign(network=net, bandwidth_GBps=bw)
                       for net, bw in (("1gbe", 0.117), ("10gbe", 1.17))], ignore_index=True)
    cells = cells.assign(label=cells["run"])
    labels = [A, B, C]
    path = tmp_path / "time_to_target_speedup_vs_bandwidth.png"
    assert _speedup_plot(cells, labels, run_styles(labels, A), A, "bandwidth_GBps", "workers",
                         "time_to_target_speedup", "t", path)
    assert path.is_file() and path.stat().st_size > 0
    assert unreached(cells, labels, "time_to_target_speedup") == {
        A: (": not reached, no line", False), B: (": baseline not reached, no line", False),
        C: (": not reached, no line", False)}
