"""Progress of a training command: a rich bar on a terminal, a plain line every few seconds
in a log or a pipe (where a bar shows nothing until the end), on stderr: stdout keeps the results
(`--format csv|json` output stays clean)."""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

LOG_EVERY_S = 5.0
"""Seconds between progress lines off a terminal."""


def loss_text(loss: float | None) -> str:
    """The bar's loss field: blank until a step has finished (never "loss nan" for a run not begun)."""
    return "" if loss is None else f"loss {loss:.4f}"


@contextmanager
def step_progress(console: Console, labels: list[str], steps: int) -> Iterator[Callable]:
    """Yield `update(run, step, loss)`; `run` is a run label or has a `.label`. Off a terminal a
    line goes out when a run takes its first step, then every LOG_EVERY_S and at its last."""
    if console.is_terminal:
        with Progress(TextColumn("{task.description:<34}"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("{task.fields[loss]}", style="progress.data"), TimeElapsedColumn(),
                      console=console, transient=True) as bar:
            tasks = {label: bar.add_task(label, total=steps, loss=loss_text(None)) for label in labels}
            yield lambda run, step, loss: bar.update(tasks[getattr(run, "label", run)], completed=step,
                                                     loss=loss_text(loss))
        return
    start = last = time.monotonic()

    def update(run, step: int, loss: float) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last >= LOG_EVERY_S or step in (1, steps):
            last = now
            label = getattr(run, "label", run)
            print(f"lionsim: run {labels.index(label) + 1}/{len(labels)} {label} step {step}/{steps} "
                  f"loss {loss:.4f} ({now - start:.0f} s)", file=sys.stderr, flush=True)

    yield update
