"""A stopwatch with named sections, so one step's time splits into encode/decode/update."""

from __future__ import annotations

import time
from collections import defaultdict
from contextlib import contextmanager
from typing import Iterator


class Clock:
    """Accumulates wall time per section name; `section` nests freely."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    @contextmanager
    def section(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] += time.perf_counter() - start

    def take(self) -> dict[str, float]:
        """Return the totals and start again."""
        out, self.seconds = dict(self.seconds), defaultdict(float)
        return out
