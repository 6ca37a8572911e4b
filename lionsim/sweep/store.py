"""The sweep root on disk: sweep.json and one directory per finished cell.

What is finished is what is published: a cell is written whole into a hidden staging
directory (`cells/.ID.partial`, lionsim.reports.publish.RunDir) and renamed into `cells/ID`
in one step, so a cell directory exists only when the cell is complete. A killed run can
leave a staging directory or a temp file behind; `prepare` removes them before a resume.
ROOT/failed.json lists the cells whose unit failed in lionsim, with the error: a rerun retries
them, and a record stays until its cell finishes or fails again (record_failed). ROOT/parts/
holds shard parts (lionsim.sweep.shards), each a root of its own.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from lionsim.errors import LionsimError
from lionsim.option_paths import absolute
from lionsim.reports.columns import STEP_COLUMNS
from lionsim.reports.files import META_FILE, STEPS_FILE, SUMMARY_FILE, make_dir, read_csv, read_json, write_atomic, write_run
from lionsim.reports.publish import RunDir
from lionsim.reports.resuming import FAILED_FILE  # noqa: F401 (the sweep's callers import it here)
from lionsim.sweep.shards import PARTS_DIR

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
            # a root that only shards have written so far holds parts/ alone
            if self.root.is_dir() and any(p for p in self.root.iterdir() if not p.name.startswith(".")
                                          and p.name != PARTS_DIR):
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

    def drop_stale_report(self, previous: dict | None, grid: dict, taken_in: int) -> Path | None:
        """drop_report where the results changed since `previous` (the sweep.json before this run,
        None: none): the grid (`grid`, the plan's) differs, or `taken_in` cells were adopted."""
        if taken_in or previous is None or previous.get("grid") != grid:
            return self.drop_report()
        return None

    def drop_report(self) -> Path | None:
        """Remove the report.md `lionsim report` wrote of the sweep's results before they changed;
        its path if there was one. The callers decide when: the grid grew, or a cell was published
        or adopted (a rerun that changes neither keeps the report: it still describes every cell)."""
        from lionsim.reports.outdir import REPORT_FILE

        path = self.root / REPORT_FILE
        if not path.is_file():
            return None
        path.unlink()
        return path

    def write_record(self, record: dict) -> None:
        write_atomic(self.root / SWEEP_FILE, lambda f: f.write(json.dumps(record, indent=2) + "\n"))

    def finished(self, cell_ids: list[str]) -> set[str]:
        return {c for c in cell_ids if (self.cells / c).is_dir()}

    def read_failed(self) -> dict[str, str]:
        """cell id -> the error its unit failed with (empty: none failed)."""
        path = self.root / FAILED_FILE
        record = read_json(path) if path.is_file() else {}
        return record if isinstance(record, dict) else {}

    def record_failed(self, failed: dict[str, str] | None = None, drop=()) -> None:
        """failed.json updated: `failed` (cell id -> its error this time) recorded, the cells in
        `drop` (finished, or outside the grid) let go, every other record kept: a cell not
        retried yet (a rerun stopped first, or a shard's cell that another shard now runs) still
        failed last time. Rewritten atomically, and only when it changes."""
        before, drop = self.read_failed(), set(drop)
        after = {k: v for k, v in before.items() if k not in drop} | (failed or {})
        if after != before:
            self.write_failed(after)

    def write_failed(self, failed: dict[str, str]) -> None:
        """failed.json holds `failed` (removed when it is empty)."""
        if failed:
            write_atomic(self.root / FAILED_FILE, lambda f: f.write(json.dumps(failed, indent=2) + "\n"))
        else:
            (self.root / FAILED_FILE).unlink(missing_ok=True)

    def adopt(self, cell_id: str, source: Path) -> None:
        """Publish a finished cell of another root (a shard's part) here: its CSVs byte for byte,
        its run.json naming where it now lives."""
        meta = read_json(source / META_FILE)
        meta["config"]["out"] = absolute(self.cells / cell_id)

        def write(stage: Path) -> None:
            for name in (STEPS_FILE, SUMMARY_FILE):
                shutil.copyfile(source / name, stage / name)
            (stage / META_FILE).write_text(json.dumps(meta, indent=2) + "\n")

        target = RunDir(self.cells / cell_id)
        target.write(write)
        target.publish()

    def publish(self, cell_id: str, steps: pd.DataFrame, summary: pd.DataFrame, meta: dict) -> None:
        """Stage the cell's three files, then rename the staging directory into place."""
        target = RunDir(self.cells / cell_id)
        target.write(lambda stage: write_run(stage, steps, summary, meta))
        target.publish()

    def trained_lr(self, cell_id: str) -> float:
        """The lr a finished cell's run trained with (its run.json's: a strategy's own where the
        sweep's lr was `default`)."""
        return float(read_json(self.cells / cell_id / META_FILE)["runs"][0]["lr"])

    def steps(self, cell_id: str) -> pd.DataFrame:
        """A finished cell's steps.csv, read back exactly (the same frame on a fresh or resumed run). A
        bad one names its cell and the way out: the sweep's rerun skips a finished cell, so rerunning
        alone would read the same file again."""
        return read_csv(self.cells / cell_id / STEPS_FILE, STEP_COLUMNS,
                        fix=f"delete {self.cells / cell_id} and rerun the sweep, which trains that cell again")
