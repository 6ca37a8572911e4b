"""`lionsim bench --backend gloo|nccl --ranks R` on one machine: lionsim starts the R ranks
itself and watches them.

The parent picks a free loopback port, starts R processes (multiprocessing's spawn: a fresh
interpreter each, as torchrun would) and relays rank 0's progress. Each rank sends a
heartbeat every HEARTBEAT_S with the run and step it is in, from a thread that keeps beating
while the rank waits in a collective, so the parent tells a dead rank (its process exited)
and a hung one (no heartbeat for the timeout) from the ranks merely waiting for it, and names
it. The rank named dead or hung is killed at once (SIGKILL reaches a stopped process too), so
a hang ends about --timeout after it began; the others get a moment to end by themselves,
then every rank is stopped (no process is left behind) and one line reported. Rank 0 writes
the outputs of a run that succeeds; after a failure the parent, which outlives every rank
(rank 0 included), publishes every finished step rank 0 staged and journaled, with run.json
marked failed and the line (lionsim.launch.journal).

SIGINT or SIGTERM to the parent (Ctrl-C, a CI time-out) asks the ranks to stop (an event every
rank reads at each step's control exchange, so all stop after the same step), waits for them
while still watching for a dead or hung one, and publishes what finished with each rank's state
for `--resume`, marked interrupted; a second signal stops the ranks at once, and so does the
first one before any step finished (nothing to keep: a rank still importing torch would make
the user wait for nothing). The parent alone takes the signals: a terminal's Ctrl-C reaches the
whole process group, and a rank that took it itself would die wherever it happened to be
(importing torch, publishing after its last step) and be reported as a failed rank. So ranks
start with SIGINT and SIGTERM blocked (the mask survives exec) and ignore them from their first
line (`_immune`). While the parent publishes what finished (`finalize`), further signals are
noted and deferred: publishing takes a moment, and cut short it would leave --out half-written.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

from lionsim.errors import LionsimError
from lionsim.group.env import Rendezvous, free_port
from lionsim.launch.journal import finalize
from lionsim.reports.publish import RunDir
from lionsim.reports.resuming import Unfinished, continues
from lionsim.training.stop import (SIGNALS, StopRequest, deferred_signals, late_note, settle, stop_at_step_boundary,
                                   to_stderr)
from lionsim.usercode import EXIT_CODE, kept_line

if TYPE_CHECKING:  # annotations only: the plan arrives built
    from lionsim.plan import BenchPlan

HEARTBEAT_S = 0.5
"""Seconds between a rank's heartbeats."""
GRACE_S = 15.0
"""Seconds the parent waits, once a rank failed (and was killed), for the others to end."""
STARTUP_S = 120.0
"""Seconds a rank may take to send its first heartbeat (a fresh interpreter importing torch on
a busy machine takes several); after that the --timeout applies."""


@dataclass(slots=True)
class RankState:
    label: str | None = None
    step: int = 0
    beat: float = field(default_factory=time.monotonic)
    started: bool = False
    """Whether a first message arrived (until then the startup allowance applies)."""
    error: tuple[str, str] | None = None
    """(kind, message) a rank reported before exiting: input | user (its own code raised) |
    interrupted | failed."""
    stopped: tuple[str, int] | None = None
    """(run, last finished step) where a stop asked for ended the rank, its state kept."""
    finished: int = 0
    """Steps this session finished (rank 0 reports them)."""


@dataclass(slots=True)
class Outcome:
    """How the ranks ended."""

    ok: bool
    message: str = ""
    """One line for the user when not ok."""
    code: int = 0
    """Exit code: 1 a failed run (dead or hung rank), 2 bad input or interrupted, 3 the user's code
    raised (lionsim.usercode)."""


