"""Run a sweep: check it, skip the finished cells, train the rest, keep the CSVs current.

Order of work, and why each step is safe to interrupt:
1. (the command has checked every option and planned every unit: lionsim.config.sweep) on a
   resume, compare with sweep.json; open the executor (a Ray cluster is reached here): nothing
   is written yet;
2. take in the cells that shard parts under the root finished (lionsim.sweep.merge), write
   sweep.json, clear what a killed run left half-written (RunDir staging dirs, temp files);
3. train each unit with unfinished cells on the executor (this process, a pool of --jobs
   processes, or Ray tasks); this process alone writes: each cell's directory is published
   whole (one rename), then both sweep CSVs are rewritten atomically from the finished cells.
So at any moment the root holds whole cells and CSVs of whole cells; rerunning resumes. Ctrl-C
stops the units under way at a step boundary; each one's state is kept (lionsim.sweep.unit_state)
and the rerun continues it, so its cells equal an uninterrupted sweep's. A unit
that fails in lionsim is recorded in failed.json with its error and the others go on; a
record stays until its cell finishes (or leaves the grid), so a rerun stopped early loses none.
A shard (--shard I/N) does the same for its units, in its own part ROOT/parts/shard-I-of-N.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from lionsim.option_paths import absolute
from lionsim.reports.files import make_dir
from lionsim.sweep import unit_state
from lionsim.sweep.cells import Cell
from lionsim.sweep.execute import open_executor
from lionsim.sweep.merge import check_parts, merge_parts
from lionsim.sweep.plan import SweepPlan
from lionsim.sweep.shards import part_roots
from lionsim.sweep.store import SWEEP_FILE, CellStore
from lionsim.sweep.tables import SweepTables
from lionsim.sweep.train import UnitOutcome, UnitTask


class SweepEvents:
    """What a sweep reports as it goes; the CLI draws it (the library never prints)."""

    def started(self, total: int, finished: int, units: int, steps: int) -> None: ...
    def unit_started(self, key: str) -> None: ...
    def step(self, key: str, step: int, loss: float) -> None: ...
    def cell_finished(self, cell: Cell, summary: pd.DataFrame, finished: int, total: int) -> None: ...
    def unit_failed(self, key: str, error: str) -> None: ...
    def unit_finished(self, key: str) -> None: ...
    def report_removed(self, path: Path) -> None: ...


class SweepInterrupted(Exception):
    """Ctrl-C: the finished cells are kept and the CSVs hold exactly them; `kept` names each unit
    that stopped under way with its state kept (unit key -> its last finished step)."""

    def __init__(self, finished: int, total: int, kept: dict[str, int] | None = None) -> None:
        super().__init__(f"{finished} of {total} cells finished")
        self.finished, self.total, self.kept = finished, total, kept or {}


@dataclass(slots=True)
class SweepOutcome:
    summary: pd.DataFrame | None
    """sweep_summary.csv's rows."""
    total: int
    """Cells this process is responsible for: the grid's, or its shard's."""
    trained: int
    """Training units run by this call (0: every cell was already finished)."""
    already: int = 0
    """Cells finished before this call (a resumed sweep, or cells taken in from shard parts)."""
    failed: dict[str, str] = field(default_factory=dict)
    """cell id -> error, for the cells whose unit failed in lionsim (also in failed.json)."""


def unit_tasks(plan: SweepPlan, done: set[str]) -> list[UnitTask]:
    """A task per unit with an unfinished cell; it trains on the first and books only the
    unfinished networks."""
    tasks = []
    for planned in plan.units:
        unit = planned.unit
        todo = [(unit.cell(net).id, net) for net in plan.grid.networks
                if unit.trains_on(net) and unit.cell(net).id not in done]
        if todo:
            tasks.append(UnitTask(key=unit.key, plan=planned.plan.with_network(todo[0][1]), cells=tuple(todo),
                                  root=plan.root))
    return tasks


def finished_elsewhere(plan: SweepPlan, cell_ids: list[str]) -> set[str]:
    """A shard's cells that the root or another part already finished (read, never written)."""
    others = [CellStore(plan.out), *(CellStore(p) for p in part_roots(plan.out) if p != plan.root)]
    return set().union(*(store.finished(cell_ids) for store in others))


