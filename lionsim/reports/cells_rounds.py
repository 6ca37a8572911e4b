"""Each run's H as a sweep's cells recorded it (every cell's run.json), so the sweep's tables,
plots and report name a local-step run as its cells' own reports do (columns.run_name)."""

from __future__ import annotations

from pathlib import Path

from lionsim.errors import LionsimError
from lionsim.reports.columns import recorded_rounds
from lionsim.reports.files import read_json

CELLS = "cells"
"""A sweep root's folder of cells (lionsim.sweep.store.CELLS_DIR; not imported: reports sits below sweep)."""


def cells_rounds(root: Path | None) -> dict[str, int]:
    """run_label -> its H for each local-step run any cell under `root` records; {} where no cell
    is at hand (a redrawn copy of the CSVs alone): the runs are then named without H."""
    rounds: dict[str, int] = {}
    if root is None:
        return rounds
    for path in sorted((Path(root) / CELLS).glob("*/run.json")):
        try:
            rounds |= recorded_rounds((read_json(path) or {}).get("runs"))
        except (LionsimError, OSError, AttributeError):  # an unreadable cell record: the others still name the runs
            continue
    return rounds
