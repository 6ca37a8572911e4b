"""Each run's H as a sweep's cells recorded it (every cell's run.json), so the sweep's tables,
plots and report name a local-step run as its cells' own reports do (columns.run_name)."""

from __future__ import annotations

from pathlib import Path

from lionsim.reports.cell_records import read_cells
from lionsim.reports.columns import recorded_rounds


def cells_rounds(root: Path | None, records: dict[str, dict | None] | None = None) -> dict[str, int]:
    """run_label -> its H for each local-step run any cell under `root` records (`records`: the cells'
    run.json, lionsim.reports.cell_records, where the caller read them already); {} where no cell is at
    hand (a redrawn copy of the CSVs alone): the runs are then named without H."""
    rounds: dict[str, int] = {}
    for record in (read_cells(root) if records is None else records).values():
        if isinstance(record, dict) and isinstance(runs := record.get("runs"), list):
            rounds |= recorded_rounds(runs)
    return rounds
