"""The sweep root on disk: sweep.json and one directory per finished cell.

What is finished is what is published: a cell is written whole into a hidden staging
directory (`cells/.ID.partial`, lionsim.reports.publish.RunDir) and renamed into `cells/ID`
in one step, so a cell directory exists only when the cell is complete. A killed run can
leave a staging directory or a temp file behind; `prepare` removes them before a resume.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from lionsim.errors import LionsimError
from lionsim.reports.columns import STEP_COLUMNS
from lionsim.reports.files import META_FILE, STEPS_FILE, SUMMARY_FILE, make_dir, read_csv, read_json, write_atomic, write_run
from lionsim.reports.publish import RunDir

SWEEP_FILE = "sweep.json"
CELLS_DIR = "cells"
CELL_FILES = (STEPS_FILE, SUMMARY_FILE, META_FILE)


class CellStore:
    """ROOT/sweep.json and ROOT/cells/<cell id>/ (a bench run directory each)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.cells = self.root / CELLS_DIR

    def read_record(self) -> dict | None:
        """The previous sweep.json, or None for a new sweep; a root holding something else fails."""
        path = self.root / SWEEP_FILE
        if not path.is_file():
            if self.root.is_dir() and any(p for p in self.root.iterdir() if not p.name.startswith(".")):
                raise LionsimError(f"--out {self.root} holds files but no {SWEEP_FILE}; "
                                   "use a new or empty directory for a sweep")
            return None
        record = read_json(path)
        if not isinstance(record, dict):
            raise LionsimError(f"{path} is not a sweep record; use a new --out")
        return record

    def prepare(self) -> None:
        """Create the root and remove what a killed run left half-written (never a published cell)."""
        make_dir(self.cells)
        for stale in [*self.cells.glob(".*.partial"), *self.root.glob(".*.tmp")]:
            shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
        for cell_dir in self.cells.iterdir():
            # only lionsim writes here, and only by rename of a whole cell: a directory that lacks
            # a file was damaged by hand; redoing it is the safe reading
            if cell_dir.is_dir() and not all((cell_dir / name).is_file() for name in CELL_FILES):
                shutil.rmtree(cell_dir)

    def write_record(self, record: dict) -> None:
        write_atomic(self.root / SWEEP_FILE, lambda f: f.write(json.dumps(record, indent=2) + "\n"))

    def finished(self, cell_ids: list[str]) -> set[str]:
        return {c for c in cell_ids if (self.cells / c).is_dir()}

    def publish(self, cell_id: str, steps: pd.DataFrame, summary: pd.DataFrame, meta: dict) -> None:
        """Stage the cell's three files, then rename the staging directory into place."""
        target = RunDir(self.cells / cell_id)
        target.write(lambda stage: write_run(stage, steps, summary, meta))
        target.publish()

    def steps(self, cell_id: str) -> pd.DataFrame:
        """A finished cell's steps.csv, read back exactly (the same frame on a fresh or resumed run)."""
        return read_csv(self.cells / cell_id / STEPS_FILE, STEP_COLUMNS)
