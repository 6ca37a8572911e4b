"""The Reproduce section of a run that did not finish gives the command that goes on with it: an
interrupted bench's with --resume (never --overwrite, which discards the steps kept), a sweep with
cells left the same command, said to resume it. The reference is the command itself, run: the bench
keeps the finished run and trains the rest (run.json's resume note), the sweep trains only the
missing cell."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

import pandas as pd

from tests.helpers.cli import TINY_BENCH, run_cli


def _reproduce(report: Path) -> tuple[str, list[str]]:
    """The Reproduce section's text before its commands, and its first command as argv: the run was
    made in the report's folder's parent with --out relative to it, so the command runs from there
    (`cd FOLDER && `, left out here)."""
    section = report.read_text().split("## Reproduce\n\n")[1]
    command = shlex.split(next(line for line in section.splitlines() if line.startswith("    ")))
    assert command[:3] == ["cd", str(report.parent.parent.resolve()), "&&"]
    return section.split("    ")[0], command[3:]


def test_an_interrupted_bench_reproduces_with_resume_and_that_continues_it(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    made = [*TINY_BENCH, "-s", "adamw,lion", "--out", "run", "--overwrite"]
    monkeypatch.setattr(sys, "argv", ["lionsim", *made])  # bench records the process's own command line
    assert run_cli(made, capsys)[0] == 0
    whole = pd.read_csv(tmp_path / "run" / "steps.csv")
    # as a SIGINT during lion's first step leaves it: adamw finished, lion not begun, run.json interrupted
    steps = whole[whole["strategy"] == "adamw"]
    steps.to_csv(tmp_path / "run" / "steps.csv", index=False)
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    (tmp_path / "run" / "run.json").write_text(json.dumps({**meta, "status": "interrupted"}))
    (tmp_path / "run" / "summary.csv").unlink()  # made again by the report, under the run's rule
    assert run_cli(["report", "run"], capsys)[0] == 0

    note, again = _reproduce(tmp_path / "run" / "report.md")
    assert "--resume" in again and "--overwrite" not in again
    assert again == ["lionsim", *made[:-1], "--resume"]
    assert "the same command with --resume trains the runs that did not finish" in note
    monkeypatch.setattr(sys, "argv", again)
    code, _, err = run_cli(again[1:], capsys)
    assert code == 0, err
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    assert meta["status"] == "complete" and meta["resumed"][-1]["kept_runs"] == ["adamw@fp32-allreduce"]
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "run" / "steps.csv"), whole)


def test_a_finished_bench_reproduces_with_overwrite_and_no_note(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    made = [*TINY_BENCH, "-s", "adamw", "--out", "run"]
    monkeypatch.setattr(sys, "argv", ["lionsim", *made])
    assert run_cli(made, capsys)[0] == 0 and run_cli(["report", "run"], capsys)[0] == 0
    note, again = _reproduce(tmp_path / "run" / "report.md")
    assert note == "" and again == ["lionsim", *made, "--overwrite"]


def _sweep_cut_after_one_cell(tmp_path, capsys, monkeypatch) -> tuple[list[str], Path, str, str]:
    """A sweep of 2 cells (adamw, lion) as an interruption after its first cell leaves it: one cell
    directory and its rows; (the command, its root, the kept cell, the lost one)."""
    monkeypatch.chdir(tmp_path)
    made = ["sweep", *TINY_BENCH[1:], "-s", "adamw,lion", "--out", "sw"]
    monkeypatch.setattr(sys, "argv", ["lionsim", *made])
    assert run_cli(made, capsys)[0] == 0
    root = tmp_path / "sw"
    summary = pd.read_csv(root / "sweep_summary.csv")
    kept, lost = summary["cell"].tolist()
    shutil.rmtree(root / "cells" / lost)
    summary[summary["cell"] == kept].to_csv(root / "sweep_summary.csv", index=False)
    steps = pd.read_csv(root / "sweep_steps.csv")
    steps[steps["cell"] == kept].to_csv(root / "sweep_steps.csv", index=False)
    return made, root, kept, lost


def test_a_cut_sweeps_report_title_counts_the_grid_and_the_finished_cells(tmp_path, capsys, monkeypatch):
    """The title read "sweep of 1 cells (1 of 2 finished)": the grid's cells (sweep.json's count,
    2 here) with their noun, and how many finished (the summary's rows); a whole sweep says only
    its count."""
    _, root, _, _ = _sweep_cut_after_one_cell(tmp_path, capsys, monkeypatch)
    assert json.loads((root / "sweep.json").read_text())["cells"] == 2
    assert run_cli(["report", "sw"], capsys)[0] == 0
    title = (root / "report.md").read_text().splitlines()[0]
    assert title == "# lionsim report: sweep of 2 cells (1 finished)"
    made = ["sweep", *TINY_BENCH[1:], "-s", "adamw", "--out", "one"]
    assert run_cli(made, capsys)[0] == 0 and run_cli(["report", "one"], capsys)[0] == 0
    assert (tmp_path / "one" / "report.md").read_text().splitlines()[0] == "# lionsim report: sweep of 1 cell"


def test_a_sweep_with_cells_left_says_the_same_command_resumes_it(tmp_path, capsys, monkeypatch):
    made, root, kept, lost = _sweep_cut_after_one_cell(tmp_path, capsys, monkeypatch)
    assert run_cli(["report", "sw"], capsys)[0] == 0

    note, again = _reproduce(root / "report.md")
    assert again == ["lionsim", *made]
    assert note.startswith("1 of 2 cells finished: rerun the same command to resume")
    monkeypatch.setattr(sys, "argv", again)
    code, out, err = run_cli(again[1:], capsys)
    assert code == 0, err
    assert "1 training this run; 1 cell was already finished" in " ".join((out + err).split())
    assert sorted(p.name for p in (root / "cells").iterdir()) == sorted([kept, lost])
    assert run_cli(["report", "sw"], capsys)[0] == 0
    assert _reproduce(root / "report.md")[0] == ""  # every cell finished: nothing to resume
