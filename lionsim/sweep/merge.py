"""Shard parts combined into their root: `lionsim sweep merge ROOT`, or the next plain `sweep`.

Every part (ROOT/parts/shard-I-of-N, lionsim.sweep.shards) must hold a sweep of the same bench
options as the root; the merged grid is the union of theirs, but for values no finished cell
holds, which a rerun may drop (merged_grid). A cell finished in several places (the root, a
part, parts of two splits) is kept once when every copy holds the same result, and refused,
naming the cell and both places, when two differ: nothing is written then. A cell of the grid
that no part finished is listed as missing (with its error where a part recorded one in
failed.json). Parts are read, never changed: merging again is safe.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from lionsim.errors import LionsimError
from lionsim.reports.files import SUMMARY_FILE, STEPS_FILE, make_dir, read_csv
from lionsim.sweep.grid import OPTION_OF_AXIS, lr_text, recorded_grid
from lionsim.sweep.plan import SweepPlan, held_values
from lionsim.sweep.shards import PART_NAME, part_roots
from lionsim.sweep.store import SWEEP_FILE, CellStore
from lionsim.sweep.tables import SweepTables


@dataclass(slots=True)
class MergeOutcome:
    summary: pd.DataFrame | None
    total: int
    """Cells of the merged grid."""
    parts: list[str]
    adopted: int
    """Cells copied from parts into the root by this call."""
    missing: list[str] = field(default_factory=list)
    """Cells of the grid that neither the root nor any part finished."""
    failed: dict[str, str] = field(default_factory=dict)
    """Missing cells whose unit failed in a part, with the error."""
    report_removed: Path | None = None
    """ROOT/report.md, removed because this merge changed the cells it described."""


def _is_timing(column: str) -> bool:
    return column.endswith("_s") or "speedup" in column or column == "comm_model_error"


def same_result(a: Path, b: Path, measured: bool) -> bool:
    """Whether two copies of a cell hold the same result: steps.csv and summary.csv equal byte
    for byte, or, where compute was measured (times differ run to run), equal but for the times."""
    if not measured:
        return all((a / name).read_bytes() == (b / name).read_bytes() for name in (STEPS_FILE, SUMMARY_FILE))
    for name in (STEPS_FILE, SUMMARY_FILE):
        x, y = read_csv(a / name, []), read_csv(b / name, [])
        keep = [c for c in x.columns if not _is_timing(c)]
        if list(x.columns) != list(y.columns) or not x[keep].equals(y[keep]):
            return False
    return True


def merged_grid(out: Path, root: dict | None, parts: dict[Path, dict]) -> dict[str, list]:
    """The grid of a merge (axis -> values, as sweep.json records them) from the root's sweep.json
    (`root`, None: none) and each part's (`parts`): every value a part lists, in the parts' order,
    then the root's that finished cells hold. A value no finished cell holds is one a rerun may
    drop (lionsim.sweep.grid.check_grows): the root's (an earlier merge's grid, or a plain run's)
    is left out, so a value the parts dropped does not come back; one that some parts list and
    others lack says the shards ran two grids, and is refused naming both."""
    root = recorded_grid(root) if root is not None else None  # "lr" always, as held_values reads it
    parts = {where: recorded_grid(record) for where, record in parts.items()}
    held = {axis: set() for axis in OPTION_OF_AXIS}
    for where, grid in [*([(out, root)] if root is not None else []), *parts.items()]:
        for axis, values in held_values(grid, where).items():
            held[axis] |= values
    grid: dict[str, list] = {axis: [] for axis in OPTION_OF_AXIS}
    for axis, option in OPTION_OF_AXIS.items():
        for where, part in parts.items():
            for value in part.get(axis, []):
                lacking = [p for p, g in parts.items() if value not in g.get(axis, [])]
                if lacking and value not in held[axis]:
                    shown = lr_text(value) if axis == "lr" else value  # as check_grows writes it: default, not None
                    raise LionsimError(
                        f"the shards ran two grids: {where / SWEEP_FILE} has {option} {shown}, which "
                        f"{lacking[0] / SWEEP_FILE} lacks, and no finished cell holds it; rerun --shard "
                        f"{_shard(lacking[0])} with it (or --shard {_shard(where)} without it), then merge again")
                grid[axis] += [value] if value not in grid[axis] else []
        kept = root.get(axis, []) if root is not None else []
        grid[axis] += [v for v in kept if v in held[axis] and v not in grid[axis]]
    return grid


def _shard(part: Path) -> str:
    """shard-1-of-2 -> 1/2, as --shard takes it."""
    return "/".join(PART_NAME.fullmatch(part.name).groups())


def check_parts(plan: SweepPlan) -> None:
    """A plain sweep on a root with parts: each part must be a sweep this command would run."""
    for part in part_roots(plan.out):
        plan.check_resume(CellStore(part).read_record(), part / SWEEP_FILE)


def _adoptions(root: CellStore, parts: list[Path], cell_ids: list[str], measured: bool) -> dict[str, Path]:
    """cell id -> the part copy to adopt, for cells the root lacks; a conflict fails here."""
    adopt: dict[str, Path] = {}
    for cell_id in cell_ids:
        copies = [d for d in [root.cells / cell_id, *(p / "cells" / cell_id for p in parts)] if d.is_dir()]
        for other in copies[1:]:
            if not same_result(copies[0], other, measured):
                raise LionsimError(f"cell {cell_id} was finished twice with different results: {copies[0]} and "
                                   f"{other}; delete the wrong copy (or its part) and merge again")
        if copies and copies[0] != root.cells / cell_id:
            adopt[cell_id] = copies[0]
    return adopt


def merge_parts(out: Path, plan: SweepPlan) -> int:
    """Adopt into ROOT/cells every cell of the plan's grid that a part finished; return how many."""
    parts = part_roots(out)
    if not parts:
        return 0
    root = CellStore(out)
    adopt = _adoptions(root, parts, [c.id for c in plan.cells], plan.measured)
    if adopt:
        make_dir(root.cells)
    for cell_id, source in adopt.items():
        root.adopt(cell_id, source)
    return len(adopt)


