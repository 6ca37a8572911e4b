"""A sweep's cells' run.json records, read once for every table, caption and report that needs them
(each run's H, its hyperparameters, how its times were obtained, its warm-up)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from lionsim.errors import LionsimError
from lionsim.reports.files import META_FILE, read_json

CELLS = "cells"
"""A sweep root's folder of cells (lionsim.sweep.store.CELLS_DIR; not imported: reports sits below sweep)."""


def read_cells(root: Path | None, cells: Iterable | None = None) -> dict[str, dict | None]:
    """cell -> its run.json under ROOT/cells, for `cells` in their order, or for every cell folder that
    holds one (sorted) where none are given; None for a record that is missing, unreadable or not an
    object (the others still say theirs); {} where there is no root (a redrawn copy of the CSVs alone)."""
    if root is None:
        return {}
    folder = Path(root) / CELLS
    names = (dict.fromkeys(map(str, cells)) if cells is not None
             else sorted(p.parent.name for p in folder.glob(f"*/{META_FILE}")))
    records: dict[str, dict | None] = {}
    for cell in names:
        try:
            record = read_json(folder / cell / META_FILE)
        except (LionsimError, OSError):
            record = None
        records[cell] = record if isinstance(record, dict) else None
    return records
