"""Run a sweep: check it, skip the finished cells, train the rest, keep the CSVs current.

Order of work, and why each step is safe to interrupt:
1. validate every option and, on a resume, compare with sweep.json: nothing is written yet;
2. write sweep.json, clear what a killed run left half-written (RunDir staging dirs, temp files);
3. train each unit with unfinished cells (in this process, or in a pool of --jobs processes);
   the parent alone writes: each cell's directory is published whole (one rename), then both
   sweep CSVs are rewritten atomically from the finished cells.
So at any moment the root holds whole cells and CSVs of whole cells; rerunning resumes.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing import forkserver
import queue as queues
import signal
import threading
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass

import pandas as pd

from lionsim.errors import LionsimError
from lionsim.reports.files import make_dir
from lionsim.sweep.cells import Cell
from lionsim.sweep.config import SweepConfig
from lionsim.sweep.store import SWEEP_FILE, CellStore
from lionsim.sweep.tables import SweepTables
from lionsim.sweep.train import CellResult, UnitTask, init_worker, train_in_worker, train_unit

POLL_S = 0.2
"""How often the parent looks at the workers' step messages while waiting on them."""


class SweepEvents:
    """What a sweep reports as it goes; the CLI draws it (the library never prints)."""

    def started(self, total: int, finished: int, units: int, steps: int) -> None: ...
    def unit_started(self, key: str) -> None: ...
    def step(self, key: str, step: int, loss: float) -> None: ...
    def cell_finished(self, cell: Cell, summary: pd.DataFrame, finished: int, total: int) -> None: ...
    def unit_finished(self, key: str) -> None: ...


class SweepInterrupted(Exception):
    """Ctrl-C: the finished cells are kept and the CSVs hold exactly them."""

    def __init__(self, finished: int, total: int) -> None:
        super().__init__(f"{finished} of {total} cells finished")
        self.finished, self.total = finished, total


@dataclass(slots=True)
class SweepOutcome:
    summary: pd.DataFrame | None
    """sweep_summary.csv's rows."""
    total: int
    trained: int
    """Training units run by this call (0: every cell was already finished)."""
    already: int = 0
    """Cells finished before this call (a resumed sweep)."""


def unit_tasks(cfg: SweepConfig, done: set[str]) -> list[UnitTask]:
    """A task per unit with an unfinished cell; it books only the unfinished networks."""
    tasks = []
    for unit in cfg.units:
        todo = [(unit.cell(net).id, net) for net in cfg.grid.networks
                if unit.trains_on(net) and unit.cell(net).id not in done]
        if todo:
            tasks.append(UnitTask(key=unit.key, config=cfg.unit_config(unit, todo[0][1]), cells=tuple(todo)))
    return tasks


def run_sweep(cfg: SweepConfig, events: SweepEvents | None = None) -> SweepOutcome:
    events = events or SweepEvents()
    cfg.validate()
    store = CellStore(cfg.out)
    previous = store.read_record()
    if previous is not None:
        cfg.check_resume(previous, store.root / SWEEP_FILE)
    make_dir(store.root)
    store.write_record(cfg.record(previous))
    store.prepare()
    cells = {c.id: c for c in cfg.cells}
    tables = SweepTables(store, list(cells.values()), cfg.bench.baseline, cfg.bench.target_loss)
    for cell_id in store.finished(list(cells)):
        tables.add(cells[cell_id])
    tables.write()  # a run killed between a cell and the CSVs left them one cell behind
    already = len(tables.steps)
    tasks = unit_tasks(cfg, set(tables.steps))
    events.started(len(cells), already, len(tasks), cfg.bench.steps)

    def finish(results: list[CellResult]) -> None:
        for r in results:
            r.meta["config"]["out"] = str(store.cells / r.cell_id)
            store.publish(r.cell_id, r.steps, r.summary, r.meta)
            tables.add(cells[r.cell_id])
            tables.write()
            events.cell_finished(cells[r.cell_id], r.summary, len(tables.steps), len(cells))

    try:
        if cfg.jobs == 1 or len(tasks) <= 1:  # none left (a finished sweep rerun) or one: no pool
            for task in tasks:
                events.unit_started(task.key)
                finish(train_unit(task, events.step))
                events.unit_finished(task.key)
        else:
            _run_pool(tasks, min(cfg.jobs, len(tasks)), events, finish)
    except KeyboardInterrupt:
        # an interrupt between a cell's rename and the CSV rewrite: bring the CSVs level
        for cell_id in store.finished(list(cells)):
            if cell_id not in tables.steps:
                tables.add(cells[cell_id])
        tables.write()
        raise SweepInterrupted(len(tables.steps), len(cells)) from None
    return SweepOutcome(tables.write(), len(cells), len(tasks), already)


def _context():
    """forkserver where there is one: torch is imported once, in the server, not per worker."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["lionsim.sweep.train"])
        return ctx
    return multiprocessing.get_context("spawn")


@contextmanager
def _children_ignore_ctrl_c():
    """Start helper processes with SIGINT ignored, which they inherit through exec (and the
    forkserver passes to the workers it forks): a Ctrl-C in the terminal reaches the whole
    process group, and a process still importing torch would print a traceback. The parent
    alone handles Ctrl-C (it stops the pool). (With spawn, where there is no forkserver,
    workers ignore it from their initializer on.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _run_pool(tasks: list[UnitTask], jobs: int, events: SweepEvents, finish) -> None:
    ctx = _context()
    with _children_ignore_ctrl_c():
        messages = ctx.Queue()  # starts multiprocessing's resource tracker
        if ctx.get_start_method() == "forkserver":
            forkserver.ensure_running()  # the server starts now and imports lionsim while we go on
        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=init_worker, initargs=(messages,))
    pending = {}
    try:
        # workers start as tasks are submitted (the pool queues the rest); the first waits for the
        # forkserver's imports, with Ctrl-C live
        pending = {pool.submit(train_in_worker, task): task for task in tasks}
        while pending:
            done, _ = wait(pending, timeout=POLL_S, return_when=FIRST_COMPLETED)
            _drain(messages, events)
            for future in done:
                task = pending.pop(future)
                try:
                    results = future.result()
                except BrokenProcessPool:
                    raise LionsimError(f"a sweep worker died training {task.key} (killed, or out of memory); "
                                       "the finished cells are kept: rerun to resume") from None
                finish(results)
                events.unit_finished(task.key)
    except BaseException:
        # Ctrl-C, a unit's LionsimError or a bug: stop the others now (they write nothing)
        for future in pending:
            future.cancel()
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            process.terminate()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        messages.close()


def _drain(messages, events: SweepEvents) -> None:
    while True:
        try:
            kind, key, step, loss = messages.get_nowait()
        except queues.Empty:
            return
        if kind == "start":
            events.unit_started(key)
        else:
            events.step(key, step, loss)
