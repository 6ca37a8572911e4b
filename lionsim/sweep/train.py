"""One training unit: train its run once, then book the records on each of its networks.

Runs in the sweep's process (--jobs 1), in a worker process of a pool (--jobs K) or in a Ray
task (--executor ray). It returns the booked results, or the line of a LionsimError or of an
error in the user's code (lionsim.usercode): a result, the unit failed and is not retried. It
writes nothing: only the parent process writes, so a killed worker can never leave a
half-written file.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass
from typing import Callable

import pandas as pd

from lionsim.errors import LionsimError
from lionsim.usercode import UserCodeError
from lionsim.plan import BenchPlan
from lionsim.training.results import Results
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


def train_unit(task: UnitTask, progress: Progress | None = None) -> UnitOutcome:
    """Train once; book on each network as `lionsim bench --network NET` of this run would.

    Everything runs with the unit's --threads, building the workload included (torch_threads)."""
    try:
        with torch_threads(task.plan.training.threads):
            runner = Runner(task.plan)
            step = None if progress is None else (lambda run, i, loss: progress(task.key, i, loss))
            runner.run(step)
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


def init_worker(queue) -> None:
    """Ctrl-C is the parent's to handle (it stops the pool); step messages go to its queue."""
    global _QUEUE
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _QUEUE = queue


def train_in_worker(task: UnitTask) -> UnitOutcome:
    _QUEUE.put(("start", task.key, 0, 0.0))
    return train_unit(task, lambda key, i, loss: _QUEUE.put(("step", key, i, loss)))
