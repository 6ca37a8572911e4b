"""SIGINT and SIGTERM with real processes: a bench stops after the step under way, keeps every
finished step and its state, says so in one line (exit 2), and `--resume` finishes it with the
rows an uninterrupted run writes. On gloo the parent relays the stop to its ranks, which stop
at the same step; the parent reports what was kept and leaves no process behind."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from lionsim.bench import BenchConfig, run_bench
from lionsim.cli.app import main

SIM_STEPS = 1500
GLOO_STEPS = 300
COMMON = ["-w", "mlp", "--model-size", "tiny", "-n", "2", "-b", "8", "--compute", "h100"]


def bench_argv(steps: int, strategies: list[str], out: Path, *extra: str) -> list[str]:
    args = ["bench", *COMMON, "--steps", str(steps), "--eval-every", str(steps // 2), "--out", str(out), *extra]
    for s in strategies:
        args += ["-s", s]
    return args


def reference(steps: int, strategies: list[str]) -> pd.DataFrame:
    cfg = BenchConfig(workload="mlp", model_size="tiny", workers=2, batch_size=8, compute="h100", steps=steps,
                      eval_every=steps // 2, strategies=strategies)
    return run_bench(cfg).steps


def start(argv: list[str], tmp_path: Path, **popen) -> tuple[subprocess.Popen, Path]:
    log = tmp_path / "stderr.log"
    proc = subprocess.Popen([sys.executable, "-m", "lionsim", *argv], stdout=subprocess.DEVNULL,
                            stderr=open(log, "w"), text=True, **popen)
    return proc, log


def wait_for(proc: subprocess.Popen, log: Path, ready, what: str, limit: float = 240) -> None:
    deadline = time.monotonic() + limit  # a guard against a hang, not a speed check
    while not ready():
        assert proc.poll() is None, log.read_text()
        assert time.monotonic() < deadline, f"{what} never happened:\n{log.read_text()}"
        time.sleep(0.02)


def error_line(log: Path) -> str:
    lines = [line for line in log.read_text().splitlines() if not line.startswith("lionsim: ")]
    assert len(lines) == 1, log.read_text()
    return lines[0]


def resume_in_process(argv: list[str], capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main([*argv, "--resume"])
    assert done.value.code == 0, capsys.readouterr().err


def calls_match_steps(out: Path) -> None:
    """calls.csv holds the calls of exactly the steps steps.csv holds, every run's."""
    steps, calls = pd.read_csv(out / "steps.csv"), pd.read_csv(out / "calls.csv")
    assert set(zip(calls["strategy"], calls["step"])) == set(zip(steps["strategy"], steps["step"]))


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_sim_bench_stops_at_a_step_boundary_and_resumes_exactly(sig, tmp_path, capsys):
    out = tmp_path / "o"
    argv = bench_argv(SIM_STEPS, ["lion"], out)
    proc, log = start(argv, tmp_path)
    wait_for(proc, log, lambda: "run 1/1 lion@fp32-allreduce step 1/" in log.read_text(), "the run")
    proc.send_signal(sig)
    assert proc.wait(timeout=120) == 2
    name = signal.Signals(sig).name
    line = error_line(log)
    match = re.fullmatch(rf"error: interrupted \({name}\): (\d+) finished steps kept in {re.escape(str(out))}; the same "
                         r"command with --resume continues lion@fp32-allreduce from step (\d+)", line)
    assert match, line
    kept, next_step = map(int, match.groups())
    assert kept == next_step - 1 and 1 < next_step <= SIM_STEPS
    steps = pd.read_csv(out / "steps.csv")
    assert list(steps.step) == list(range(1, next_step))
    assert json.loads((out / "run.json").read_text())["status"] == "interrupted"
    assert (out / ".resume" / "rank0.pt").is_file() and not list(tmp_path.glob(".*partial"))
    if sig != signal.SIGTERM:
        return  # one resume is enough: the stop is the same for either signal
    resume_in_process(argv, capsys)
    pd.testing.assert_frame_equal(pd.read_csv(out / "steps.csv"), reference(SIM_STEPS, ["lion"]),
                                  check_dtype=False)
    meta = json.loads((out / "run.json").read_text())
    assert meta["status"] == "complete" and meta["resumed"][0]["from_step"] == next_step
    assert not (out / ".resume").exists()


def gloo_run_under_way(tmp_path: Path, run: str = "dlion-avg", **popen):
    out = tmp_path / "o"
    strategies = ["dlion-mavo", "dlion-avg"]  # votes: every rank's sum is exact, so rows equal the simulator's
    argv = bench_argv(GLOO_STEPS, strategies, out, "--backend", "gloo", "--timeout", "20")
    proc, log = start(argv, tmp_path, **popen)
    journal = tmp_path / ".o.partial" / ".steps.journal"

    def run_under_way() -> bool:
        try:
            return journal.read_text().count(f"\n{run},") >= 3
        except OSError:
            return False

    wait_for(proc, log, run_under_way, f"the run {run}")
    ranks = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _parent(int(p.name)) == proc.pid
             and "spawn_main" in Path(f"/proc/{p.name}/cmdline").read_text()]
    return proc, log, out, argv, strategies, ranks


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except OSError:
        return -1


