"""One writer per --out (lionsim.reports.out_lock): while another process holds the advisory lock on
`.NAME.lock` beside --out (fcntl.flock, its pid written in the file), a bench, a sweep or an estimate
into that --out (or a comm) is refused in one line naming the folder and the pid, exit 2, nothing touched: the
second process used to delete the first one's staging directory. The OS lets go of the lock when its
holder dies (SIGKILL: no stale lock), and the next command runs. Two real processes: the holder is
a subprocess."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import TINY_BENCH, run_cli

HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, str(os.getpid()).encode())
print("held", flush=True)
sys.stdin.read()
"""
"""A plain process that holds the lock as lionsim's holder does: flock on the file, its pid inside."""

LIONSIM_HOLDER = """
import sys
from lionsim.reports.out_lock import holding
with holding(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.read()
"""
"""lionsim's own lock, taken in another process."""


def hold(script: str, path: Path) -> subprocess.Popen:
    """A subprocess holding the lock of `path` (the lock file, or for lionsim's holder the --out)."""
    proc = subprocess.Popen([sys.executable, "-c", script, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def lines(err: str) -> list[str]:
    return [line for line in err.strip().splitlines() if not line.startswith("lionsim: ")]


def snapshot(directory: Path) -> dict[str, bytes | None]:
    """Every file's bytes and every folder (None) under `directory`, by relative path."""
    return {str(p.relative_to(directory)): p.read_bytes() if p.is_file() else None for p in sorted(directory.rglob("*"))}


def test_a_second_bench_into_a_locked_out_is_refused_and_runs_once_the_holder_dies(tmp_path, capsys):
    out = tmp_path / "o"
    stage = tmp_path / ".o.partial"  # the holder's staging: the old code deleted it
    stage.mkdir()
    (stage / "steps.csv").write_text("the holder's rows\n")
    holder = hold(HOLDER, tmp_path / ".o.lock")
    try:
        before = snapshot(tmp_path)
        code, _, err = run_cli([*TINY_BENCH, "--out", out], capsys)
        assert code == 2 and lines(err) == [
            f"error: --out {out} is being written by another lionsim process (pid {holder.pid}); wait for it to "
            "end, or choose another --out"], err
        code, _, err = run_cli(["estimate", "--params", "1e6", "--tokens-per-worker", "100", "-n", "4", "--out", out],
                               capsys)
        assert code == 2 and lines(err)[-1].startswith(f"error: --out {out} is being written by another lionsim "
                                                       f"process (pid {holder.pid})"), err
        code, _, err = run_cli(["comm", "--out", out], capsys)
        assert code == 2 and lines(err) == [
            f"error: --out {out} is being written by another lionsim process (pid {holder.pid}); wait for it to "
            "end, or choose another --out"], err
        assert snapshot(tmp_path) == before and not out.exists()
    finally:
        holder.send_signal(signal.SIGKILL)  # no release: the OS lets go of a dead process's lock
        holder.wait()
    code, _, err = run_cli([*TINY_BENCH, "--out", out], capsys)
    assert code == 0, err
    assert (out / "steps.csv").is_file() and not stage.exists()  # a dead run's staging is cleared as before


@pytest.mark.parametrize("shard", [None, "1/2"])
def test_a_sweep_into_a_locked_root_is_refused(tmp_path, capsys, shard):
    """A sweep's root (a shard's: its own part, so shards of one root run side by side) is locked too."""
    root = tmp_path / "s"
    held = root if shard is None else root / "parts" / "shard-1-of-2"
    held.parent.mkdir(parents=True, exist_ok=True)
    holder = hold(HOLDER, held.parent / f".{held.name}.lock")
    try:
        before = snapshot(tmp_path)
        argv = ["sweep", "-w", "mlp", "--model-size", "tiny", "-n", "2", "--steps", "2", "--eval-every", "1",
                "-s", "adamw", "--out", root, *(["--shard", shard] if shard else [])]
        code, _, err = run_cli(argv, capsys)
        assert code == 2 and lines(err) == [
            f"error: --out {held} is being written by another lionsim process (pid {holder.pid}); wait for it to "
            "end, or choose another --out"], err
        assert snapshot(tmp_path) == before
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()


def test_lionsims_lock_holds_its_pid_and_goes_with_it(tmp_path, capsys):
    """lionsim's own lock, taken in another process: the file names its pid, a bench is refused, and
    once the holder ends the file goes, with the folders it made to hold it."""
    out = tmp_path / "a" / "b" / "o"
    holder = hold(LIONSIM_HOLDER, out)
    try:
        assert (out.parent / ".o.lock").read_text().strip() == str(holder.pid)
        code, _, err = run_cli([*TINY_BENCH, "--out", out], capsys)
        assert code == 2 and lines(err)[-1].endswith(f"(pid {holder.pid}); wait for it to end, or choose another "
                                                     "--out"), err
    finally:
        holder.communicate("")
    assert holder.returncode == 0 and not (tmp_path / "a").exists()


def test_a_lock_lost_to_every_release_is_refused_not_taken(tmp_path, monkeypatch):
    """Each try locks a file its holder has just let go and unlinked (the race `acquire` retries): after
    every retry is lost the lock is refused in the usual line, never held unguarded, and the folders it
    made are gone again. The old code returned after 100 lost tries holding nothing."""
    from lionsim.errors import LionsimError
    from lionsim.reports import out_lock

    tries = []

    def let_go(fd, path):  # the holder released between our open and our lock: the file is gone
        tries.append(fd)
        path.unlink()
        return False

    monkeypatch.setattr(out_lock, "_same_file", let_go)
    out = tmp_path / "new" / "o"
    lock = out_lock.OutLock(out)
    with pytest.raises(LionsimError) as refused:
        lock.acquire()
    assert str(refused.value) == (f"--out {out} is being written by another lionsim process; wait for it to end, "
                                  "or choose another --out")
    assert len(tries) == 100 and lock._fd is None and not (tmp_path / "new").exists()


def test_report_and_plot_of_a_folder_being_written_are_refused_and_touch_nothing(tmp_path, capsys):
    """`lionsim report DIR` and `lionsim plot DIR` write into DIR (report.md, the plots): while a bench
    publishes there they would read CSVs being replaced. Each is refused in one line, DIR as it was;
    the old code wrote into it."""
    out = tmp_path / "o"
    code, _, err = run_cli([*TINY_BENCH, "--out", out], capsys)
    assert code == 0, err
    holder = hold(HOLDER, tmp_path / ".o.lock")
    try:
        before = snapshot(tmp_path)
        for command in ("report", "plot"):
            code, _, err = run_cli([command, out], capsys)
            assert code == 2 and lines(err) == [
                f"error: DIR {out} is being written by another lionsim process (pid {holder.pid}); wait for it "
                "to end"], (command, err)
        assert snapshot(tmp_path) == before
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    for command in ("report", "plot"):
        code, _, err = run_cli([command, out], capsys)
        assert code == 0, (command, err)
    assert (out / "report.md").is_file() and not (tmp_path / ".o.lock").exists()
