"""--executor ray: each training unit is a Ray task, on the cluster at --ray-address (or
RAY_ADDRESS), or on a Ray instance started here when neither is given.

- A task asks for `--threads` CPUs (its torch threads) and runs lionsim.sweep.train.train_unit,
  as a local worker does; lionsim (the same version) must be installed on every node.
- A task lost with its node (or its worker process) is retried by Ray, MAX_RETRIES times; a
  unit that fails in lionsim returns its error as a result (train_unit), so Ray never retries
  it: the sweep records it failed once.
- --jobs K keeps at most K tasks in flight (default: all, and the cluster's CPUs decide).
- Progress: each task puts its start and its steps (at most one every PROGRESS_S) on a small
  queue actor that lives on this node; the sweep's process drains it while it waits.
- Ctrl-C cancels the outstanding tasks; every cell that finished is already on disk.
"""

from __future__ import annotations

import logging
import os
import socket
import time

import ray
from ray.exceptions import RayActorError, RayError, RayTaskError
from ray.util.queue import Empty, Queue
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from lionsim.errors import LionsimError
from lionsim.sweep.train import UnitOutcome, UnitTask, train_unit

MAX_RETRIES = 3
"""Times Ray reruns a task whose node or worker process died (Ray's `max_retries`)."""
POLL_S = 0.2
"""How often the sweep's process looks at the progress queue while tasks run."""
PROGRESS_S = 0.5
"""A task reports a step at most this often (each report is a round trip to the queue actor)."""
CONNECT_S = 5.0
"""How long the address may take to answer before the sweep fails (ray.init itself would wait minutes)."""


@ray.remote(max_retries=MAX_RETRIES)
def _train(task: UnitTask, progress: Queue) -> UnitOutcome:
    last = 0.0

    def report(message: tuple) -> None:
        try:
            progress.put_nowait(message)
        except RayActorError:  # the queue's node is gone: the driver is too, and nobody reads progress
            pass

    def step(key: str, i: int, loss: float) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last >= PROGRESS_S or i == task.plan.steps:
            last = now
            report(("step", key, i, loss))

    report(("start", task.key, 0, 0.0))
    return train_unit(task, step)


def _reachable(address: str) -> None:
    """A TCP connection to the head's port, or one line saying why not (before ray.init hangs)."""
    target = address.removeprefix("ray://")
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        raise LionsimError(f"bad --ray-address {address!r}; accepted: HOST:PORT of a Ray head (ray start --head "
                           "prints it), ray://HOST:PORT, or auto")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_S).close()
    except OSError as e:
        raise LionsimError(f"cannot reach the Ray cluster at --ray-address {address}: {e.strerror or e}; "
                           "start one with `ray start --head` or give its head's address") from None


class RayExecutor:
    def __init__(self, jobs: int | None, started_here: bool) -> None:
        self.jobs = jobs
        self.started_here = started_here
        self.closed = False

    @classmethod
    def connect(cls, address: str | None, jobs: int | None) -> RayExecutor:
        address = address or os.environ.get("RAY_ADDRESS") or None
        if address not in (None, "auto", "local"):
            _reachable(address)
        try:
            ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False,
                     include_dashboard=False if address is None else None)
        except (ConnectionError, RuntimeError, ValueError) as e:
            raise LionsimError(f"cannot connect to the Ray cluster at {address or 'a new local instance'}: "
                               f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
        return cls(jobs, started_here=address is None)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            ray.shutdown()  # disconnects; a local instance started here stops with it

    def run(self, tasks: list[UnitTask], events, done) -> None:
        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        progress = Queue(actor_options={"num_cpus": 0, "scheduling_strategy": here})
        todo = sorted(tasks, key=lambda t: -t.cost)  # longest first: the last to start is a short one
        limit = self.jobs or len(todo)
        pending: dict = {}
        try:
            while todo or pending:
                while todo and len(pending) < limit:
                    task = todo.pop(0)
                    pending[_train.options(num_cpus=task.plan.training.threads).remote(task, progress)] = task
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=POLL_S)
                _drain(progress, events)
                for ref in ready:
                    task = pending.pop(ref)
                    done(task, _outcome(ref, task))
            _drain(progress, events)
        except BaseException:
            for ref in pending:  # Ctrl-C or a failure: stop the rest now (they write nothing)
                ray.cancel(ref, force=True)
            raise
        finally:
            ray.kill(progress.actor)


def _outcome(ref, task: UnitTask) -> UnitOutcome:
    try:
        return ray.get(ref)
    except RayTaskError:
        raise  # a bug in lionsim (a LionsimError comes back as an outcome): its traceback, not a line
    except RayError as e:
        raise LionsimError(f"the Ray task training {task.key} was lost {MAX_RETRIES + 1} times "
                           f"({type(e).__name__}); the finished cells are kept: rerun to resume") from None


def _drain(progress: Queue, events) -> None:
    while True:
        try:
            kind, key, step, loss = progress.get_nowait()
        except Empty:
            return
        if kind == "start":
            events.unit_started(key)
        else:
            events.step(key, step, loss)