def _shard_command(part: Path) -> dict:
    """A part's command as its sweep.json recorded it (argv and the folder it ran in)."""
    record = CellStore(part).read_record() or {}
    return {"part": part.name, "argv": record.get("argv"), "cwd": record.get("cwd")}


def merge_shards(plan: SweepPlan) -> MergeOutcome:
    """`lionsim sweep merge ROOT`: the parts' cells into ROOT/cells, then sweep.json and both CSVs;
    `plan` is the sweep the parts agree on (lionsim.config.sweep.merged_plan)."""
    out = plan.out
    parts = part_roots(out)
    cells = plan.cells
    root = CellStore(out)
    previous = root.read_record()
    adopt = _adoptions(root, parts, [c.id for c in cells], plan.measured)  # conflicts: nothing written
    make_dir(root.root)
    # argv: the merge as typed (a `lionsim report` may be what merged), with each shard's command
    # beside it, so the report's Reproduce section gives the commands that trained the cells
    root.write_record({**plan.record(previous), "argv": ["lionsim", "sweep", "merge", str(out.resolve())],
                       "merged": [p.name for p in parts], "shards": [_shard_command(p) for p in parts]})
    root.prepare()
    for cell_id, source in adopt.items():
        root.adopt(cell_id, source)
    removed = root.drop_stale_report(previous, plan.grid.to_dict(), len(adopt))  # as a sweep's rerun
    tables = SweepTables(root, cells, plan.rule, plan.grid.runs, plan.grid.lrs)
    finished = root.finished([c.id for c in cells])
    for cell in cells:
        if cell.id in finished:
            tables.add(cell)
    summary = tables.write()
    root.record_failed(drop=finished)  # the root's failed cells that a part finished
    missing = [c.id for c in cells if c.id not in finished]
    errors = {k: v for p in parts for k, v in CellStore(p).read_failed().items() if k in missing}
    return MergeOutcome(summary, len(cells), [p.name for p in parts], len(adopt), missing, errors, removed)
