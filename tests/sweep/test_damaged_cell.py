"""A finished cell whose steps.csv was damaged (a copy cut short) stops the sweep's rerun in one line
that names the cell and the way out: the rerun skips finished cells, so "rerun the command" alone
read the same file again. Following the advice trains that cell again, as an undamaged sweep's."""

from __future__ import annotations

import shutil

import pandas as pd

from tests.helpers.cli import one_line_exit_2, run_cli

GRID = ["sweep", "--workload", "mlp", "--model-size", "tiny", "--workers", "2,4", "--steps", "3",
        "--batch-size", "8", "-s", "adamw", "-s", "dlion-mavo"]


def test_a_damaged_cell_names_itself_and_deleting_it_trains_it_again(tmp_path, capsys):
    out = tmp_path / "s"
    code, _, err = run_cli([*GRID, "--out", str(out)], capsys)
    assert code == 0, err
    before = pd.read_csv(out / "sweep_summary.csv")
    cell = sorted((out / "cells").iterdir())[0]
    steps = cell / "steps.csv"
    steps.write_bytes(steps.read_bytes()[:-5])  # cut short
    err = one_line_exit_2([*GRID, "--out", str(out)], capsys, f"delete {cell} and rerun the sweep")
    assert "truncated or corrupt" in err and "rerun the command that wrote it" not in err
    shutil.rmtree(cell)
    code, _, err = run_cli([*GRID, "--out", str(out)], capsys)
    assert code == 0, err
    pd.testing.assert_frame_equal(pd.read_csv(out / "sweep_summary.csv"), before)
