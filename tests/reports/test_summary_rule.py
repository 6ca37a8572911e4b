"""One summary rule: a run is summarised by its own baseline, target loss and warm-up steps (its
plan, or its run.json) wherever the summary is made: a finished run, one a dead rank or a signal
cut short (the journal's rows, published by lionsim.launch.journal.finalize), `lionsim plot`
and `lionsim report` redrawing it."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lionsim.bench import BenchConfig, run_bench
from lionsim.launch.journal import JOURNAL, StepJournal, finalize
from lionsim.reports import load_run, write_run
from lionsim.reports.columns import EXTRA_STEP_COLUMNS, STEP_COLUMNS
from lionsim.reports.files import META_FILE, STEPS_FILE
from lionsim.reports.publish import RunDir
from lionsim.reports.summary import SummaryRule, run_summary, summarize
from tests.helpers.cli import run_cli

WARMUP = 5
TARGET = 2.25


def measured_rows(strategy: str, steps: int, seed: int) -> list[dict]:
    """A gloo run's booked rows with made-up measured comm: every step's own figure differs."""
    rng = np.random.default_rng(seed)
    rows = []
    for step in range(1, steps + 1):
        measured = float(rng.uniform(0.01, 0.05))
        row = {c: 0.0 for c in STEP_COLUMNS + EXTRA_STEP_COLUMNS}
        row.update(strategy=strategy, transport="int8-allreduce", workers=2, network="1gbe", backend="gloo",
                   workload="mlp", seed=0, step=step, loss=3.0 - 0.05 * step, params=100, eval_loss=math.nan,
                   eval_acc=math.nan, compute_s=0.01, encode_s=0.001, decode_s=0.001, update_s=0.001,
                   comm_s=measured, comm_exposed_s=measured, comm_measured_s=measured,
                   comm_model_s=float(rng.uniform(0.01, 0.05)), barrier_wait_s=0.001, calls=1, ranks=2,
                   diverged_at_step=math.nan, synced=1, wire_bytes=400)
        row["step_s"] = row["compute_s"] + row["encode_s"] + measured + row["decode_s"] + row["update_s"]
        rows.append(row)
    return rows


def model_error(rows: list[dict], warmup: int) -> float:
    """comm_model_error by hand: the model's mean over the steps past the warm-up / the measured mean - 1."""
    past = [r for r in rows if r["step"] > warmup]
    return np.mean([r["comm_model_s"] for r in past]) / np.mean([r["comm_measured_s"] for r in past]) - 1


def test_a_run_cut_short_is_summarised_by_its_own_rule(tmp_path):
    """A run under way when rank 0 died or a signal came: the finished run staged, the one under
    way journaled, both summarised with the run's own warm-up (5, not the default 3), target and
    baseline, as a finished run of the same steps is."""
    out = tmp_path / "o"
    stage = RunDir(out).stage
    stage.mkdir(parents=True)
    first, cut = measured_rows("lion", 12, 1), measured_rows("dlion-mavo", 9, 2)
    pd.DataFrame(first).to_csv(stage / STEPS_FILE, index=False)
    meta = {"command": "bench", "status": "running", "comm_model": "1gbe + gloo traits",
            "config": {"baseline": "dlion-mavo", "target_loss": TARGET, "warmup_steps": WARMUP}}
    (stage / META_FILE).write_text(json.dumps(meta))
    journal = StepJournal(RunDir(out))
    for row in cut:
        journal.add(row, "('all_reduce', 400)")
    journal.close()
    assert (stage / JOURNAL).is_file()
    assert finalize(out, "interrupted", "interrupted") == 21
    steps, summary, published = load_run(out)
    assert published["status"] == "interrupted"
    errors = dict(zip(summary["run"], summary["comm_model_error"]))
    assert errors["lion@int8-allreduce"] == pytest.approx(model_error(first, WARMUP))
    assert errors["dlion-mavo@int8-allreduce"] == pytest.approx(model_error(cut, WARMUP))
    assert errors["lion@int8-allreduce"] != pytest.approx(model_error(first, 3))  # the warm-up is the run's own
    assert set(summary["target_loss"]) == {TARGET} and set(summary["baseline"]) == {"dlion-mavo@int8-allreduce"}
    assert set(summary["comm_priced_by"]) == {"1gbe + gloo traits"}
    rule = SummaryRule(baseline="dlion-mavo", target_loss=TARGET, warmup_steps=WARMUP)
    finished = summarize(steps, rule).assign(comm_priced_by="1gbe + gloo traits")
    pd.testing.assert_frame_equal(summary, finished, check_dtype=False)  # what a finished run of these steps gives


