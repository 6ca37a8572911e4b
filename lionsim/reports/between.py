"""A speedup between two neighbouring bandwidths of a sweep, one rule for every crossover
(estimate's crossover.csv and table, sweep.png, a `lionsim sweep`'s speedup plots) and the line
drawn through them, so a crossover's marker lies on its run's line.

The step-time model prices a step as a fixed part plus bytes over bandwidth (a + B/b), so between
two swept points each run's time (its step time, or time to target: steps x step time) is
interpolated linearly in 1/bandwidth; the baseline's time is the run's x its speedup, interpolated
likewise, and the speedup between the points is their ratio. Where it crosses `level` the
baseline's time equals level x the run's: linear in 1/b, so the crossing is closed form. Exact
where neither latency, overlap nor the library's choice changes between the two points. Straight
segments on a log-x, linear-y axis (or power laws: log speedup linear in log b) crossed 1 elsewhere.
Without the run's times (an older CSV) they are taken as equal: the speedup linear in 1/b.

Which segment crosses is decided here alone (crossing_points), for estimate's crossovers and a
`lionsim sweep`'s plots alike, on the line curve() draws: only two neighbouring points that both
have a figure (a point without one breaks the line), the segment where speedup - level changes
sign or reaches 0. The tie rule: a speedup within TIE of 1.00x is level, neither a win nor a loss.
A run that loses at one point and wins at a later one (level points, or points without a figure,
between them) crosses 1 once there: on the segment nearest the winning point, so from the
crossover to the winning side the line never reads below 1 again; every such change of side is
a crossing, however often the speedup turns. Where a win meets level points that reach no loss
(a run that never loses but wins at some points and ties at others; or, in a run that also loses,
ties between two wins or between a win and the sweep's end) the winning span has an edge where the
line leaves the tie band (1 + TIE) between a winning and a level neighbour; beside a point
without a figure, at the winning point.
Over worker counts the same sides (sides) and segment (Crossing.segment) decide, and the crossover
is a whole count on that segment: estimate prices the counts between its two ends, a bench sweep
names the winning end where the two are neighbouring counts, else the span between them.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from lionsim.numbers import TIE

TIMES = {"speedup": "step_s", "to_target_speedup": "time_to_target_s", "time_to_target_speedup": "time_to_target_s"}
"""The run's own time behind each speedup column (estimate's sweep.csv, a sweep's summary)."""
SAMPLES = 240
"""Points a run's line is drawn with over the whole sweep (at least 8 a segment): a curve to the eye."""


def crossing(x0: float, x1: float, s0: float, s1: float, t0: float = 1.0, t1: float = 1.0,
             level: float = 1.0) -> float:
    """The bandwidth between x0 and x1 where the speedup (s0, s1 there; the run's times t0, t1)
    crosses `level` (module doc); s0 - level and s1 - level of opposite signs."""
    u0, u1 = 1.0 / x0, 1.0 / x1
    f0, f1 = t0 * (s0 - level), t1 * (s1 - level)  # baseline's time - level x run's, linear in 1/b
    return float(1.0 / (u0 + (u1 - u0) * f0 / (f0 - f1)))


def speedup_at(xs, x0: float, x1: float, s0: float, s1: float, t0: float = 1.0, t1: float = 1.0) -> np.ndarray:
    """The speedup at bandwidths `xs` between x0 and x1 (module doc)."""
    w = (1.0 / np.asarray(xs, dtype=float) - 1.0 / x0) / (1.0 / x1 - 1.0 / x0)
    return (s0 * t0 + w * (s1 * t1 - s0 * t0)) / (t0 + w * (t1 - t0))