def settled(plan: SweepPlan, store: CellStore) -> set[str]:
    """The cells of failed.json that need no retry: finished since (for a shard, in the root or
    another part too), or no cell of the grid any more (a rerun dropped the value that failed)."""
    listed = list(store.read_failed())
    grid = {c.id for c in plan.cells}
    finished = store.finished(listed) | (finished_elsewhere(plan, listed) if plan.shard is not None else set())
    return finished | {c for c in listed if c not in grid}


def run_sweep(plan: SweepPlan, events: SweepEvents | None = None) -> SweepOutcome:
    """Train and book every unfinished cell of `plan` (lionsim.config.sweep.plan_sweep)."""
    events = events or SweepEvents()
    store = CellStore(plan.root)
    previous = store.read_record()
    if previous is not None:
        plan.check_resume(previous, store.root / SWEEP_FILE)
    whole = CellStore(plan.out)  # a shard reads the root's finished cells (and writes none)
    if plan.shard is None:
        check_parts(plan)
    elif (record := whole.read_record()) is not None:
        plan.check_resume(record, whole.root / SWEEP_FILE)
    executor = open_executor(plan.executor, jobs=plan.jobs, ray_address=plan.ray_address)
    try:
        return _run(plan, store, whole, previous, executor, events)
    finally:
        executor.close()


def _run(plan: SweepPlan, store: CellStore, whole: CellStore, previous: dict | None, executor,
         events: SweepEvents) -> SweepOutcome:
    adopted = merge_parts(plan.out, plan) if plan.shard is None else 0  # cells that shards finished are finished here
    if plan.shard is None:
        previous = store.read_record() or previous
    make_dir(store.root)
    store.write_record(plan.record(previous))
    store.prepare()

    def results_changed() -> None:
        # report.md describes the grid and its finished cells: once either changes it is stale,
        # and goes (said, so that its going is no surprise); a rerun that changes neither keeps it
        if (removed := store.drop_report()) is not None:
            events.report_removed(removed)

    if (removed := store.drop_stale_report(previous, plan.grid.to_dict(), adopted)) is not None:
        events.report_removed(removed)
    mine = {u.unit.key for u in plan.units}
    cells = {c.id: c for c in plan.cells if c.unit.key in mine}
    tables = SweepTables(store, list(cells.values()), plan.rule, plan.grid.runs, plan.grid.lrs)
    for cell_id in store.finished(list(cells)):
        tables.add(cells[cell_id])
    tables.write()  # a run killed between a cell and the CSVs left them one cell behind
    already = len(tables.steps)
    elsewhere = finished_elsewhere(plan, list(cells)) if plan.shard is not None else set()
    tasks = unit_tasks(plan, set(tables.steps) | elsewhere)
    failed: dict[str, str] = {}
    kept: dict[str, int] = {}  # units stopped under way, their state kept for the rerun
    store.record_failed(drop=settled(plan, store))  # the rest are retried now and keep their error till then
    events.started(len(cells), already + len(elsewhere), len(tasks), plan.steps)

    def done(task: UnitTask, outcome: UnitOutcome) -> None:
        if outcome.stopped is not None:
            unit_state.keep(store.root, task.key, task.plan, outcome.stopped)
            if outcome.stopped.step:
                kept[task.key] = outcome.stopped.step
            return
        unit_state.drop(store.root, task.key)  # finished or failed: a rerun has no state to continue
        if outcome.error is not None:
            failed.update({cell_id: outcome.error for cell_id, _ in task.cells})
            store.record_failed({cell_id: outcome.error for cell_id, _ in task.cells})
            events.unit_failed(task.key, outcome.error)
        for r in outcome.results:
            r.meta["config"]["out"] = absolute(store.cells / r.cell_id)
            store.publish(r.cell_id, r.steps, r.summary, r.meta)
            store.record_failed(drop=[r.cell_id])  # a retry that finished
            results_changed()
            tables.add(cells[r.cell_id])
            tables.write()
            events.cell_finished(cells[r.cell_id], r.summary, len(tables.steps) + len(elsewhere), len(cells))
        events.unit_finished(task.key)

    try:
        executor.run(tasks, events, done)
    except KeyboardInterrupt:
        # an interrupt between a cell's rename and the CSV rewrite: bring the CSVs level
        for cell_id in store.finished(list(cells)):
            if cell_id not in tables.steps:
                tables.add(cells[cell_id])
        tables.write()
        raise SweepInterrupted(len(tables.steps) + len(elsewhere), len(cells), kept) from None
    return SweepOutcome(tables.write(), len(cells), len(tasks), already + len(elsewhere), failed)
