"""The rows report.md's tables of an estimate sweep show (step time, speedup, bytes, p99, time to
target), and their labels.

A sweep of MAX_ROWS points or fewer shows every point. A denser one (--sweep
bandwidth=0.1:100:1000) printed a row per point: 3,000 lines, most of them past NCCL's cap and
alike. There a table shows a readable subset and says so (`note`), sweep.csv keeping every point:
- consecutive points past the cap whose rows print the same in every table (the cap's figures:
  their link is priced at it) are one row, "1.97-100 (capped, 569 points)"; a flip of NCCL's
  algorithm among them that changes a printed step starts another;
- every such row, the first and last points, and both points either side of each crossover (the
  step's and the time to target's) are shown;
- the rest are the points nearest MAX_ROWS targets spaced geometrically over the sweep (a
  bandwidth or worker sweep is geometric), so the rows stay about MAX_ROWS.
Labels tell a row from its neighbours in the table (numbers.distinct: "0.1", "0.1007" where 3
digits wrote "0.101" twice); a worker count is whole.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lionsim.reports.capped import MARK
from lionsim.reports.points import labels

WORD = MARK.strip("()")
"""A merged row's mark: "1.97-100 (capped, 569 points)"."""

MAX_ROWS = 30
"""Rows a table of a sweep shows at most, the points it must show (crossovers, the cap) aside."""


@dataclass(frozen=True, slots=True)
class Row:
    """A row of the tables: the swept points from `first` to `last` (`count` of them; one but for
    a run of capped points with the same figures), `capped` past the library's cap."""

    first: float
    last: float
    count: int
    capped: bool


@dataclass(frozen=True, slots=True)
class Shown:
    """The rows every table of one report shows, and the sweep's number of points."""

    rows: tuple[Row, ...]
    points: int
    crossed: bool = False
    """Whether a crossover's neighbours were kept (the note says so only then)."""

    @property
    def every(self) -> bool:
        """Whether each point is a row of its own."""
        return len(self.rows) == self.points

    def labelled(self, variable: str) -> list[tuple[float, str]]:
        """(the swept value whose figures a row prints, its label) for each row."""
        ends = [v for row in self.rows for v in ((row.first,) if row.count == 1 else (row.first, row.last))]
        names = iter(labels(ends, variable))
        out = []
        for row in self.rows:
            first = next(names)
            if row.count == 1:
                out.append((row.first, first + (f" {MARK}" if row.capped else "")))
            else:
                out.append((row.first, f"{first}-{next(names)} ({WORD}, {row.count:,} points)"))
        return out

    def note(self, first: bool = True) -> str:
        """The line under a table of a dense sweep ("" where every point is a row): which points it
        shows, and that sweep.csv holds them all; `first`: the table that says it in full."""
        if self.every:
            return ""
        if not first:
            return f"The same {len(self.rows)} rows as the step time's; sweep.csv has every point."
        shown = sum(row.count for row in self.rows if row.count == 1)
        merged = [row for row in self.rows if row.count > 1]
        sampled = shown < self.points - sum(row.count for row in merged)
        kept = ["the ends", *(["the points either side of each crossover"] if self.crossed else []),
                *(["the first past the cap"] if any(row.capped for row in self.rows) else [])]
        what = (f"{shown} of the sweep's {self.points:,} points (spaced geometrically, with {', '.join(kept[:-1])}"
                f"{' and ' if len(kept) > 1 else ''}{kept[-1]})" if sampled
                else f"every one of the sweep's {self.points:,} points")
        rows = "one more row" if len(merged) == 1 else f"{len(merged)} more rows"
        collapsed = (f"; {rows} of consecutive {WORD} points, each standing for those whose figures read the same "
                     "(the link is priced at the cap at each)" if merged else "")
        return f"Rows: {what}{collapsed}. sweep.csv has every point."


def _crossing_points(values: list[float], crossings) -> set[int]:
    """Indices of the swept points either side of each crossover in `crossings` (crossover.csv's
    and to_target_crossover.csv's frames; None or empty: none)."""
    found: set[int] = set()
    for table in crossings:
        if table is None or table.empty:
            continue
        for at in pd.to_numeric(table["crossover"], errors="coerce").dropna():
            right = int(np.searchsorted(values, at, side="left"))
            found |= {i for i in (right - 1, right) if 0 <= i < len(values)}
            if right < len(values) and values[right] == at:  # a swept point itself: its other neighbour too
                found |= {i for i in (right + 1,) if i < len(values)}
    return found


def shown_rows(frame: pd.DataFrame, cells: dict, cap: float = math.nan, crossings=()) -> Shown:
    """The rows of `frame` (sweep.csv: sweep_value, strategy, transport and the columns of `cells`)
    the tables show (module doc); `cells`: each column a table prints and how it prints a value
    (two capped points whose texts are the same are one row); `cap` the library's cap
    (capped.capped_values; NaN: none); `crossings` the crossover frames whose crossovers must show."""
    values = sorted(float(v) for v in frame["sweep_value"].unique())
    capped = [math.isfinite(cap) and v > cap for v in values]
    if len(values) <= MAX_ROWS:
        return Shown(tuple(Row(v, v, 1, c) for v, c in zip(values, capped)), len(values))
    columns = [c for c in cells if c in frame.columns]
    by_point = frame.sort_values(["strategy", "transport"], kind="stable").groupby("sweep_value", sort=True)
    printed = [tuple(cells[c](v) for c in columns for v in group[c].tolist()) for _, group in by_point]
    groups: list[list[int]] = []  # consecutive capped points that print the same: one group
    for i in range(len(values)):
        if groups and capped[i] and capped[groups[-1][-1]] and printed[i] == printed[groups[-1][-1]]:
            groups[-1].append(i)
        else:
            groups.append([i])
    where = {i: g for g, members in enumerate(groups) for i in members}
    must = {0, len(groups) - 1} | {g for g, members in enumerate(groups) if len(members) > 1}
    crossing = _crossing_points(values, crossings)
    must |= {where[i] for i in crossing}
    must |= {where[capped.index(True)]} if any(capped) else set()
    single = [g for g in range(len(groups)) if len(groups[g]) == 1]
    if len(groups) > MAX_ROWS and single:  # a target nearest a point shown already adds no row
        logs = np.log([values[groups[g][0]] for g in single])
        picked = {single[int(np.abs(logs - t).argmin())]
                  for t in np.linspace(logs[0], logs[-1], max(MAX_ROWS - len(must - set(single)), 2))}
    else:
        picked = set(single)
    rows = tuple(Row(values[groups[g][0]], values[groups[g][-1]], len(groups[g]), capped[groups[g][0]])
                 for g in sorted(must | picked))
    return Shown(rows, len(values), bool(crossing))


def every_point(values, cap: float = math.nan) -> Shown:
    """Each of `values` a row of its own (a table given no selection), those past `cap` marked."""
    values = sorted(float(v) for v in values)
    return Shown(tuple(Row(v, v, 1, math.isfinite(cap) and v > cap) for v in values), len(values))