def curve(x, speedup, times=None) -> tuple[list[float], list[float]]:
    """A run's line over sorted bandwidths `x` (speedups, the run's `times` or None), drawn as the
    crossings are computed: each segment sampled geometrically, the swept points on it; a point
    without a figure (NaN) breaks the line, as matplotlib breaks a straight one."""
    x, s = np.asarray(x, dtype=float), np.asarray(speedup, dtype=float)
    t = np.ones_like(x) if times is None else np.asarray(times, dtype=float)
    per = max(8, SAMPLES // max(1, len(x) - 1))
    xs, ys = [float(x[0])] if len(x) else [], [float(s[0])] if len(x) else []
    for i in range(len(x) - 1):
        ok = all(np.isfinite(v) and v > 0 for v in (x[i], x[i + 1], s[i], s[i + 1], t[i], t[i + 1]))
        inner = np.geomspace(x[i], x[i + 1], per + 1)[1:-1] if ok and x[i + 1] != x[i] else np.array([])
        xs += [float(v) for v in inner] + [float(x[i + 1])]
        ys += [float(v) for v in speedup_at(inner, x[i], x[i + 1], s[i], s[i + 1], t[i], t[i + 1])] + [float(s[i + 1])]
    return xs, ys


def marks_at(xs, x, every: tuple[int, int] | None = None) -> list[int]:
    """markevery for a curve drawn through `xs`: the indices of the swept points `x` on it,
    thinned as style.mark_every's (start, step) `every` thins a line's own points."""
    swept = {float(v) for v in x}
    at = [i for i, v in enumerate(xs) if v in swept]
    return at if every is None else at[every[0]::every[1]]


class Crossing(NamedTuple):
    """One crossover of a run's line (crossing_points)."""
    at: float
    """The bandwidth; NaN where no drawn segment joins the two sides (points between lack a figure)."""
    wins: str
    """"above" or "below": the side of `at` on which the run wins."""
    i: int
    """The swept point before it: a loss or a win (a win or a level point for an edge)."""
    j: int
    """The swept point after it, on the other side."""
    level: float
    """The speedup the line reads at `at`: 1.0 for a crossing, 1 + TIE for an edge (module doc)."""
    segment: int = -1
    """The swept point that starts the drawn segment `at` lies on (it ends at the next one); -1 where
    none does (a gap: `at` is NaN for a crossing, the winning point itself for an edge)."""


def sides(speedup) -> np.ndarray:
    """The tie rule at each speedup: 1 a win (above 1 + TIE), -1 a loss (below 1 - TIE), 0 level
    (within TIE of 1.00x) or no figure (NaN)."""
    s = np.asarray(speedup, dtype=float)
    return np.where(s > 1 + TIE, 1, np.where(s < 1 - TIE, -1, 0))


def crossing_points(x, speedup, times=None) -> list[Crossing]:
    """Each crossover of the line curve() draws through sorted bandwidths `x` (speedups, the run's
    `times` or None), the tie rule and the segment chosen as the module doc says."""
    x, s = np.asarray(x, dtype=float), np.asarray(speedup, dtype=float)
    t = np.ones_like(x) if times is None else np.asarray(times, dtype=float)
    has = np.isfinite(x) & (x > 0) & np.isfinite(s) & (s > 0) & np.isfinite(t) & (t > 0)
    side = np.where(has, sides(s), 0)
    joined = [bool(has[k] and has[k + 1] and x[k + 1] != x[k]) for k in range(len(x) - 1)]

    def at(k: int, level: float) -> float:
        return crossing(x[k], x[k + 1], s[k], s[k + 1], t[k], t[k + 1], level=level)

    def edge(k: int) -> Crossing:  # k and k + 1: one wins, the other ties or has no figure
        win = k if side[k] > 0 else k + 1
        at_edge = at(k, 1 + TIE) if joined[k] else float(x[win])  # the line stops at the winning point
        return Crossing(at_edge, "above" if win == k + 1 else "below", k, k + 1,
                        1 + TIE if joined[k] else float(s[win]), k if joined[k] else -1)

    out = []
    if (side < 0).any() and (side > 0).any():
        sided = [k for k in range(len(x)) if side[k] != 0]
        # wins beside ties that reach no loss (before the first sided point, after the last, between
        # two wins): the edges of the winning spans there, as a run that never loses has them
        if side[sided[0]] > 0 and has[:sided[0]].any():
            out.append(edge(sided[0] - 1))
        for i, j in zip(sided, sided[1:]):
            if side[i] == side[j]:
                if side[i] > 0 and has[i + 1:j].any():
                    out += [edge(i), edge(j - 1)]
                continue
            # segments reaching 1 (not lying on it); the one nearest the winning point
            ks = [k for k in range(i, j) if joined[k] and (s[k] - 1) * (s[k + 1] - 1) <= 0
                  and not s[k] == s[k + 1] == 1]
            k = (ks[-1] if side[j] > 0 else ks[0]) if ks else None
            out.append(Crossing(math.nan if k is None else at(k, 1.0), "above" if side[j] > 0 else "below", i, j, 1.0,
                                -1 if k is None else k))
        if side[sided[-1]] > 0 and has[sided[-1] + 1:].any():
            out.append(edge(sided[-1]))
    elif (side > 0).any() and ((side == 0) & has).any():  # wins and ties, never loses: the span's edges
        out = [edge(k) for k in range(len(x) - 1) if (side[k] > 0) != (side[k + 1] > 0)]
    return out
