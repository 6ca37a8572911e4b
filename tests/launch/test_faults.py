"""Faults with real processes: a rank killed or hung mid-run, a port in use, an unreachable
rendezvous, a backend this machine lacks, ranks given different configurations.

A dead or hung rank (rank 0 included) is caught by the watchdog (the hung one by its timeout,
then killed) with one line naming the rank and the step, exit 1, no process left behind and
every finished step kept on disk, run.json marked failed with the line; under torchrun, rank
0 stopped by the launcher's SIGTERM does the same itself. The rest are bad input: one line,
exit 2, nothing written.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import torch

from lionsim.backends import SimComm
from lionsim.bench import BenchConfig, plan
from lionsim.training.results import Results
from lionsim.training.runner import Runner
from lionsim.launch import free_port
from lionsim.launch.journal import JOURNAL, StepJournal, journal_rows
from lionsim.reports.publish import RunDir
from lionsim.training.loop import Place

BENCH = [sys.executable, "-m", "lionsim", "bench", "--workload", "mlp", "--model-size", "tiny", "--workers", "2",
         "--batch-size", "8", "--eval-every", "1000"]
TIMEOUT = 5
STEPS = 600  # a run takes seconds, so the second is under way when a rank is stopped



def error_lines(text: str) -> list[str]:
    """stderr without the progress lines ("lionsim: run ..."), which go there off a terminal."""
    return [line for line in text.strip().splitlines() if not line.startswith("lionsim: ")]

def children(pid: int) -> list[int]:
    """Processes whose parent is `pid` (from /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def start_and_wait_for_second_run(tmp_path: Path) -> tuple[subprocess.Popen, Path, list[int]]:
    """A 2-rank gloo bench whose first run has finished (rank 0 staged it) and whose second has
    journaled a few steps; its rank processes."""
    out = tmp_path / "o"
    proc = subprocess.Popen(BENCH + ["--steps", str(STEPS), "-s", "lion", "-s", "dlion-mavo",
                                     "--backend", "gloo", "--timeout", str(TIMEOUT), "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    staged, journal = tmp_path / ".o.partial" / "steps.csv", tmp_path / ".o.partial" / JOURNAL

    def second_run_under_way() -> bool:
        try:
            return (pd.read_csv(staged).query("strategy == 'lion'").step.max() == STEPS
                    and journal.read_text().count("dlion-mavo") >= 5)
        except (OSError, pd.errors.EmptyDataError):
            return False

    deadline = time.monotonic() + 180
    while not second_run_under_way():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the second run never started"
        time.sleep(0.02)
    ranks = [p for p in children(proc.pid) if "spawn_main" in Path(f"/proc/{p}/cmdline").read_text()]
    assert len(ranks) == 2
    return proc, out, ranks


def rank_pid(ranks: list[int], rank: int) -> int:
    """The process of `rank`: spawn passes the rank as _child's first argument; match by order of start."""
    return sorted(ranks)[rank]


@pytest.mark.slow
@pytest.mark.parametrize(("fault", "rank"), [("killed", 1), ("hung", 1), ("killed", 0)])
def test_a_dead_or_hung_rank_is_named_and_finished_steps_are_kept(fault, rank, tmp_path):
    proc, out, ranks = start_and_wait_for_second_run(tmp_path)
    os.kill(rank_pid(ranks, rank), signal.SIGKILL if fault == "killed" else signal.SIGSTOP)
    _, err = proc.communicate(timeout=120)  # a guard against a hang, not a speed check
    lines = error_lines(err)
    assert proc.returncode == 1 and len(lines) == 1, err
    what = "died (killed by signal 9)" if fault == "killed" else f"stopped responding (no heartbeat for {TIMEOUT} s)"
    assert lines[0].startswith(f"error: rank {rank} {what} at step ") and "of dlion-mavo@int8-allreduce" in lines[0], err
    assert re.search(rf"; \d+ finished steps kept in {re.escape(str(out))}$", lines[0]), lines[0]
    assert not any(alive(p) for p in ranks)  # no process left behind, the stopped one included
    steps = pd.read_csv(out / "steps.csv")
    assert list(steps[steps.strategy == "lion"].step) == list(range(1, STEPS + 1))  # the finished run, whole
    second = list(steps[steps.strategy == "dlion-mavo"].step)
    assert len(second) >= 5 and second == list(range(1, len(second) + 1))  # every finished step of the cut run
    assert steps.notna()[["encode_s", "comm_s", "step_s", "sim_time_s"]].all().all()
    meta = json.loads((out / "run.json").read_text())
    assert meta["status"] == "failed" and meta["error"] == lines[0].removeprefix("error: ").split(";")[0]
    # no journal, no temp; calls.csv holds the calls of every step steps.csv keeps: the finished run's
    # and the cut run's journaled ones
    assert sorted(p.name for p in out.iterdir()) == ["calls.csv", "run.json", "steps.csv", "summary.csv"]
    calls = pd.read_csv(out / "calls.csv")
    assert set(calls.strategy) == {"lion", "dlion-mavo"}
    for strategy, kept in (("lion", list(range(1, STEPS + 1))), ("dlion-mavo", second)):
        assert sorted(set(calls[calls.strategy == strategy].step)) == kept, strategy
    assert not (tmp_path / ".o.partial").exists()


@pytest.mark.slow
def test_rank_0_stopped_by_the_launcher_publishes_what_finished(tmp_path):
    """torchrun SIGTERMs the ranks left when one dies: rank 0 says so, publishes, exits 1."""
    out, port = tmp_path / "o", free_port()
    args = BENCH + ["--steps", str(STEPS), "-s", "lion", "--backend", "gloo", "--timeout", str(TIMEOUT),
                    "--out", str(out)]
    procs = [subprocess.Popen(args, env={**os.environ, **launcher(rank, 2, port)}, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for rank in (0, 1)]
    journal = tmp_path / ".o.partial" / JOURNAL
    deadline = time.monotonic() + 180
    while not (journal.is_file() and journal.read_text().count("\n") > 20):
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        assert time.monotonic() < deadline, "no step finished"
        time.sleep(0.02)
    procs[0].send_signal(signal.SIGTERM)
    errs = [p.communicate(timeout=120)[1] for p in procs]
    lines = error_lines(errs[0])
    assert procs[0].returncode == 1 and len(lines) == 1, errs[0]
    assert lines[0].startswith("error: rank 0: stopped by the launcher (SIGTERM) at step ")
    assert lines[0].endswith(" of lion@fp32-allreduce"), lines[0]
    assert procs[1].returncode == 1  # its collective failed: rank 1 says so
    steps = pd.read_csv(out / "steps.csv")
    assert len(steps) >= 20 and list(steps.step) == list(range(1, len(steps) + 1))
    meta = json.loads((out / "run.json").read_text())
    assert meta["status"] == "failed" and meta["error"].startswith("stopped by the launcher (SIGTERM) at step ")


def test_journal_rows_book_like_a_finished_run(tmp_path):
    """The rows the spawner publishes from rank 0's journal equal the rows rank 0 would have
    booked itself: medians of each kind past the warm-up, step_s their sum, sim_time_s its sum."""
    cfg = BenchConfig(workload="mlp", model_size="tiny", workers=2, batch_size=8, steps=12, eval_every=5,
                      strategies=["dlion-mavo"], momentum_sync="every:4", compute="measured", warmup_steps=2)
    comm = SimComm(2)
    comm.ranks = 2  # booked as a real run's rows are (measured comm, no overlap)
    runner = Runner(plan(cfg), Place(comm))
    results = Results(runner)
    journal = StepJournal(RunDir(tmp_path / "o"))
    runner.run(lambda run, step, loss: journal.add_step(results))
    journal.close()
    booked = results.result().steps
    rows = journal_rows(journal.path, cfg.warmup_steps)[booked.columns]
    pd.testing.assert_frame_equal(rows, booked, check_dtype=False)
def run_cli(args: list[str], env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})


def one_line(done: subprocess.CompletedProcess, code: int, message: str) -> None:
    lines = error_lines(done.stderr)
    assert done.returncode == code and len(lines) == 1 and message in lines[0], done.stderr
    assert "Traceback" not in done.stderr


def launcher(rank: int, world: int, port: int, addr: str = "127.0.0.1") -> dict:
    return {"RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": str(rank), "MASTER_ADDR": addr,
            "MASTER_PORT": str(port)}


@pytest.mark.slow
def test_port_in_use(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = run_cli(BENCH + ["--steps", "2", "--backend", "gloo", "--timeout", "5", "--out", str(tmp_path / "o")],
                       env=launcher(0, 2, port))
    one_line(done, 2, f"port {port} on 127.0.0.1 is in use")
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_unreachable_rendezvous(tmp_path):
    port = free_port()  # nobody listens there
    done = run_cli(BENCH + ["--steps", "2", "--backend", "gloo", "--timeout", "3", "--out", str(tmp_path / "o")],
                   env=launcher(1, 2, port))
    one_line(done, 2, f"cannot reach the rendezvous at 127.0.0.1:{port} within 3 s")
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA: nccl is available")
def test_nccl_without_cuda(tmp_path):
    done = run_cli(BENCH + ["--steps", "2", "--backend", "nccl", "--out", str(tmp_path / "o")])
    one_line(done, 2, "backend nccl needs CUDA GPUs")
    done = run_cli([sys.executable, "-m", "lionsim", "comm", "--backend", "nccl"])
    one_line(done, 2, "backend nccl needs CUDA GPUs")
    assert done.stdout == ""  # checked before anything is measured or announced


@pytest.mark.slow
def test_ranks_with_different_configurations(tmp_path):
    port = free_port()
    procs = [subprocess.Popen(BENCH + ["--steps", steps, "--backend", "gloo", "--timeout", "30",
                                       "--out", str(tmp_path / "o")],
                              env={**os.environ, **launcher(rank, 2, port)}, stderr=subprocess.PIPE, text=True)
             for rank, steps in ((0, "2"), (1, "3"))]
    errs = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [2, 2]
    line = error_lines(errs[0])
    assert len(line) == 1 and "rank(s) 1 got a configuration different from rank 0's" in line[0], errs
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--workers", "3", "--backend", "gloo"], "--workers 3 is not divisible by 2 ranks: each rank holds W/R workers; "
                                              "accepted: --workers a multiple of 2 (2, 4, 6, ...), or --ranks one of 1, 3"),
    (["--backend", "gloo", "--ranks", "4"], "bad --ranks 4; accepted: a whole number from 1 to --workers (2)"),
    (["--ranks", "2"], "--ranks 2 needs --backend gloo or nccl"),
])
@pytest.mark.slow
def test_bad_layouts(args, message, tmp_path):
    done = run_cli(BENCH + ["--steps", "2", "--out", str(tmp_path / "o")] + args)
    one_line(done, 2, message)


@pytest.mark.slow
def test_sim_under_a_launcher_is_one_job(tmp_path):
    done = run_cli(BENCH + ["--steps", "2", "--out", str(tmp_path / "o")], env=launcher(0, 2, free_port()))
    one_line(done, 2, "with --backend sim, which is one process: pass --backend gloo or nccl")
    assert not (tmp_path / "o").exists()