def test_the_rule_is_read_from_run_json():
    meta = {"config": {"baseline": "adamw", "target_loss": 1.5, "warmup_steps": 0}}
    assert SummaryRule.of_run(meta) == SummaryRule(baseline="adamw", target_loss=1.5, warmup_steps=0)
    assert SummaryRule.of_run(None) == SummaryRule() == SummaryRule.of_run({"config": {"steps": 4}})
    assert SummaryRule().warmup_steps == 3  # --warmup-steps' default, for a run.json that names none


@pytest.fixture(scope="session")
def targeted(tmp_path_factory):
    """A tiny bench's files, with its own --target-loss and --baseline (written as `lionsim bench`
    writes them, without the plots)."""
    out = tmp_path_factory.mktemp("rule") / "o"
    result = run_bench(BenchConfig(workload="mlp", model_size="tiny", workers=2, batch_size=8, steps=6, eval_every=3,
                                   strategies=["adamw", "lion"], target_loss=TARGET, baseline="lion"))
    write_run(out, result.steps, result.summary, result.meta)
    return out


@pytest.fixture
def no_drawing(monkeypatch):
    """The plots' drawing is not what these tests are about (tests/reports/test_plots.py draws them)."""
    import lionsim.reports
    import lionsim.reports.plots.redraw as redraw

    monkeypatch.setattr(lionsim.reports, "plot_run", lambda *a, **k: [])
    monkeypatch.setattr(redraw, "plot_run", lambda *a, **k: [])


def test_plot_with_another_baseline_keeps_the_runs_own_target(targeted, no_drawing, capsys):
    code, out, err = run_cli(["plot", str(targeted), "--baseline", "adamw"], capsys)
    assert code == 0, err
    assert f"reach loss {TARGET:.4g} (--target-loss" in " ".join(out.split())


def test_report_without_summary_csv_makes_it_under_the_runs_own_rule(targeted, no_drawing, tmp_path, capsys):
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("steps.csv", "run.json"):
        (copy / name).write_bytes((targeted / name).read_bytes())
    code, _, err = run_cli(["report", str(copy)], capsys)
    assert code == 0, err
    text = (copy / "report.md").read_text()
    assert f"| 2 | 1gbe | {TARGET:.4f} | **" in text  # workers, network, target loss, first to target
    steps, stored, meta = load_run(targeted)
    assert "speedup: lion@fp32-allreduce's step / this run's" in text
    pd.testing.assert_frame_equal(run_summary(steps, meta), stored, check_dtype=False)  # the bench's own summary


# --- real gloo ranks: a finished, an interrupted and a failed run ------------------------------------

BENCH = [sys.executable, "-m", "lionsim", "bench", "--workload", "mlp", "--model-size", "tiny", "--workers", "2",
         "--batch-size", "8", "--eval-every", "1000", "-s", "lion", "-s", "dlion-mavo", "--backend", "gloo",
         "--timeout", "60", "--warmup-steps", str(WARMUP), "--target-loss", str(TARGET), "--network", "1gbe"]
"""--network given: the model's error is filled (a default network leaves it empty). --timeout: a killed rank is seen dead at once; a long one keeps a loaded machine's slow heartbeat from
reading as a hang."""
STEPS = 300


