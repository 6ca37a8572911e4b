"""--executor local: units in this process (--jobs 1) or in a pool of --jobs worker processes.

Workers come from a forkserver that imported lionsim (torch included) once, so a worker starts
in milliseconds; `start_workers()` starts the server before the sweep's own process imports
torch, so the two imports run side by side on two cores instead of one after the other.

The first Ctrl-C (SIGINT or SIGTERM) while units train asks them to stop at their next step
boundary (lionsim.training.stop), as bench does: each unit under way hands back its state, which
the sweep keeps for the rerun, and no further unit starts; a second one stops at once (the state
of the units under way is then lost, and they start over on the rerun).
"""

from __future__ import annotations

import multiprocessing
import queue as queues
import signal
import threading
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from multiprocessing import forkserver

from lionsim.errors import LionsimError

POLL_S = 0.2
"""How often the parent looks at the workers' step messages while waiting on them."""
PRELOAD = ["lionsim.sweep.train"]
"""What the forkserver imports once for every worker."""


def _context():
    """forkserver where there is one: torch is imported once, in the server, not per worker."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)
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
    # SIGTERM too: `timeout`, Slurm and CI send it to the whole group, and a forkserver or resource
    # tracker it killed broke the pool ("a sweep worker died"); they end when this process closes them
    previous = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def start_workers() -> None:
    """Start the forkserver now (it imports lionsim while this process goes on); idempotent."""
    ctx = _context()
    if ctx.get_start_method() == "forkserver":
        with _children_ignore_ctrl_c():
            forkserver.ensure_running()


class LocalExecutor:
    def __init__(self, jobs: int) -> None:
        self.jobs = jobs

    def close(self) -> None:
        pass

    def run(self, tasks: list, events, done) -> None:
        from lionsim.sweep.train import train_unit
        from lionsim.training.stop import StopRequest, late_note, stop_at_step_boundary, to_stderr

        request = StopRequest()
        with stop_at_step_boundary(request, note=to_stderr, kept_for="the rerun"):
            if self.jobs == 1 or len(tasks) <= 1:  # none left (a finished sweep rerun) or one: no pool
                for task in tasks:
                    if request():  # a stop asked for while the last unit finished: start no other
                        raise KeyboardInterrupt
                    events.unit_started(task.key)
                    outcome = train_unit(task, events.step, request)
                    done(task, outcome)
                    if outcome.stopped is not None:  # it handed back its state: the sweep is interrupted
                        raise KeyboardInterrupt
            else:
                _run_pool(sorted(tasks, key=lambda t: -t.cost), min(self.jobs, len(tasks)), events, done, request)
        late_note(request)  # the stop came after the last unit's last step: the sweep completed


def _run_pool(tasks: list, jobs: int, events, done, request) -> None:
    from lionsim.sweep.train import init_worker, train_in_worker

    ctx = _context()
    with _children_ignore_ctrl_c():
        messages = ctx.Queue()  # starts multiprocessing's resource tracker
        stop = ctx.Event()  # the workers ignore Ctrl-C: this process relays its stop to them
        start_workers()
        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=init_worker,
                                   initargs=(messages, stop))
    pending, cut = {}, False  # cut: a unit stopped under way or never started
    try:
        # workers start as tasks are submitted (the pool queues the rest); the first waits for the
        # forkserver's imports, with Ctrl-C live
        pending = {pool.submit(train_in_worker, task): task for task in tasks}
        while pending:
            finished, _ = wait(pending, timeout=POLL_S, return_when=FIRST_COMPLETED)
            _drain(messages, events)
            if request() and not stop.is_set():
                stop.set()  # units under way stop at their next step and hand back their state
                for future in [f for f in pending if f.cancel()]:  # the queued ones never start
                    pending.pop(future)
                    cut = True
            for future in finished:
                task = pending.pop(future)
                try:
                    outcome = future.result()
                except BrokenProcessPool:
                    raise LionsimError(f"a sweep worker died training {task.key} (killed, or out of memory); "
                                       "the finished cells are kept: rerun to resume") from None
                done(task, outcome)
                cut = cut or outcome.stopped is not None
        if cut:  # else every unit finished before it saw the stop: the sweep is complete
            raise KeyboardInterrupt
    except BaseException:
        # Ctrl-C or a bug: stop the others now (they write nothing)
        for future in pending:
            future.cancel()
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            process.kill()  # SIGKILL: the workers ignore SIGTERM (init_worker), which the parent relays
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        messages.close()


def _drain(messages, events) -> None:
    while True:
        try:
            kind, key, step, loss = messages.get_nowait()
        except queues.Empty:
            return
        if kind == "start":
            events.unit_started(key)
        else:
            events.step(key, step, loss)
