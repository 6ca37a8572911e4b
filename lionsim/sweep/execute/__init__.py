"""Where a sweep's training units run: `--executor local|ray`.

    local   this process (--jobs 1) or a pool of --jobs worker processes on this machine
    ray     a Ray task per unit on a Ray cluster (the optional extra `lionsim[ray]`)

An executor runs units and hands each outcome back to the sweep's process as it arrives; it
never writes: the sweep's process alone publishes cells, so every executor leaves the same
files (lionsim.sweep.runner). Ray is imported only when `--executor ray` is chosen.
"""

from __future__ import annotations

from typing import Callable, Protocol

from lionsim.errors import LionsimError
from lionsim.ranges import refusal, span
from lionsim.registry import did_you_mean, match_name

EXECUTORS = ("local", "ray")
RAY_INSTALL = 'pip install -e ".[ray]" (in a lionsim checkout) or pip install "ray>=2.9"'
"""How to get Ray, for the one line that says it is missing."""


class Events(Protocol):
    """The progress an executor reports (lionsim.sweep.runner.SweepEvents)."""

    def unit_started(self, key: str) -> None: ...
    def step(self, key: str, step: int, loss: float) -> None: ...


class Executor(Protocol):
    def run(self, tasks: list, events: Events, done: Callable) -> None:
        """Run every task (lionsim.sweep.train.UnitTask); call done(task, outcome) in this
        process as each finishes. Ctrl-C (KeyboardInterrupt) stops the others and propagates."""

    def close(self) -> None:
        """Release what open() took (processes, a Ray connection); safe to call twice."""


MAX_JOBS = 1024
"""The most units a sweep trains at once: each is a process importing torch (hundreds of MB), so
more than the machine's cores only wait on each other; the same top as --threads."""
JOBS = span(1, MAX_JOBS, whole=True, why="each a process importing torch; more than the cores only wait")


def check_jobs(jobs: int | None) -> None:
    """--jobs: None (the executor's default) or 1..MAX_JOBS units at once; checked before torch loads."""
    if jobs is not None and not 1 <= jobs <= MAX_JOBS:
        raise LionsimError(refusal("--jobs", jobs, JOBS))


def canonical_executor(name: str) -> str:
    found = match_name(name, EXECUTORS)
    if found is None:
        raise LionsimError(f"unknown executor {name!r}; choose from: {', '.join(EXECUTORS)}{did_you_mean(name, EXECUTORS)}")
    return found


def open_executor(name: str, *, jobs: int | None, ray_address: str | None) -> Executor:
    """The executor, ready to run: a Ray cluster is connected (or a local one started) here, so an
    unreachable address or a missing Ray fails before the sweep writes anything."""
    if canonical_executor(name) == "local":
        from lionsim.sweep.execute.local import LocalExecutor

        return LocalExecutor(jobs or 1)
    try:
        from lionsim.sweep.execute.ray import RayExecutor
    except ImportError as e:
        if e.name is None or e.name.split(".")[0] != "ray":
            raise
        raise LionsimError(f"--executor ray needs Ray, which is not installed: {RAY_INSTALL}") from None
    return RayExecutor.connect(ray_address, jobs)
