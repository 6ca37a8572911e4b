"""Stopping a training at a step boundary: SIGINT and SIGTERM alike.

A signal that arrives in the middle of a step would leave the strategy's state half-updated
(a momentum decayed, the replica not yet moved), and a run stopped there could only restart.
So while a bench trains, the first SIGINT or SIGTERM only asks for a stop: the step under way
finishes, the run loop stops before the next one (lionsim.training.loop, every process
agreeing through the step's control exchange, so gloo ranks stop at the same step) and the
run's state at that boundary is kept (lionsim.training.checkpoint), which `lionsim bench
--resume` continues from. A second signal stops at once (KeyboardInterrupt): the finished
steps are still kept, and a resume restarts the run that was under way.

SIGTERM is what CI time-outs, schedulers and `kill` send; it is treated as Ctrl-C is. One
interrupt often arrives twice: timeout(1) signals the command and then its whole process group,
which holds the command again (so does a script's `kill -INT -PGID` after a `kill -INT PID`). A
repeat of the same signal within REPEAT_S of the first is taken for that echo, not for a second
Ctrl-C: it would otherwise turn every `timeout -s INT` into a stop at once, losing the state of
the run under way.

An interrupt that comes once the command's outcome is settled (every run finished and written:
`settle`) changes nothing: it is taken and dropped, and the command ends as it would have (exit
0 for a complete bench). The process's own command line leaves SIGINT and SIGTERM ignored as it
returns: only the interpreter's exit is left, and a signal there would kill it (exit 130 with no
line) over a result already decided.

Every handler lionsim installs is put back as it was found when lionsim returns, normally or by
an exception, and each signal lionsim's handlers take is noted (`TAKEN`): a command run from
Python (`lionsim.cli.main(argv)` in a test, a notebook, a script) hands the first one back to
the caller's own handler when it ends (`command_signals`), so Ctrl-C stops a test suite or a
notebook cell rather than failing one call.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM)
TAKEN: list[int] = []
"""Signals lionsim's handlers took, oldest first; `command_signals` clears what its block added."""
REPEAT_S = 1.0
"""Seconds within which the same signal again is the first one's echo (timeout(1) sends it to the
command and to its process group), not a second Ctrl-C: far longer than the microseconds between
the two sends, far shorter than reading the note and pressing Ctrl-C again."""
SETTLED: list[bool] = []
"""Non-empty once the running command's outcome is settled (`settle`): a signal then changes nothing."""


def settle() -> None:
    """The command's outcome is decided (every run finished and written): from now until it ends,
    SIGINT and SIGTERM are taken (`TAKEN`) and dropped instead of interrupting it."""
    if not SETTLED:
        SETTLED.append(True)


class StopRequest:
    """Whether a stop was asked for (call it: the run loop's `stop`), and by which signal."""

    def __init__(self, also: Callable[[], bool] | None = None) -> None:
        self.signal: int | None = None
        """The first signal received (None: none yet)."""
        self.at: float | None = None
        """When it came (time.monotonic), to tell its echo from a second signal."""
        self._also = also
        """Another source of stop requests (a parent's event, for spawned ranks)."""

    def __call__(self) -> bool:
        return self.signal is not None or (self._also is not None and self._also())

    def ask(self, signum: int = signal.SIGINT) -> None:
        """Ask for a stop as the signal `signum` would (a parent relaying its own)."""
        if self.signal is None:
            self.signal, self.at = signum, time.monotonic()

    def echo(self, signum: int) -> bool:
        """Whether `signum` is the first signal again within REPEAT_S (one interrupt delivered twice)."""
        return signum == self.signal and self.at is not None and time.monotonic() - self.at < REPEAT_S

    @property
    def name(self) -> str:
        return signal.Signals(self.signal).name if self.signal is not None else "a stop request"


