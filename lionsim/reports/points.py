"""A sweep's points as its notes write them: a worker count whole, a bandwidth to as many digits as
tell it from its neighbours in the sweep (numbers.distinct), and a set of points as the spans of
consecutive swept ones it holds, its unit once at the end ("0.1-1.38 GB/s", "294-384, 1,000
workers"), or where it is many points its ends and its count. Every note on swept points (the
algorithm note, the cap's) writes them here, so a unit is neither left out nor said twice."""

from __future__ import annotations

from lionsim.numbers import distinct, plural, speedup_text

FEW = 6
"""Points a note lists one by one; more read as their spans and count (`points_text`)."""


def unit(variable: str) -> str:
    return "workers" if variable == "workers" else "GB/s"


def labels(values, variable: str) -> list[str]:
    """Each swept value (ascending) as a note or a table writes it: a count whole ("1,024"), a
    bandwidth distinct from its neighbours (numbers.distinct)."""
    if variable == "workers":
        return [f"{int(v):,}" for v in values]
    return distinct(values)


def runs(indices) -> list[tuple[int, int]]:
    """Sorted indices of swept points as (first, last) runs of consecutive ones."""
    spans: list[list[int]] = []
    for i in sorted(indices):
        if spans and spans[-1][1] == i - 1:
            spans[-1][1] = i
        else:
            spans.append([i, i])
    return [(a, b) for a, b in spans]


def spans_text(indices, names: list[str], variable: str) -> str:
    """The swept points at `indices` (into `names`, the sweep's labels) as spans of consecutive
    points, the unit once: "256, 512, 1,024 workers", "0.1-1.38 GB/s"."""
    parts = [names[a] if a == b else f"{names[a]}-{names[b]}" for a, b in runs(indices)]
    return f"{', '.join(parts)} {unit(variable)}"


def points_text(indices, names: list[str], variable: str) -> str:
    """The swept points at `indices`: listed where FEW or fewer ("3.16, 10, 31.6, 100 GB/s"), else
    "the 569 points from 1.97 to 100 GB/s" (one span) or "569 points: 1.97-10, 20-100 GB/s"."""
    indices = sorted(indices)
    if len(indices) <= FEW:
        return f"{', '.join(names[i] for i in indices)} {unit(variable)}"
    spans = runs(indices)
    count = plural(f"{len(indices):,}", "point")
    if len(spans) == 1:
        return f"the {count} from {names[indices[0]]} to {names[indices[-1]]} {unit(variable)}"
    return f"{count}: {spans_text(indices, names, variable)}"


def point_name(at: float, values, variable: str) -> str:
    """Swept value `at` as `labels` writes it among the sweep's `values` (ascending), its unit after
    it ("32 workers", "0.316 GB/s"): the nearest swept value's label (a CSV's float may have moved in
    its last bit), or `at` itself where it is none of them."""
    values = sorted(values)
    names = labels(values, variable)
    near = min(range(len(values)), key=lambda i: abs(values[i] - at), default=None)
    if near is None or not abs(values[near] - at) <= 1e-9 * max(abs(at), 1.0):
        return f"{at:,.0f} {unit(variable)}" if variable == "workers" else f"{at:.4g} {unit(variable)}"
    return f"{names[near]} {unit(variable)}"


def range_words(row, values, variable: str) -> str:
    """A crossover.csv row's speedup range over the sweep in words, each end with its point
    ("1.08x at 8 workers to 4.00x at 32 workers"); "" for a CSV written before the columns, or
    where no point has a figure."""
    low, high = getattr(row, "speedup_worst", float("nan")), getattr(row, "speedup_best", float("nan"))
    if not (low == low and high == high):
        return ""
    return (f"{speedup_text(low)} at {point_name(row.worst_at, values, variable)} to "
            f"{speedup_text(high)} at {point_name(row.best_at, values, variable)}")