def rank_processes(pid: int) -> list[int]:
    """The spawned ranks of the parent `pid`, in the order they started (rank order)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid and \
                    "spawn_main" in (stat.parent / "cmdline").read_text():
                out.append(int(stat.parent.name))
        except (OSError, ValueError):
            continue
    return sorted(out)


def cut_short(out: Path, how: str) -> None:
    """Start a gloo bench and, once its second run is past the warm-up, kill rank 1 or SIGTERM the parent."""
    proc = subprocess.Popen(BENCH + ["--steps", str(STEPS), "--out", str(out)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    journal = out.parent / f".{out.name}.partial" / JOURNAL
    deadline = time.monotonic() + 180
    while True:
        try:
            if journal.read_text().count("dlion-mavo") > 2 * WARMUP:
                break
        except OSError:
            pass
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the second run never got past its warm-up"
        time.sleep(0.02)
    if how == "failed":
        os.kill(rank_processes(proc.pid)[1], signal.SIGKILL)
    else:
        proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)  # a guard against a hang, not a speed check
    assert proc.returncode == (1 if how == "failed" else 2), err


@pytest.mark.slow
def test_finished_interrupted_and_failed_gloo_runs_share_the_summary_rule(tmp_path):
    outs = {"complete": tmp_path / "done", "interrupted": tmp_path / "stopped", "failed": tmp_path / "dead"}
    done = subprocess.run(BENCH + ["--steps", str(STEPS), "--out", str(outs["complete"])], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    cut_short(outs["interrupted"], "interrupted")
    cut_short(outs["failed"], "failed")
    summaries = {}
    for status, out in outs.items():
        steps, summary, meta = load_run(out)
        assert meta["status"] == status and meta["config"]["warmup_steps"] == WARMUP
        pd.testing.assert_frame_equal(summary, run_summary(steps, meta), check_dtype=False)  # the one rule
        for label, rows in steps.groupby(["strategy", "transport"], sort=False):
            hand = model_error(rows.to_dict("records"), WARMUP)
            got = summary.loc[summary["strategy"] == label[0], "comm_model_error"].iloc[0]
            assert got == pytest.approx(hand), (status, label)
        summaries[status] = summary.set_index("run")
    # the first run finished in all three: its summary's training columns are the same
    same = ["steps", "final_loss", "best_loss", "target_loss", "target_rule", "baseline"]
    lion = pd.DataFrame({s: frame.loc[frame.index[0], same] for s, frame in summaries.items()}).T
    assert (lion.nunique() == 1).all(), lion


TINY = dict(workload="mlp", model_size="tiny", workers=4, batch_size=8, steps=12, eval_every=6)


def test_the_default_target_is_the_baselines_loss_at_90_percent_and_a_bad_run_cannot_move_it():
    """A strategy that trains badly (sgdm at a tiny lr) does not move the target: the baseline
    reaches it at 90% of its steps, the bad run shows not reached and no speedup."""
    good = run_bench(BenchConfig(strategies=["adamw", "lion"], **(TINY | dict(steps=30))))
    with_bad = run_bench(BenchConfig(strategies=["adamw", "lion", "sgdm"], hyper={"sgdm": {"lr": 1e-6}},
                                     **(TINY | dict(steps=30))))
    assert with_bad.summary.target_loss.nunique() == 1
    assert with_bad.summary.target_loss.iloc[0] == good.summary.target_loss.iloc[0]
    base = with_bad.summary.iloc[0]
    assert base.target_reached and base.steps_to_target <= 27  # the target is its own smoothed loss at step 27
    bad = with_bad.summary.set_index("strategy").loc["sgdm"]
    assert not bad.target_reached and math.isnan(bad.time_to_target_speedup)


def test_a_default_network_on_a_measured_backend_leaves_the_model_error_empty():
    """--network left at its default on gloo prices a preset the ranks never crossed: summary.csv
    keeps comm_model_error's column but empty (NaN), as the table leaves it out; given (or
    calibrated, or an older run.json without network_given) it is the model's error."""
    steps = pd.DataFrame(measured_rows("lion", 12, 1))
    default = {"command": "bench", "network_given": False, "config": {"warmup_steps": WARMUP, "calibrate": False}}
    summary = run_summary(steps, default)
    assert "comm_model_error" in summary.columns and summary["comm_model_error"].isna().all()
    assert summary["comm_model_s"].notna().all()  # the default's price is still there
    for kept in ({**default, "network_given": True}, {**default, "config": {**default["config"], "calibrate": True}},
                 {k: v for k, v in default.items() if k != "network_given"}):
        error = run_summary(steps, kept)["comm_model_error"].iloc[0]
        assert error == pytest.approx(model_error(measured_rows("lion", 12, 1), WARMUP))
