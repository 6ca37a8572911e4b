"""A stopwatch with named sections, so one step's time splits into encode/decode/update.

Sections nest exclusively: time spent in an inner section is booked there and not also to
the outer one (a strategy's encode that issues a collective books that as "collective").
A section may book a share of its time (`scale`): work done for all w workers of this
process that counts per worker (e.g. a momentum copy of [w, P] rows) books 1/w of it.

On CUDA kernels run asynchronously: perf_counter alone would book their launch, not their
work. A Clock of a CUDA device synchronises it at every section boundary, so each section
holds the kernels it launched; on a CPU it never touches CUDA (nothing to wait for, no cost).

Work that another worker of the same step runs alike, which one process does for several of
them in turn (the g slots of a hier: transport on the simulator), is timed as usual but sits in
`replica()`: a kernel count reads `counted()`, so such work is counted once, as one worker
launches it.

Besides the totals the clock keeps each stretch of time as it was booked, (section, start,
end) in perf_counter seconds (`spans`): the measured timeline `--trace` draws. Exclusive
nesting makes them a timeline without overlaps (an inner section splits its outer one).
"""

from __future__ import annotations

import time
from collections import defaultdict
from contextlib import contextmanager
from typing import Any, Iterator

DEFAULT_WARMUP = 3
"""--warmup-steps unless given: leading steps whose measured times the medians leave out (a shorter
run takes fewer: lionsim.config.bench). Here, not in lionsim.reports.summary, so the configuration
reads it without pandas."""


class Clock:
    def __init__(self, device: Any = None) -> None:
        """`device`: a torch.device or its name ("cuda:0"); None or a CPU: no synchronising."""
        self.seconds: dict[str, float] = defaultdict(float)
        self.spans: list[tuple[str, float, float]] = []
        self._replicas = 0
        self._stack: list[tuple[str, float]] = []
        self._since = 0.0
        self._sync = None
        if getattr(device, "type", str(device).split(":")[0]) == "cuda":
            import torch  # only here: a CPU clock needs no torch

            self._sync = lambda: torch.cuda.synchronize(device)

    def _book(self) -> None:
        if self._sync is not None:
            self._sync()
        now = time.perf_counter()
        if self._stack:
            name, scale = self._stack[-1]
            self.seconds[name] += (now - self._since) * scale
            self.spans.append((name, self._since, now))
        self._since = now

    @contextmanager
    def section(self, name: str, scale: float = 1.0) -> Iterator[None]:
        self._book()
        self._stack.append((name, scale))
        try:
            yield
        finally:
            self._book()
            self._stack.pop()

    def current(self) -> str:
        """The innermost open section ("" outside any)."""
        return self._stack[-1][0] if self._stack else ""

    @contextmanager
    def replica(self) -> Iterator[None]:
        """Work another worker runs alike (module doc): timed, not counted again."""
        self._replicas += 1
        try:
            yield
        finally:
            self._replicas -= 1

    def counted(self) -> str | None:
        """The section a kernel launched now is counted in: current(), or None inside replica()."""
        return None if self._replicas else self.current()

    def take(self) -> dict[str, float]:
        """Return the totals and start again."""
        out, self.seconds = dict(self.seconds), defaultdict(float)
        return out

    def take_spans(self) -> list[tuple[str, float, float]]:
        """Return the stretches booked since the last call (section, start, end) and start again."""
        out, self.spans = self.spans, []
        return out
