"""Ctrl-C during a gloo bench never leaves a half-written --out: the ranks take no signal of their
own (the parent relays it), the parent's publication is not cut short by another signal, a
resume stopped before a new step keeps the states it resumed from, publishing over a previous
run replaces it whole, and a rerun that stops before it completes goes to --out's `.rerun/`,
leaving the run --out holds as it was. Each awkward moment is made to happen, not waited for."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import shutil
from pathlib import Path

import pandas as pd
import pytest

from lionsim.launch.journal import finalize
from lionsim.launch.spawn import _immune, blocked
from lionsim.reports.files import META_FILE, STEPS_FILE
from lionsim.reports.outdir import RERUN_DIR
from lionsim.reports.publish import RunDir, put_back
from lionsim.training.checkpoint import RESUME_DIR
from lionsim.training.stop import SIGNALS, TAKEN, deferred_signals
from tests.reports.test_summary_rule import measured_rows


def interrupted_run(out: Path, steps: int = 6) -> None:
    """An --out holding an interrupted gloo run: one run's rows and both ranks' states."""
    stage = RunDir(out).stage
    stage.mkdir(parents=True)
    pd.DataFrame(measured_rows("lion", steps, 1)).to_csv(stage / STEPS_FILE, index=False)
    meta = {"command": "bench", "status": "running", "config": {"warmup_steps": 2}}
    (stage / META_FILE).write_text(json.dumps(meta))
    (stage / RESUME_DIR).mkdir()
    for rank in (0, 1):
        (stage / RESUME_DIR / f"rank{rank}.pt").write_bytes(f"state of rank {rank} after step {steps}".encode())
    assert finalize(out, "interrupted", "interrupted (SIGINT)") == steps


def test_a_resume_stopped_before_a_new_step_keeps_the_states_it_resumed_from(tmp_path):
    """The resume's rank 0 staged what it kept (lionsim.launch.rank, on_start) and no step had
    finished when the signal came: the states in --out are the only way to continue exactly, and
    publishing the kept rows must not drop them."""
    out = tmp_path / "o"
    interrupted_run(out)
    states = {p.name: p.read_bytes() for p in (out / RESUME_DIR).iterdir()}
    stage = RunDir(out).stage
    stage.mkdir()
    shutil.copy(out / STEPS_FILE, stage / STEPS_FILE)
    (stage / META_FILE).write_text((out / META_FILE).read_text())
    (stage / RESUME_DIR).mkdir()
    (stage / RESUME_DIR / ".rank0.pt.x1y2.tmp").write_bytes(b"half a state")  # a writer killed mid-write
    assert finalize(out, "interrupted", "interrupted (SIGINT)") == 6
    assert {p.name: p.read_bytes() for p in (out / RESUME_DIR).iterdir()} == states
    assert not stage.exists()


def test_a_resume_that_saved_its_own_states_publishes_those(tmp_path):
    out = tmp_path / "o"
    interrupted_run(out, steps=4)
    interrupted_run_again = RunDir(out).stage
    interrupted_run_again.mkdir()
    pd.DataFrame(measured_rows("lion", 8, 1)).to_csv(interrupted_run_again / STEPS_FILE, index=False)
    (interrupted_run_again / META_FILE).write_text(json.dumps({"command": "bench", "config": {}}))
    (interrupted_run_again / RESUME_DIR).mkdir()
    (interrupted_run_again / RESUME_DIR / "rank0.pt").write_bytes(b"after step 8")
    assert finalize(out, "interrupted", "interrupted") == 8
    assert [p.read_bytes() for p in (out / RESUME_DIR).iterdir()] == [b"after step 8"]


def files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def test_publishing_over_a_previous_run_leaves_one_run_or_the_other_wherever_it_stops(tmp_path, monkeypatch):
    """A process killed while publishing over --out (a resume's, an --overwrite's) stops between
    two file-system calls: at every such point, --out holds the old run whole or the new one whole
    (or, between the two renames, neither, both kept beside it), never a mix."""
    out = tmp_path / "o"
    calls = ["rename", "replace", "unlink", "rmdir"]
    point = 0
    while True:
        for leftover in (out, tmp_path / ".o.old", RunDir(out).stage):
            shutil.rmtree(leftover, ignore_errors=True)
        interrupted_run(out)
        old = files(out)
        target = RunDir(out)
        target.stage.mkdir()
        (target.stage / STEPS_FILE).write_text("new steps\n")
        (target.stage / "summary.csv").write_text("new summary\n")
        new = files(target.stage)
        done = [0]

        def stop_at(name, real):
            def call(*args, **kwargs):
                if done[0] == point:
                    raise KeyboardInterrupt  # the process dies here
                done[0] += 1
                return real(*args, **kwargs)
            return call

        with monkeypatch.context() as m:
            for name in calls:
                m.setattr(os, name, stop_at(name, getattr(os, name)))
            try:
                target.publish()
                finished = True
            except KeyboardInterrupt:
                finished = False
        now = files(out) if out.exists() else None
        assert now in (old, new) or (now is None and files(tmp_path / ".o.old") == old
                                     and files(target.stage) == new), (point, now)
        put_back(out)  # the next command's first act: --out is whole again, the old run where it was set aside
        assert files(out) == (old if now is None else now) and not (now is None and (tmp_path / ".o.old").exists())
        if finished:
            assert now == new
            break
        point += 1
    assert point >= 2  # it did stop at each call in turn


def staged_rerun(out: Path, steps: int, state: bytes | None) -> None:
    """What rank 0 staged of a run stopped after `steps` steps (and its state, where it saved one)."""
    stage = RunDir(out).stage
    stage.mkdir()
    pd.DataFrame(measured_rows("lion", steps, 2)).to_csv(stage / STEPS_FILE, index=False)
    (stage / META_FILE).write_text(json.dumps({"command": "bench", "status": "running", "config": {}}))
    if state is not None:
        (stage / RESUME_DIR).mkdir()
        (stage / RESUME_DIR / "rank0.pt").write_bytes(state)


def test_a_rerun_stopped_over_a_previous_run_is_kept_in_rerun_and_leaves_the_run_whole(tmp_path):
    """gloo's publication of what finished (finalize) into --out's `.rerun/`: the run --out held,
    its own states included, is byte for byte as it was; a new rerun that saved no state takes none
    of an older rerun's (another run's), a resume of it carries them over."""
    out = tmp_path / "o"
    interrupted_run(out)
    old = files(out)
    rerun = out / RERUN_DIR
    staged_rerun(out, 3, b"rerun after step 3")
    assert finalize(out, "interrupted", "interrupted (SIGINT)", rerun, resumed=False) == 3
    assert {k: v for k, v in files(out).items() if not k.startswith(RERUN_DIR)} == old
    assert files(rerun)[f"{RESUME_DIR}/rank0.pt"] == b"rerun after step 3"
    assert json.loads((rerun / META_FILE).read_text())["status"] == "interrupted"
    assert not RunDir(out).stage.exists() and not list(tmp_path.glob(".*.old"))
    staged_rerun(out, 2, None)  # a new rerun stopped at once: no state of its own
    assert finalize(out, "interrupted", "interrupted", rerun, resumed=False) == 2
    assert not (rerun / RESUME_DIR).exists() and len(pd.read_csv(rerun / STEPS_FILE)) == 2
    staged_rerun(out, 2, None)  # ... and a resume of it does carry the states it resumed from
    (rerun / RESUME_DIR).mkdir()
    (rerun / RESUME_DIR / "rank0.pt").write_bytes(b"rerun after step 2")
    assert finalize(out, "failed", "a rank died", rerun, resumed=True) == 2
    assert files(rerun)[f"{RESUME_DIR}/rank0.pt"] == b"rerun after step 2"
    assert {k: v for k, v in files(out).items() if not k.startswith(RERUN_DIR)} == old


def test_publishing_a_rerun_leaves_one_rerun_or_the_other_wherever_it_stops(tmp_path, monkeypatch):
    """Killed while publishing into `.rerun/` over an older one: the run --out holds is never
    touched, and `.rerun/` holds the old rerun or the new one whole (between the two renames
    neither, the old one set aside beside --out)."""
    out = tmp_path / "o"
    rerun = out / RERUN_DIR
    point = 0
    while True:
        for leftover in (out, tmp_path / f".o{RERUN_DIR}.old", RunDir(out).stage):
            shutil.rmtree(leftover, ignore_errors=True)
        interrupted_run(out)
        rerun.mkdir()
        (rerun / STEPS_FILE).write_text("older rerun\n")
        held, old = files(out), files(rerun)
        target = RunDir(out)
        target.stage.mkdir()
        (target.stage / STEPS_FILE).write_text("new rerun\n")
        new = files(target.stage)
        done = [0]

        def stop_at(real):
            def call(*args, **kwargs):
                if done[0] == point:
                    raise KeyboardInterrupt
                done[0] += 1
                return real(*args, **kwargs)
            return call

        with monkeypatch.context() as m:
            for name in ("rename", "replace", "unlink", "rmdir"):
                m.setattr(os, name, stop_at(getattr(os, name)))
            try:
                target.publish(rerun)
                finished = True
            except KeyboardInterrupt:
                finished = False
        assert {k: v for k, v in files(out).items() if not k.startswith(RERUN_DIR)} == {
            k: v for k, v in held.items() if not k.startswith(RERUN_DIR)}, point
        now = files(rerun) if rerun.exists() else None
        assert now in (old, new) or (now is None and files(tmp_path / f".o{RERUN_DIR}.old") == old), (point, now)
        put_back(out)  # the next command's first act: the older rerun back in .rerun where it was set aside
        assert files(rerun) == (old if now is None else now)
        assert not (now is None and (tmp_path / f".o{RERUN_DIR}.old").exists())
        if finished:
            assert now == new and not target.stage.exists()
            break
        point += 1
    assert point >= 2


def test_signals_while_publishing_are_noted_and_deferred():
    """The parent publishing what finished: a Ctrl-C then is noted, taken (a caller from Python
    gets it back) and does not cut the publication short."""
    notes, previous = [], signal.getsignal(signal.SIGINT)
    mark = len(TAKEN)
    with deferred_signals(note=notes.append) as arrived:
        signal.raise_signal(signal.SIGINT)
        signal.raise_signal(signal.SIGTERM)
        got_here = True
    assert got_here and arrived == [signal.SIGINT, signal.SIGTERM]
    assert len(notes) == 1 and "SIGINT" in notes[0]
    assert TAKEN[mark:] == [signal.SIGINT, signal.SIGTERM]
    del TAKEN[mark:]
    assert signal.getsignal(signal.SIGINT) is previous


def rank_like(ready, go, report) -> None:
    """A spawned rank's start: a signal may arrive before its first line runs (the parent's
    test sends one while it waits here); then its first line, as a rank's."""
    ready.set()
    go.wait()
    _immune()
    os.kill(os.getpid(), signal.SIGINT)  # a terminal's Ctrl-C now: ignored too
    report.put((signal.getsignal(signal.SIGINT) == signal.SIG_IGN, signal.getsignal(signal.SIGTERM) == signal.SIG_IGN))


@pytest.mark.slow  # a spawned interpreter: a few seconds
def test_a_spawned_rank_never_takes_a_terminals_signal_itself():
    """Ctrl-C reaches the whole process group: a rank that took it itself died wherever it was
    (importing torch, publishing after its last step) and the parent reported a failed rank. A
    rank is started with SIGINT and SIGTERM blocked and ignores them from its first line."""
    ctx = mp.get_context("spawn")
    ready, go, report = ctx.Event(), ctx.Event(), ctx.Queue()
    child = ctx.Process(target=rank_like, args=(ready, go, report))
    with blocked(SIGNALS):
        child.start()
    ready.wait(120)
    os.kill(child.pid, signal.SIGINT)  # before its first line: pending, then dropped
    os.kill(child.pid, signal.SIGTERM)
    go.set()
    assert report.get(timeout=120) == (True, True)
    child.join(120)
    assert child.exitcode == 0
