"""A sweep's runs' H (cells_rounds) is read from the cells once a command: `lionsim sweep` and
`lionsim sweep merge` pass it to the plots and the table, `lionsim report` to the report and its
redrawn plots (each read every cell's run.json again before). Each still names the local-step
run with its H (columns.run_name), so what was passed down is what each read for itself."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lionsim.cli import app
from lionsim.reports import cells_rounds

H = 5
NAME = f"diloco H={H}"
SWEEP = ["sweep", "--workload", "mlp", "--model-size", "tiny", "--network", "1gbe", "-s", "adamw", "-s", "diloco",
         "--local-steps", str(H), "--steps", "6", "--eval-every", "6", "--workers", "2,4"]


@pytest.fixture
def reads(monkeypatch) -> Counter:
    """Every file cells_rounds reads, counted."""
    counted: Counter = Counter()
    real = cells_rounds.read_json

    def read_json(path):
        counted[Path(path)] += 1
        return real(path)

    monkeypatch.setattr(cells_rounds, "read_json", read_json)
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
    assert dict(reads) == {cell: 1 for cell in cells}  # was twice: the plots, then the table
    assert NAME in said  # the table named the run with the H the plots read
    reads.clear()
    _ran(["report", root])
    assert dict(reads) == {cell: 1 for cell in cells}  # was twice: the report, then its redrawn plots
    assert NAME in (root / "report.md").read_text()