def _child(rank: int, ranks: int, port: int, plan: BenchPlan, out: Path, messages, stop, keeping: Unfinished) -> None:
    """A rank's process: run it, beat, and report how it ended (then exit with its code). `plan`
    arrived as its record and was rebuilt once, its plug-ins loaded (BenchPlan.__reduce__)."""
    import sys

    _immune()
    from lionsim.launch.rank import RankFailure, run_rank
    from lionsim.training.loop import RunStopped
    from lionsim.usercode import UserCodeError

    state = {"label": None, "step": 0}

    def beat() -> None:
        while True:
            messages.put(("beat", rank, state["label"], state["step"]))
            time.sleep(HEARTBEAT_S)

    threading.Thread(target=beat, daemon=True).start()

    def where(label: str, step: int) -> None:
        state["label"], state["step"] = label, step

    def progress(label: str, step: int, loss: float) -> None:
        messages.put(("progress", rank, label, step, loss))

    rv = Rendezvous(rank=rank, world_size=ranks, local_rank=rank, addr="127.0.0.1", port=port,
                    source="a loopback port lionsim picked for the ranks it started")
    try:
        run_rank(plan, out, rv, progress=progress, where=where, publish_failures=False,  # the parent publishes
                 keeping=keeping, stop=stop.is_set, own_signals=False)  # the parent relays its signals
    except LionsimError as e:
        messages.put(("error", rank, "input", str(e)))
        sys.exit(2)
    except RunStopped as e:  # at a step boundary, its state kept
        messages.put(("stopped", rank, e.checkpoint.label, e.checkpoint.step))
        messages.put(("error", rank, "interrupted", "interrupted"))
        sys.exit(130)
    except KeyboardInterrupt:
        messages.put(("error", rank, "interrupted", "interrupted"))
        sys.exit(130)
    except RankFailure as e:
        messages.put(("error", rank, "failed", str(e)))
        sys.exit(1)
    except UserCodeError as e:
        messages.put(("error", rank, "user", str(e)))
        sys.exit(EXIT_CODE)
    messages.put(("done", rank))


def spawn_ranks(plan: BenchPlan, out: Path, ranks: int,
                progress: Callable[[str, int, float], None] | None = None,
                keeping: Unfinished | None = None) -> Outcome:
    """Start `ranks` ranks of the bench, relay progress, and watch them until they end; what does
    not complete is published where `keeping` says (None: a new run into --out)."""
    keeping = keeping or Unfinished(out, out)
    resume = keeping.resumed
    ctx = mp.get_context("spawn")
    messages = ctx.Queue()
    stop = ctx.Event()
    port = free_port()
    procs = [ctx.Process(target=_child, args=(r, ranks, port, plan, out, messages, stop, keeping), daemon=True,
                         name=f"lionsim-rank{r}") for r in range(ranks)]
    states = [RankState() for _ in range(ranks)]
    request = StopRequest()

    class AtOnce(Exception):
        """The first signal came before any step finished: nothing to wait for."""

    def relay() -> None:  # the parent's signal becomes the ranks' stop request
        if request() and not stop.is_set():
            if not any(s.finished for s in states):
                raise AtOnce
            stop.set()

    try:
        with stop_at_step_boundary(request, note=to_stderr):
            with blocked(SIGNALS):  # each rank inherits the mask, and ignores them from its first line
                for p in procs:
                    p.start()
            culprit = _watch(procs, states, messages, plan.backend.timeout, progress, relay)
    except (KeyboardInterrupt, AtOnce):  # a second signal, or nothing finished yet: the ranks stop at once
        for p in procs:
            if p.pid is not None:
                p.kill()
        with deferred_signals():
            _stop([p for p in procs if p.pid is not None], grace=5)
            kept = finalize(out, "interrupted", "interrupted", keeping.home, resume)
        how = f"interrupted ({request.name})" if request.signal is not None else "interrupted"
        if resume and not any(s.finished for s in states):
            return Outcome(ok=False, code=2, message=f"{how} before a new step finished: {keeping.home} is kept as it "
                                                     f"was; {keeping.command} continues it")
        return Outcome(ok=False, code=2, message=f"{how}: {_kept(kept, keeping)}" + (
            f"; {continues(command=keeping.command)}" if kept else ""))
    finally:
        with deferred_signals():
            _stop([p for p in procs if p.pid is not None], grace=GRACE_S)
    with deferred_signals():  # every rank has ended: what finished is published whole
        outcome = _outcome(procs, states, culprit, keeping, plan.labels, request)
        if outcome.ok:  # rank 0 published every run: a stop asked for after the last step stopped nothing
            settle()
            late_note(request)
        return outcome


def _immune() -> None:
    """A spawned rank's first line: SIGINT and SIGTERM ignored (the parent relays them as a stop
    request, or kills the rank), then unblocked (they were blocked from before exec, so none
    arrived in between: one pending is dropped by the ignore)."""
    for s in SIGNALS:
        signal.signal(s, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)


@contextmanager
def blocked(signals) -> Iterator[None]:
    """`signals` blocked on this thread while the block runs (processes started in it inherit the
    mask); one that arrives meanwhile is delivered when the block ends."""
    signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, signals)


