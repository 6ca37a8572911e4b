"""--out is safe: another run's folder is refused unless --overwrite (never a sweep unless
asked, never a user's files), writability is checked before training, a write failure keeps
the results in a temporary folder and says where."""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
from pathlib import Path

import pandas as pd
import pytest

import lionsim.reports.files as files
import lionsim.training.runner as runner_module
from lionsim.cli.app import main
from lionsim.errors import LionsimError
from tests.helpers.cli import TINY_BENCH, run_cli

TINY = ["bench", "-w", "mlp", "--model-size", "tiny", "-n", "2", "-b", "8", "--steps", "4", "--eval-every", "2"]


def one_error(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if not line.startswith("lionsim: ")]
    assert len(lines) == 1, err
    return lines[0]


def listing(path: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in sorted(path.iterdir())}


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory):
    """A finished run of 3 steps with a report beside it (a file a bench does not write)."""
    out = tmp_path_factory.mktemp("previous") / "run"
    with pytest.raises(SystemExit) as done:
        main([str(a) for a in TINY[:-4] + ["--steps", "3", "--eval-every", "1", "-s", "adamw", "-s", "lion",
                                            "--out", out]])
    assert done.value.code == 0
    with pytest.raises(SystemExit):
        main(["report", str(out)])
    return out


@pytest.fixture
def previous_run(finished_run, tmp_path):
    """A copy of the finished run (each test may change it)."""
    import shutil

    return Path(shutil.copytree(finished_run, tmp_path / "previous"))


@pytest.mark.slow
def test_another_runs_folder_is_refused_and_left_alone(previous_run, capsys):
    before = listing(previous_run)
    code, _, err = run_cli(TINY + ["-s", "sgdm", "--out", previous_run], capsys)
    assert code == 2 and one_error(err) == (f"error: {previous_run} holds a complete bench run (mlp, 2 runs, 3 steps); "
                                            "pass --overwrite to replace it, or choose another --out")
    assert listing(previous_run) == before


@pytest.mark.slow
def test_the_same_complete_run_is_not_replaced_without_a_word(tmp_path, capsys):
    out = tmp_path / "o"
    assert run_cli(TINY + ["-s", "adamw", "--out", out], capsys)[0] == 0
    before = listing(out)
    code, _, err = run_cli(TINY + ["-s", "adamw", "--out", out], capsys)
    assert code == 2 and "holds a complete bench run" in one_error(err) and listing(out) == before


@pytest.mark.slow
def test_overwrite_clears_the_previous_runs_files(previous_run, capsys):
    assert (previous_run / "report.md").is_file() and (previous_run / "loss_vs_time.png").is_file()
    code, out, err = run_cli(TINY + ["-s", "sgdm", "--eval-every", "100", "--out", previous_run, "--overwrite"], capsys)
    assert code == 0, err
    names = {p.name for p in previous_run.iterdir()}
    assert "report.md" not in names  # the previous run's report is gone with it
    meta = json.loads((previous_run / "run.json").read_text())
    assert meta["config"]["steps"] == 4 and [r["run"] for r in meta["runs"]] == ["sgdm@fp32-allreduce"]
    plots = {n for n in names if n.endswith(".png")}
    assert plots and all(n in out for n in plots)  # every plot there is one this run just wrote


def test_a_user_file_is_never_deleted(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "run.json").write_text("{}")
    for extra in ([], ["--overwrite"], ["--overwrite-sweep"]):
        code, _, err = run_cli(TINY + ["-s", "adamw", "--out", out, *extra], capsys)
        assert code == 2 and one_error(err) == (f"error: --out {out} holds files lionsim did not write (notes.txt); "
                                                "lionsim never deletes them: choose another --out (a new or empty "
                                                "directory)")
    assert (out / "notes.txt").read_text() == "mine"


@pytest.mark.slow
def test_a_sweep_is_replaced_only_when_asked(tmp_path, capsys):
    root = tmp_path / "sweep"
    assert run_cli(["sweep", "-w", "mlp", "--model-size", "tiny", "--workers", "2", "-b", "8", "--steps", "2",
                "--eval-every", "2", "-s", "adamw", "--out", root], capsys)[0] == 0
    before = listing(root)
    for extra in ([], ["--overwrite"]):
        code, _, err = run_cli(TINY + ["-s", "adamw", "--out", root, *extra], capsys)
        line = one_error(err)
        assert code == 2 and line.startswith(f"error: {root} is a sweep root (1 cells); --overwrite never clears a sweep")
        assert "--overwrite-sweep" in line
    assert listing(root) == before
    code, _, err = run_cli(TINY + ["-s", "adamw", "--out", root, "--overwrite-sweep"], capsys)
    assert code == 0, err
    assert not (root / "cells").exists() and not (root / "sweep.json").exists()
    assert (root / "run.json").is_file()


