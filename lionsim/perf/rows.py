"""One figure per row: what was measured, its value and how, printed and written as a tidy CSV."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Figure:
    benchmark: str
    """Which benchmark (imports, codecs, votes, gradients, sim, bench, transports)."""
    case: str
    """What was run, e.g. "pack_signs 1 thread" or "vit N=32"."""
    metric: str
    """What the value is, e.g. "seconds", "ratio", "peak_rss_MB"."""
    value: float
    how: str = ""
    """How it was obtained (median of how many, what was dropped, what loaded the machine)."""


def by_case(figures: list[Figure]) -> dict[str, dict[str, Figure]]:
    """case -> metric -> figure, in the order measured: one printed row per case."""
    rows: dict[str, dict[str, Figure]] = {}
    for f in figures:
        rows.setdefault(f.case, {})[f.metric] = f
    return rows


def write_figures(path: Path, figures: list[Figure]) -> None:
    """All figures to `path`, replaced atomically (a reader never sees half a file)."""
    from lionsim.reports.files import write_atomic

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=[f.name for f in fields(Figure)], lineterminator="\n")
    writer.writeheader()
    writer.writerows(asdict(f) for f in figures)
    write_atomic(path, lambda fh: fh.write(buf.getvalue()))


def median_seconds(fn, repeats: int, warmup: int = 1) -> tuple[float, list[float]]:
    """Median wall seconds of fn() over `repeats` calls after `warmup` dropped calls."""
    import statistics
    import time

    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times


def versus(benchmark: str, case: str, how: str, ours: tuple[str, Callable[[], object]],
           theirs: tuple[str, Callable[[], object]], ratio: str, repeats: int, warmup: int = 1) -> list[Figure]:
    """Two ways to the same answer, each a (metric, call): the median seconds of each (ours timed
    first) and theirs / ours (> 1: ours faster), three figures of `case`."""
    (ours_metric, ours_fn), (theirs_metric, theirs_fn) = ours, theirs
    t_ours, _ = median_seconds(ours_fn, repeats, warmup)
    t_theirs, _ = median_seconds(theirs_fn, repeats, warmup)
    return [Figure(benchmark, case, ours_metric, t_ours, how), Figure(benchmark, case, theirs_metric, t_theirs, how),
            Figure(benchmark, case, ratio, t_theirs / t_ours, how)]

