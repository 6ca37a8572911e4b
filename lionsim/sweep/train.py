"""One training unit: train its run once, then book the records on each of its networks.

Runs in the sweep's process (--jobs 1), in a worker process of a pool (--jobs K) or in a Ray
task (--executor ray). It returns the booked results, or the line of a LionsimError or of an
error in the user's code (lionsim.usercode): a result, the unit failed and is not retried; or,
stopped at a step boundary (`stop`), its state there, which the sweep's process keeps and the
rerun's unit continues from (lionsim.sweep.unit_state). It writes nothing: only the parent
process writes, so a killed worker can never leave a half-written file.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd

from lionsim.errors import LionsimError
from lionsim.usercode import UserCodeError
from lionsim.plan import BenchPlan
from lionsim.sweep import unit_state
from lionsim.training.checkpoint import RunCheckpoint
from lionsim.training.loop import RunStopped
from lionsim.training.results import Results
from lionsim.training.resume import Resume
from lionsim.training.runner import Runner
from lionsim.training.threads import torch_threads

Progress = Callable[[str, int, float], None]
"""progress(unit key, step, loss)."""


@dataclass(frozen=True, slots=True)
class UnitTask:
    """What a worker needs to train one unit (picklable: its plan travels as its record)."""

    key: str
    """The unit's name in progress messages."""
    plan: BenchPlan
    """The unit's bench: its one run, on the first network of `cells`."""
    cells: tuple[tuple[str, str], ...]
    """(cell id, network) to book, the unit's unfinished cells."""
    root: Path | None = None
    """The sweep root (or shard part) that keeps the unit's state when it stops (None: none kept)."""

    @property
    def cost(self) -> int:
        """Parallel workers take units longest first, so the last to start is a short one
        (lionsim.sweep.cells.Unit.cost)."""
        return self.plan.workload.workers


@dataclass(frozen=True, slots=True)
class CellResult:
    cell_id: str
    steps: pd.DataFrame
    summary: pd.DataFrame
    meta: dict


@dataclass(frozen=True, slots=True)
class UnitOutcome:
    """What a unit gives back: its cells' results, or why it failed."""

    key: str
    results: tuple[CellResult, ...] = ()
    error: str | None = None
    """The LionsimError's or UserCodeError's line when the unit failed (then `results` is empty)."""
    stopped: RunCheckpoint | None = None
    """The unit's state when `stop` ended it at a step boundary (then `results` is empty)."""


def train_unit(task: UnitTask, progress: Progress | None = None, stop=None) -> UnitOutcome:
    """Train once (from the unit's kept state, if a stopped sweep left one); book on each network
    as `lionsim bench --network NET` of this run would. `stop()` true ends the training at the
    next step boundary: the outcome is the state there.

    Everything runs with the unit's --threads, building the workload included (torch_threads)."""
    try:
        with torch_threads(task.plan.training.threads):
            state = None if task.root is None else unit_state.kept(task.root, task.key, task.plan)
            # as `bench --resume` continues a run (its run.json notes the resume); no finished runs to keep
            runner = Runner(task.plan, resume=None if state is None else Resume(meta={}, checkpoint=state))
            step = None if progress is None else (lambda run, i, loss: progress(task.key, i, loss))
            try:
                runner.run(step, stop=stop)
            except RunStopped:
                return UnitOutcome(task.key, stopped=runner.state_to_keep())
            results = []
            for cell_id, network in task.cells:
                # the records hold what was trained; the network only prices them (Results.booking),
                # and run.json's config names the network its times are for
                result = Results(runner, plan=task.plan.with_network(network)).result()
                results.append(CellResult(cell_id, result.steps, result.summary, result.meta))
    except (LionsimError, UserCodeError) as e:  # bad input, or the user's code raised (lionsim.usercode)
        return UnitOutcome(task.key, error=str(e))
    return UnitOutcome(task.key, tuple(results))


# --- in a pool's worker process ---

_QUEUE = None
"""The parent's queue for step messages, set once per worker process."""


_STOP = None
"""The parent's event asking every worker to stop at its next step boundary."""


def init_worker(queue, stop=None) -> None:
    """Ctrl-C and SIGTERM are the parent's to handle (it sets `stop`, or kills the pool); step messages
    go to its queue. `timeout`, Slurm and CI send SIGTERM to the whole process group: a worker it killed
    lost its unit's steps, where the parent stops each unit at a step boundary, as for Ctrl-C."""
    global _QUEUE, _STOP
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if stop is not None:  # a parent that relays its stop (local.py); it ends the workers with SIGKILL
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _QUEUE, _STOP = queue, stop


def train_in_worker(task: UnitTask) -> UnitOutcome:
    _QUEUE.put(("start", task.key, 0, 0.0))
    stop = None if _STOP is None else _STOP.is_set
    return train_unit(task, lambda key, i, loss: _QUEUE.put(("step", key, i, loss)), stop)
