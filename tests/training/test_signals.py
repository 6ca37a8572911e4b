"""lionsim called from Python (a test suite, a notebook, a script) gives the caller its own
signal handlers back when it returns, normally or by an exception, and hands a Ctrl-C it took
on to the caller's handler: pytest stops on Ctrl-C instead of failing one test and going on
(lionsim.training.stop.command_signals)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from lionsim.cli.app import main

BENCH = ["bench", "-w", "mlp", "--model-size", "tiny", "-n", "2", "-b", "8", "--compute", "h100", "-s", "adamw"]
PLUGINS = Path(__file__).resolve().parents[1] / "helpers" / "failing_plugins.py"


@contextmanager
def own_handlers():
    """This test's handlers for SIGINT and SIGTERM (recording what they get), the previous ones after."""
    got: list[int] = []

    def mine(signum, frame) -> None:
        got.append(signum)

    previous = {s: signal.signal(s, mine) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield mine, got
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def exit_code(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as done:
        main(argv)
    return done.value.code


@pytest.mark.parametrize("how", ["finished", "bad-input", "user-code"])
def test_a_bench_in_process_gives_the_callers_handlers_back(how, tmp_path, forget_plugins):
    argv = {"finished": [*BENCH, "--steps", "2"], "bad-input": [*BENCH, "--steps", "0"],
            "user-code": [*BENCH, "--steps", "4", "-s", "flaky-sgd", "--plugin", str(PLUGINS)]}[how]
    hook = sys.excepthook
    with own_handlers() as (mine, got):
        code = exit_code([*argv, "--out", str(tmp_path / "o")])
        assert signal.getsignal(signal.SIGINT) is mine and signal.getsignal(signal.SIGTERM) is mine
    assert code == {"finished": 0, "bad-input": 2, "user-code": 3}[how] and got == []
    assert sys.excepthook is hook  # typer's app() would set its own for the process


@contextmanager
def ctrl_c_at_step(step: int, times: int = 1):
    """The bench's progress callback sends this process SIGINT as step `step` finishes, `times` in a
    row (timeout(1) sends one to the command and then to its process group)."""
    from lionsim.cli import bench_run

    real = bench_run.step_progress

    @contextmanager
    def progress(console, labels, steps):
        with real(console, labels, steps) as update:
            def then(run, i, loss):
                update(run, i, loss)
                if i == step:
                    for _ in range(times):
                        signal.raise_signal(signal.SIGINT)
            yield then

    bench_run.step_progress = progress
    try:
        yield
    finally:
        bench_run.step_progress = real


def test_an_interrupted_bench_in_process_hands_ctrl_c_to_the_caller(tmp_path):
    """The bench stops after the step under way and keeps it, then the caller's handler gets the
    Ctrl-C (once) and its handlers are its own again."""
    out = tmp_path / "o"
    with own_handlers() as (mine, got), ctrl_c_at_step(2):
        code = exit_code([*BENCH, "--steps", "50", "--out", str(out)])
        assert signal.getsignal(signal.SIGINT) is mine and signal.getsignal(signal.SIGTERM) is mine
    assert code == 2 and got == [signal.SIGINT]
    meta = json.loads((out / "run.json").read_text())
    assert meta["status"] == "interrupted" and len((out / "steps.csv").read_text().splitlines()) == 1 + 2


def test_under_pythons_own_handler_ctrl_c_raises_keyboardinterrupt_in_the_caller(tmp_path):
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # pytest's, as in any Python
    with ctrl_c_at_step(2), pytest.raises(KeyboardInterrupt):
        main([*BENCH, "--steps", "50", "--out", str(tmp_path / "o")])
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert json.loads((tmp_path / "o" / "run.json").read_text())["status"] == "interrupted"


SUITE = '''
import os
from pathlib import Path

from lionsim.cli.app import main


def test_a_long_bench():
    main({argv!r})


def test_after_it():
    Path(os.environ["MARKS"], "after").touch()
'''


@pytest.mark.slow
def test_ctrl_c_stops_a_pytest_run_that_runs_a_bench_in_process(tmp_path):
    """A real pytest process whose test runs a long bench in-process: one SIGINT stops the whole
    suite (pytest's exit code 2, the next test never runs), after the bench kept its steps."""
    out = tmp_path / "o"
    (tmp_path / "test_suite.py").write_text(SUITE.format(argv=[*BENCH, "--steps", "100000", "--out", str(out)]))
    log = tmp_path / "log.txt"
    # a user's own pytest run: none of this suite's xdist worker variables (the inner pytest read them as
    # an active xdist run)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST", "PYTEST_CURRENT"))}
    env.update(MARKS=str(tmp_path), PYTHONPATH=os.pathsep.join(sys.path))
    with open(log, "w") as f:
        # ... and a terminal's SIGINT: an xdist worker of the slow tier was found holding SIGINT ignored
        # (SIG_IGN, inherited through exec: the inner Python then keeps it ignored, and the Ctrl-C lionsim
        # hands back to it is dropped), which no user's shell gives
        proc = subprocess.Popen([sys.executable, "-m", "pytest", "-s", "-q", "-p", "no:cacheprovider",
                                 str(tmp_path / "test_suite.py")], cwd=tmp_path, env=env, stdout=f, stderr=f,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 240  # a guard against a hang, not a speed check
    while "step 1/100000" not in log.read_text():
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(timeout=120)
    finally:
        proc.kill()
    text = log.read_text()
    assert code == 2, text  # pytest's "interrupted"
    assert "KeyboardInterrupt" in text and not (tmp_path / "after").exists(), text
    assert json.loads((out / "run.json").read_text())["status"] == "interrupted"


def test_an_interrupt_delivered_twice_at_once_stops_at_the_step_boundary(tmp_path, capsys):
    """The echo of one interrupt is not a second Ctrl-C: the run under way keeps its state."""
    out = tmp_path / "o"
    with own_handlers() as (mine, got), ctrl_c_at_step(2, times=2):
        code = exit_code([*BENCH, "--steps", "50", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "continues adamw@fp32-allreduce from step 3" in err, err
    assert (out / ".resume" / "rank0.pt").is_file()


def test_a_second_interrupt_while_the_finished_steps_are_written_waits_for_them(tmp_path, capsys, monkeypatch):
    """A stop (the first SIGINT at step 2), then another SIGINT while what finished is booked and
    published: before, it raised out of the writing, the folder was removed and the line said no
    results were written (998 finished steps lost in a 2,000-step bench). Now it waits."""
    from lionsim.reports import writing

    real = writing.publish_result

    def publish(*args, **kwargs):
        signal.raise_signal(signal.SIGINT)  # later than REPEAT_S after the first: not its echo
        return real(*args, **kwargs)

    monkeypatch.setattr(writing, "publish_result", publish)
    monkeypatch.setattr("lionsim.training.stop.REPEAT_S", 0.0)
    out = tmp_path / "o"
    with own_handlers() as (mine, got), ctrl_c_at_step(2):
        code = exit_code([*BENCH, "--steps", "50", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "2 finished steps kept in" in err and "no results were written" not in err, err
    assert json.loads((out / "run.json").read_text())["status"] == "interrupted"
    assert len((out / "steps.csv").read_text().splitlines()) == 1 + 2 and (out / ".resume" / "rank0.pt").is_file()
    assert not any(p.name.endswith(".partial") for p in tmp_path.iterdir())


def test_an_interrupt_in_the_last_step_completes_the_run_and_says_so(tmp_path, capsys):
    out = tmp_path / "o"
    with own_handlers() as (mine, got), ctrl_c_at_step(4):
        code = exit_code([*BENCH, "--steps", "4", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0 and got == [signal.SIGINT], err
    assert "SIGINT came after the last step: every run finished and was written (nothing to resume)" in err
    assert "error" not in err and json.loads((out / "run.json").read_text())["status"] == "complete"
    assert len((out / "steps.csv").read_text().splitlines()) == 1 + 4 and not (out / ".resume").exists()


def test_an_interrupt_once_the_results_are_written_is_ignored(tmp_path, capsys, monkeypatch):
    """While the table prints (the results written): exit 0, no line claiming nothing was written."""
    from lionsim.cli import bench_cmd

    real = bench_cmd._report

    def report(*args, **kwargs):
        signal.raise_signal(signal.SIGINT)
        real(*args, **kwargs)

    monkeypatch.setattr(bench_cmd, "_report", report)
    out = tmp_path / "o"
    with own_handlers() as (mine, got):
        code = exit_code([*BENCH, "--steps", "2", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0 and got == [signal.SIGINT] and "interrupted" not in err, err
    assert json.loads((out / "run.json").read_text())["status"] == "complete"


def test_the_processs_own_command_line_leaves_the_signals_ignored_for_its_exit():
    """After `lionsim ARGS` decided its exit code only the interpreter's exit is left: a signal
    there would kill it silently (exit 130)."""
    from lionsim.training.stop import command_signals

    with own_handlers() as (mine, got):
        with command_signals(hand_back=False):
            assert signal.getsignal(signal.SIGINT) is not mine
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN and signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
