"""Stopping a training at a step boundary: SIGINT and SIGTERM alike.

A signal that arrives in the middle of a step would leave the strategy's state half-updated
(a momentum decayed, the replica not yet moved), and a run stopped there could only restart.
So while a bench trains, the first SIGINT or SIGTERM only asks for a stop: the step under way
finishes, the run loop stops before the next one (lionsim.training.loop, every process
agreeing through the step's control exchange, so gloo ranks stop at the same step) and the
run's state at that boundary is kept (lionsim.training.checkpoint), which `lionsim bench
--resume` continues from. A second signal stops at once (KeyboardInterrupt): the finished
steps are still kept, and a resume restarts the run that was under way.

SIGTERM is what CI time-outs, schedulers and `kill` send; it is treated as Ctrl-C is.
"""

from __future__ import annotations

import signal
import sys
import threading
from contextlib import contextmanager
from typing import Callable, Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopRequest:
    """Whether a stop was asked for (call it: the run loop's `stop`), and by which signal."""

    def __init__(self, also: Callable[[], bool] | None = None) -> None:
        self.signal: int | None = None
        """The first signal received (None: none yet)."""
        self._also = also
        """Another source of stop requests (a parent's event, for spawned ranks)."""

    def __call__(self) -> bool:
        return self.signal is not None or (self._also is not None and self._also())

    def ask(self, signum: int = signal.SIGINT) -> None:
        """Ask for a stop as the signal `signum` would (a parent relaying its own)."""
        if self.signal is None:
            self.signal = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signal).name if self.signal is not None else "a stop request"


@contextmanager
def stop_at_step_boundary(request: StopRequest, note: Callable[[str], None] | None = None,
                          signals: tuple[int, ...] = SIGNALS) -> Iterator[StopRequest]:
    """While the block runs, the first of `signals` (SIGINT, SIGTERM) sets `request` (and `note`s
    a line); the second raises KeyboardInterrupt. The previous handlers come back afterwards.
    Off the main thread (where Python delivers no signals) the block runs unchanged."""
    if threading.current_thread() is not threading.main_thread():
        yield request
        return

    def handler(signum, frame) -> None:
        if request.signal is not None:
            raise KeyboardInterrupt
        request.ask(signum)
        if note is not None:
            note(f"{signal.Signals(signum).name}: stopping after the step under way "
                 "(its state is kept for --resume); send it again to stop at once")

    previous = {s: signal.signal(s, handler) for s in signals}
    try:
        yield request
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def to_stderr(line: str) -> None:
    """A note from a signal handler: plain stderr (a rich console may be mid-render)."""
    try:
        sys.stderr.write(f"lionsim: {line}\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed: the note is a courtesy
        pass


def sigterm_as_interrupt() -> None:
    """From now on SIGTERM raises KeyboardInterrupt, as SIGINT does: every command stops on it
    the way it stops on Ctrl-C (one line, exit 2, finished work kept). Main thread only."""
    if threading.current_thread() is not threading.main_thread():
        return

    def handler(signum, frame) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)