def _watch(procs, states: list[RankState], messages, timeout_s: float, progress,
           poll: Callable[[], object] = lambda: None) -> tuple[int, str] | None:
    """Relay messages until every rank has exited; return (rank, what happened) for the first
    rank that died or hung, None if none did. `poll()` runs between checks (a stop to relay)."""
    while True:
        poll()
        _drain(messages, states, progress, wait=0.2)
        now = time.monotonic()
        for rank, (p, s) in enumerate(zip(procs, states)):
            if p.exitcode is not None and p.exitcode != 0 and s.error is None:
                _drain(messages, states, progress, wait=0.5)  # its last words may still be in the pipe
                if s.error is None:
                    how = f"killed by signal {-p.exitcode}" if p.exitcode < 0 else f"exited with code {p.exitcode}"
                    return rank, f"died ({how})"
            if p.exitcode is None and s.started and now - s.beat > timeout_s:
                p.kill()  # at once: a stopped process never ends by itself, and its peers wait on it
                return rank, f"stopped responding (no heartbeat for {timeout_s:g} s)"
            if p.exitcode is None and not s.started and now - s.beat > STARTUP_S:
                p.kill()
                return rank, f"did not start (no heartbeat in {STARTUP_S:g} s)"
        raised = any(p.exitcode is not None and s.error is not None and s.error[0] == "user"
                     for p, s in zip(procs, states))
        if raised or all(p.exitcode is not None for p in procs):
            return None  # all ended, or a rank's user code raised: the others end by themselves or are stopped


def _drain(messages, states: list[RankState], progress, wait: float) -> None:
    deadline = time.monotonic() + wait
    while True:
        try:
            msg = messages.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return
        kind, rank = msg[0], msg[1]
        s = states[rank]
        s.beat, s.started = time.monotonic(), True
        if kind == "beat":
            s.label, s.step = msg[2], msg[3]
        elif kind == "progress":
            s.label, s.step = msg[2], msg[3] + 1  # rank 0 finished this step: it is in the next
            s.finished += 1
            if progress is not None:
                progress(msg[2], msg[3], msg[4])
        elif kind == "error":
            s.error = (msg[2], msg[3])
        elif kind == "stopped":
            s.stopped = (msg[2], msg[3])


def _stop(procs, grace: float) -> None:
    """Wait up to `grace` for ranks to end by themselves, then terminate and kill the rest."""
    deadline = time.monotonic() + grace
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
    for p in procs:
        if p.is_alive():
            p.kill()
    for p in procs:
        p.join(5)


def _outcome(procs, states: list[RankState], culprit: tuple[int, str] | None, keeping: Unfinished,
             labels: list[str], request: StopRequest) -> Outcome:
    out = keeping.out
    inputs = [s.error[1] for s in states if s.error and s.error[0] == "input"]
    if inputs:
        RunDir(out).discard()
        return Outcome(ok=False, code=2, message=inputs[0])
    if culprit is None and all(p.exitcode == 0 for p in procs):
        return Outcome(ok=True)
    users = [s.error[1] for s in states if s.error and s.error[0] == "user"]
    if users:  # the cause: the peers it left waiting report a failed collective, or died of it
        kept = finalize(out, "failed", users[0], keeping.home, keeping.resumed)
        return Outcome(ok=False, code=EXIT_CODE,
                       message=kept_line(users[0], keeping.kept(kept) if kept else None, keeping.command))
    if culprit is not None:
        rank, what = culprit
        # ranks move in lockstep (every step has collectives): the furthest any rank got is where it stopped
        s = max(states, key=lambda st: (labels.index(st.label) if st.label in labels else -1, st.step))
        at = f"at step {s.step} of {s.label}" if s.label else "before the first step"
        line, status, code = f"rank {rank} {what} {at}", "failed", 1
    elif any(s.error and s.error[0] == "interrupted" for s in states):
        how = f"interrupted ({request.name})" if request.signal is not None else "interrupted"
        line, status, code = how, "interrupted", 2
    else:
        line = next((f"rank {r}: {s.error[1]}" for r, s in enumerate(states) if s.error), "a rank failed")
        status, code = "failed", 1
    kept = finalize(out, status, line, keeping.home, keeping.resumed)  # every rank has ended: rank 0 writes no more
    if code == 2 and kept and all(s.stopped for s in states):
        label, step = states[0].stopped
        return Outcome(ok=False, code=2, message=f"{line}: {_kept(kept, keeping)}; "
                                                 f"{continues(label, step, keeping.command)}")
    if code == 2 and kept:
        return Outcome(ok=False, code=2, message=f"{line}: {_kept(kept, keeping)}; {continues(command=keeping.command)}")
    sep = ": " if code == 2 else "; "
    return Outcome(ok=False, code=code, message=f"{line}{sep}{_kept(kept, keeping)}")


def _kept(kept: int, keeping: Unfinished) -> str:
    return keeping.kept(kept) if kept else "no steps had finished"
