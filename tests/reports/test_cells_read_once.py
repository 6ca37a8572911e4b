"""A sweep's cells' run.json are read once a command (lionsim.reports.cell_records): `lionsim sweep`
and `lionsim sweep merge` pass them (and the runs' H, cells_rounds) to the plots and the table,
`lionsim report` to the report's parts (H, hyperparameters, time notes, warm-up) and its redrawn
plots (each read every cell's run.json again before: the report four times). Each still names the
local-step run with its H (columns.run_name), so what was passed down is what each read for itself."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lionsim.cli import app
from lionsim.reports import cell_records

H = 5
NAME = f"diloco H={H}"
SWEEP = ["sweep", "--workload", "mlp", "--model-size", "tiny", "--network", "1gbe", "-s", "adamw", "-s", "diloco",
         "--local-steps", str(H), "--steps", "6", "--eval-every", "6", "--workers", "2,4"]


@pytest.fixture
def reads(monkeypatch) -> Counter:
    """Every cell record read, counted."""
    counted: Counter = Counter()
    real = cell_records.read_json

    def read_json(path):
        counted[Path(path)] += 1
        return real(path)

    monkeypatch.setattr(cell_records, "read_json", read_json)
    return counted


def _ran(argv) -> str:
    done = CliRunner().invoke(app, [str(a) for a in argv], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    return done.stdout


def test_a_sweep_and_its_report_read_each_cell_once(tmp_path, reads):
    root = tmp_path / "root"
    said = _ran([*SWEEP, "--out", root])
    cells = sorted(root.glob("cells/*/run.json"))
    assert len(cells) == 4  # a run a worker count
    assert dict(reads) == {cell: 1 for cell in cells}  # was three times: the plots, the table, its caption
    assert NAME in said  # the table named the run with the H the plots read
    reads.clear()
    _ran(["report", root])
    assert dict(reads) == {cell: 1 for cell in cells}  # was five times: H, hyper rows, time notes, warm-up, plots
    assert NAME in (root / "report.md").read_text()


def test_estimate_from_a_sweep_reads_each_cell_once(tmp_path, reads):
    """--from-run ROOT reads its cells' run.json for the runs' options and their warm-up steps: once
    each (it read every cell once per run, then every cell again)."""
    root = tmp_path / "root"
    _ran([*SWEEP, "--out", root])
    cells = sorted(root.glob("cells/*/run.json"))
    reads.clear()
    said = _ran(["estimate", "--from-run", root, "-m", "gpt2-124m", "--workers", "8", "--network", "10gbe"])
    assert dict(reads) == {cell: 1 for cell in cells}
    assert NAME in said