def test_an_unwritable_out_is_refused_before_any_training(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(runner_module, "train_run", lambda *a, **k: pytest.fail("trained before checking --out"))
    code, _, err = run_cli(TINY + ["-s", "adamw", "--out", "/proc/forbidden"], capsys)
    assert code == 2 and one_error(err).startswith("error: bad --out /proc/forbidden: cannot write beside it")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if (locked / "probe").parent.stat().st_mode & 0o200 == 0 and __import__("os").geteuid() != 0:
            code, _, err = run_cli(TINY + ["-s", "adamw", "--out", locked / "o"], capsys)
            assert code == 2 and "bad --out" in one_error(err)
    finally:
        locked.chmod(0o700)
    assert not list(tmp_path.glob(".*partial"))


def test_a_full_disk_keeps_the_results_in_a_temporary_folder(tmp_path, capsys, monkeypatch):
    out = tmp_path / "o"
    real = files._stage

    def full(path, write, binary=False):
        if str(path).startswith(str(tmp_path)):
            raise files.write_failed(path, OSError(errno.ENOSPC, "No space left on device"))
        return real(path, write, binary)

    monkeypatch.setattr(files, "_stage", full)
    code, _, err = run_cli(TINY + ["-s", "adamw", "-s", "lion", "--out", out], capsys)
    line = one_error(err)
    assert code == 2 and line.startswith(f"error: no space left on the device writing {out}: the results are kept in ")
    kept = Path(line.split("the results are kept in ")[1].split(" (")[0])
    try:
        steps = pd.read_csv(kept / "steps.csv")
        assert steps.groupby("strategy").step.max().to_dict() == {"adamw": 4, "lion": 4}
        assert json.loads((kept / "run.json").read_text())["status"] == "complete"
        assert (kept / "summary.csv").is_file()
    finally:
        import shutil

        shutil.rmtree(kept)
    assert not out.exists() and not list(tmp_path.glob(".*partial"))


def snapshot(directory) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())} if directory.exists() else {}


def full_disk_after(monkeypatch, calls: int) -> None:
    """savefig fills the disk on its `calls`-th call (the earlier files are written)."""
    from matplotlib.figure import Figure

    real, count = Figure.savefig, {"n": 0}

    def savefig(self, *args, **kwargs):
        count["n"] += 1
        if count["n"] >= calls:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)


@pytest.mark.slow
def test_full_disk_during_bench_leaves_the_previous_run_and_no_staging(tmp_path, monkeypatch, capsys, tiny_run):
    out = tmp_path / "r"
    out.mkdir()
    (out / "steps.csv").write_text("previous\n")  # a previous run's file, which --overwrite may replace
    before = snapshot(out)
    full_disk_after(monkeypatch, 3)
    code, _, err = run_cli([*TINY_BENCH, "-s", "adamw", "--out", str(out), "--overwrite"], capsys)
    # (the progress lines of the finished training come first, on stderr)
    assert code == 2 and err.count("error:") == 1 and "Traceback" not in err
    last = err.splitlines()[-1]
    assert last.startswith(f"error: no space left on the device writing {out}: the results are kept in "), last
    kept = last.split("the results are kept in ")[1].split(" (")[0]
    assert sorted(p.name for p in Path(kept).iterdir()) == ["run.json", "steps.csv", "summary.csv"]
    shutil.rmtree(kept)
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]  # no .r.partial left


@pytest.mark.slow
@pytest.mark.parametrize("command", ["plot", "report"])
def test_full_disk_while_redrawing_replaces_no_file(tmp_path, monkeypatch, capsys, tiny_run, command):
    import shutil

    run_dir = tmp_path / "r"
    shutil.copytree(tiny_run, run_dir)
    before = snapshot(run_dir)
    full_disk_after(monkeypatch, 4)
    code, _, err = run_cli([command, str(run_dir)], capsys)
    assert code == 2 and err.count("\n") == 1 and "no space left" in err
    assert snapshot(run_dir) == before  # the first plots were staged, never published


def test_full_disk_during_comm_out_writes_nothing(tmp_path, monkeypatch, capsys):
    full_disk_after(monkeypatch, 2)
    code, _, err = run_cli(["comm", "--sizes", "1KB:4KB", "--out", str(tmp_path / "c")], capsys)
    assert code == 2 and "no space left" in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_write_run_with_a_full_disk_part_way_keeps_the_old_files(tmp_path, monkeypatch, tiny_run):
    from lionsim.reports import files

    steps, summary, meta = files.load_run(tiny_run)
    out = tmp_path / "r"
    files.write_run(out, steps, summary, meta)
    before = snapshot(out)
    real = files._stage

    def stage(path, write, binary=False):
        if path.name == files.META_FILE:
            raise files.write_failed(path, OSError(errno.ENOSPC, "full"))
        return real(path, write, binary)

    monkeypatch.setattr(files, "_stage", stage)
    with pytest.raises(LionsimError, match="no space left"):
        files.write_run(out, steps.assign(loss=steps["loss"] + 1), summary, meta)
    assert snapshot(out) == before and not [p for p in out.iterdir() if p.name.startswith(".")]


@pytest.mark.slow
@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o027, 0o640)])
def test_every_file_written_honours_the_umask(tmp_path, capsys, tiny_run, mask, mode):
    import shutil

    run_dir = tmp_path / "r"
    shutil.copytree(tiny_run, run_dir)
    old = os.umask(mask)
    try:
        run_cli(["plot", str(run_dir)], capsys)
        run_cli(["report", str(run_dir)], capsys)
        run_cli(["comm", "--sizes", "1KB:2KB", "--out", str(tmp_path / "c")], capsys)
    finally:
        os.umask(old)
    written = [p for p in run_dir.iterdir() if p.suffix in (".png", ".svg", ".md")]  # redrawn by plot, report
    written += list((tmp_path / "c").iterdir())
    assert {p.suffix for p in written} == {".png", ".svg", ".csv", ".md"}
    assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in written} == {oct(mode)}


def test_a_held_run_is_described_in_words(tmp_path):
    from lionsim.reports.outdir import Held

    held = Held(kind="bench", meta={"status": "interrupted", "config": {"workload": "mlp", "steps": 1}, "runs": [{}]})
    assert held.describe(tmp_path).endswith("holds an interrupted bench run (mlp, 1 run, 1 step)")
    held = Held(kind="bench", meta={"status": "failed", "config": {"workload": "mlp", "steps": 20}, "runs": [{}, {}]})
    assert held.describe(tmp_path).endswith("holds a failed bench run (mlp, 2 runs, 20 steps)")