@pytest.mark.slow
@pytest.mark.parametrize("how", ["SIGTERM", "Ctrl-C to the process group"])
def test_gloo_parent_stops_its_ranks_reports_truthfully_and_resumes(how, tmp_path, capsys):
    group = how.startswith("Ctrl-C")
    proc, log, out, argv, strategies, ranks = gloo_run_under_way(tmp_path, start_new_session=group)
    assert len(ranks) == 2
    if group:  # a terminal's Ctrl-C reaches the parent and both ranks
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(getattr(signal, how))
    assert proc.wait(timeout=180) == 2
    name = "SIGINT" if group else how
    line = error_line(log)
    match = re.fullmatch(rf"error: interrupted \({name}\): (\d+) finished steps kept in {re.escape(str(out))}; the same "
                         r"command with --resume continues dlion-avg@int8-allreduce from step (\d+)", line)
    assert match, line
    kept, next_step = map(int, match.groups())
    assert kept == GLOO_STEPS + next_step - 1
    assert not any(alive(p) for p in ranks)  # no rank left behind
    meta = json.loads((out / "run.json").read_text())
    assert meta["status"] == "interrupted"  # never "complete" for a run that was stopped
    steps = pd.read_csv(out / "steps.csv")
    assert steps.groupby("strategy").step.max().to_dict() == {"dlion-mavo": GLOO_STEPS, "dlion-avg": next_step - 1}
    assert sorted(p.name for p in (out / ".resume").iterdir()) == ["rank0.pt", "rank1.pt"]
    calls_match_steps(out)  # the run cut short's calls too
    if group:
        return  # one resume is enough (SIGINT on the parent alone is SIGTERM's path: the same handler)
    resume_in_process(argv, capsys)
    steps = pd.read_csv(out / "steps.csv")
    exact = ["strategy", "transport", "step", "loss", "eval_loss", "eval_acc", "wire_bytes", "compute_s",
             "encode_s", "decode_s", "update_s"]
    pd.testing.assert_frame_equal(steps[exact], reference(GLOO_STEPS, strategies)[exact], check_dtype=False)
    assert json.loads((out / "run.json").read_text())["status"] == "complete"
    calls_match_steps(out)  # the finished run's calls kept, not only the resumed run's


EXACT = ["strategy", "transport", "step", "loss", "eval_loss", "eval_acc", "wire_bytes", "compute_s", "encode_s",
         "decode_s", "update_s"]
"""steps.csv's columns a resumed run equals an uninterrupted one in (--compute h100: modelled times)."""


@pytest.mark.slow
@pytest.mark.parametrize("kept", ["its state", "no state"])
def test_gloo_interrupted_in_its_first_run_as_timeout_does_resumes_exactly(kept, tmp_path, capsys):
    """`timeout -s INT` sends SIGINT to the parent and then to its process group: one interrupt,
    delivered twice, stops every rank after the same step of the first run with its state kept;
    --resume continues it (or, with no state, as a second Ctrl-C or a dead rank leaves, trains it
    again) to the rows of an uninterrupted run."""
    proc, log, out, argv, strategies, ranks = gloo_run_under_way(tmp_path, run="dlion-mavo", start_new_session=True)
    proc.send_signal(signal.SIGINT)
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=180) == 2
    line = error_line(log)
    match = re.fullmatch(rf"error: interrupted \(SIGINT\): (\d+) finished steps kept in {re.escape(str(out))}; the same "
                         r"command with --resume continues dlion-mavo@int8-allreduce from step (\d+)", line)
    assert match, line
    finished, next_step = map(int, match.groups())
    assert finished == next_step - 1 and 3 <= finished < GLOO_STEPS
    assert not any(alive(p) for p in ranks)
    assert list(pd.read_csv(out / "steps.csv").step) == list(range(1, next_step))
    assert sorted(p.name for p in (out / ".resume").iterdir()) == ["rank0.pt", "rank1.pt"]
    if kept == "no state":
        shutil.rmtree(out / ".resume")
    resume_in_process(argv, capsys)
    steps = pd.read_csv(out / "steps.csv")
    pd.testing.assert_frame_equal(steps[EXACT], reference(GLOO_STEPS, strategies)[EXACT], check_dtype=False)
    meta = json.loads((out / "run.json").read_text())
    assert meta["status"] == "complete" and meta["resumed"][0]["from_step"] == (next_step if kept == "its state" else 1)


@pytest.mark.slow
def test_sweep_stops_on_sigterm_as_on_ctrl_c_and_keeps_its_finished_cells(tmp_path):
    out = tmp_path / "s"
    argv = ["sweep", *COMMON, "--steps", "300", "--eval-every", "300", "--seed", "0,1,2,3", "-s", "adamw,lion",
            "--out", str(out)]
    proc, log = start(argv, tmp_path)
    wait_for(proc, log, lambda: "lionsim: cell 1/" in log.read_text(), "the first cell")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=120) == 2
    # the unit under way stops after its step, its state kept for the rerun (lionsim.sweep.unit_state)
    match = re.fullmatch(rf"error: interrupted: (\d+) of 8 cells finished(?: and \S+ stopped after step [\d,]+ of 300 "
                         rf"\(its state kept: the rerun continues it\))?, kept in {re.escape(str(out))}; rerun the "
                         "same command to resume", error_line(log))
    assert match, log.read_text()
    finished = int(match.group(1))
    cells = [p for p in (out / "cells").iterdir() if not p.name.startswith(".")]
    assert 1 <= finished < 8 and len(cells) == finished