@contextmanager
def stop_at_step_boundary(request: StopRequest, note: Callable[[str], None] | None = None,
                          signals: tuple[int, ...] = SIGNALS, kept_for: str = "--resume") -> Iterator[StopRequest]:
    """While the block runs, the first of `signals` (SIGINT, SIGTERM) sets `request` (and `note`s
    a line saying the state is kept for `kept_for`); the second raises KeyboardInterrupt. The
    previous handlers come back afterwards. Off the main thread (where Python delivers no
    signals) the block runs unchanged."""
    if threading.current_thread() is not threading.main_thread():
        yield request
        return

    def handler(signum, frame) -> None:
        TAKEN.append(signum)
        if request.echo(signum):
            return
        if request.signal is not None:
            raise KeyboardInterrupt
        request.ask(signum)
        if note is not None:
            note(f"{signal.Signals(signum).name}: stopping after the step under way "
                 f"(its state is kept for {kept_for}); send it again to stop at once")

    with handlers(signals, handler):
        yield request


@contextmanager
def handlers(signals: tuple[int, ...], handler) -> Iterator[None]:
    """`handler` for each of `signals` while the block runs; the ones found are put back after it,
    however it ends (one installed outside Python, which signal.getsignal reports as None, is
    left in place: Python cannot put it back, and it never replaced it)."""
    previous = {}
    try:
        for s in signals:
            if signal.getsignal(s) is not None:
                previous[s] = signal.signal(s, handler)
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


@contextmanager
def deferred_signals(note: Callable[[str], None] | None = None, signals: tuple[int, ...] = SIGNALS) -> Iterator[list[int]]:
    """While the block runs (publishing what finished: a moment), `signals` are noted (once, with
    `note`, stderr by default) and taken (`TAKEN`, so a caller from Python gets them back) but do
    not interrupt it: cut short, it would leave its files half-written. Yields the list of the
    signals that arrived. Main thread only (elsewhere the block runs unchanged)."""
    arrived: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield arrived
        return
    say = to_stderr if note is None else note

    def handler(signum, frame) -> None:
        TAKEN.append(signum)
        if not arrived:
            say(f"{signal.Signals(signum).name}: writing what finished first (a moment)")
        arrived.append(signum)

    with handlers(signals, handler):
        yield arrived


def to_stderr(line: str) -> None:
    """A note from a signal handler: plain stderr (a rich console may be mid-render)."""
    try:
        sys.stderr.write(f"lionsim: {line}\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed: the note is a courtesy
        pass


def _interrupt(signum, frame) -> None:
    TAKEN.append(signum)
    if not SETTLED:
        raise KeyboardInterrupt


def late_note(request: StopRequest) -> None:
    """After a run that completed although a stop was asked for (the signal came after its last
    step's stop check): say so, as the note the signal printed promised a stop."""
    if request.signal is not None:
        to_stderr(f"{request.name} came after the last step: every run finished and was written "
                  "(nothing to resume)")


@contextmanager
def command_signals(hand_back: bool) -> Iterator[None]:
    """A command's signals: while the block runs, SIGINT and SIGTERM raise KeyboardInterrupt, so
    every command stops on either as on Ctrl-C (one line, exit 2, finished work kept). After it,
    the handlers found are back; with `hand_back` (the command was called from Python, not as
    the process's own command line) the first signal taken during the block is raised again,
    now to the caller's handler: a test suite stops on Ctrl-C (Python's default SIGINT handler
    raises KeyboardInterrupt in the caller), a SIGTERM ends the caller as it would have without
    lionsim. Main thread only (elsewhere Python delivers no signals: the block runs unchanged)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    mark, settled = len(TAKEN), len(SETTLED)
    try:
        with handlers(SIGNALS, _interrupt):
            yield
    finally:
        taken = TAKEN[mark:]
        del TAKEN[mark:], SETTLED[settled:]
        if not hand_back:  # the process's own command line: only the interpreter's exit is left
            for s in SIGNALS:
                signal.signal(s, signal.SIG_IGN)
        elif taken:
            signal.raise_signal(taken[0])
