"""`lionsim estimate --sweep`: the estimate over a range of worker counts or link bandwidths,
and the crossovers where a strategy starts (or stops) beating the baseline.

    workers=8,16,32          the listed worker counts
    workers=8:1024:20        20 counts spaced geometrically from 8 to 1024, rounded to the
                             counts a list takes (any within one node, whole nodes beyond it;
                             counts that meet priced once, said on stderr)
    bandwidth=1,10,100       the inter link's effective bandwidth, GB/s (per node on a
                             two-level network; its efficiency folded in, so set to 1)
    bandwidth=0.1:100:1000   1000 bandwidths spaced geometrically from 0.1 to 100 GB/s

A crossover lies between two neighbouring sweep points where speedup - 1 changes sign, and
`wins` says on which side the strategy is faster ("above" or "below" the crossover). Which
points win, lose or tie (within TIE of 1.00x), and which segment crosses, is between.py's rule
for both variables (lionsim.reports.between.crossing_points).

- workers: a count is an integer, and on a two-level network beyond one node a whole number
  of nodes. The crossover is found by bisecting the valid counts between the two ends of that
  segment (each probe is one more estimate): it is the first count past 1.00x on the winning
  side, that is the smallest count from which the strategy wins ("above") or the largest up
  to which it still wins ("below").
- bandwidth: continuous; between the two points each run's time is interpolated linearly in
  1/bandwidth, the model's form (a + bytes/bandwidth: lionsim.reports.between), and the
  crossover is where the baseline's and the run's meet; sweep.png draws the line the same way.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd

from lionsim.errors import LionsimError
from lionsim.estimate.algorithm_note import algorithm_notes
from lionsim.estimate.config import EstimateConfig, Resolved, resolve
from lionsim.estimate.table import columns, estimate_rows
from lionsim.network import GB, Network
from lionsim.numbers import TIE, in_words, plural
from lionsim.estimate.plain import Sweep, parse_sweep
from lionsim.estimate.point_notes import PointNote, group
from lionsim.estimate.point_notes import entries as point_entries
from lionsim.estimate.point_notes import unmeasured_entries
from lionsim.reports.between import TIMES, crossing, crossing_points, sides
from lionsim.reports.capped import CAPPED
from lionsim.reports.columns import NETWORK_GBPS
from lionsim.whole import Text
from lionsim.whole_nodes import check_workers, fills_nodes, neighbour_count
CROSSOVER_COLUMNS = ["strategy", "transport", "variable", "crossover", "wins", "speedup_first", "speedup_last",
                     "speedup_best", "best_at", "speedup_worst", "worst_at",
                     "loses_at", "wins_where", "speedup_at_crossover", "speedup_at_loses", CAPPED]
"""speedup_first, speedup_last: the speedups at the sweep's two ends; speedup_best, speedup_worst: the
highest and lowest at any swept point, best_at and worst_at that point's swept value (the lowest of
equals), so a peak between the ends is never hidden (extremes); NaN where no point has a figure.
loses_at: on a workers sweep, the valid count beside the crossover on the losing side (the
speedup crosses 1 between the two; losing_neighbour); NaN on a bandwidth sweep (interpolated).
wins_where: where a run that wins "partly" wins, in words (winning_ranges); "" for the others.
speedup_at_crossover, speedup_at_loses: on a workers sweep, the speedups priced at those two counts,
which sweep.png's line passes through (between sparse swept counts a straight segment would cross
1 elsewhere than the priced counts do); NaN on a bandwidth sweep.
capped_above_GBps: on a bandwidth sweep, the library's cap (NCCL over sockets: 1.96 GB/s a node)
where a swept bandwidth passes it: the points above it are priced at the cap, repeating its step
times (except where NCCL's choice flips on the link's rate, algorithm_note); NaN where none passes it."""


def with_bandwidth(network: Network, gbps: float) -> Network:
    """`network` whose inter link achieves `gbps` GB/s (efficiency folded in)."""
    inter = dataclasses.replace(network.inter, bandwidth_Bps=gbps * GB, efficiency=1.0)
    return dataclasses.replace(network, inter=inter)


def check_crosses_nodes(r: Resolved, given: str, does: str = "varies the inter-node link") -> None:
    """`given` (--sweep bandwidth=..., --need utilisation=U) varies the inter link between nodes: refused
    where every worker sits on one node, where it would change nothing (every point the same step, or
    0 GB/s needed by every run). A flat network (one worker a node) crosses from two workers on."""
    per_node = r.network.workers_per_node
    if r.workers > per_node:
        return
    fit = f"{plural(r.workers, 'worker')} fit{'s' * (r.workers == 1)}"
    raise LionsimError(f"{given} {does}, and {fit} on one node of {r.network.name} "
                       f"({plural(per_node, 'worker')} per node): nothing crosses nodes; it needs more workers than one "
                       f"node holds, e.g. --workers {2 * per_node}")


def sweep_rows(r: Resolved, sweep: Sweep, memo: dict | None = None, notes: list | None = None) -> list[dict]:
    """Estimate rows for every sweep value; each row carries `sweep_value`. `notes`: a list that
    takes what an estimate at each point notes (lionsim.estimate.point_notes.entries)."""
    rows = []
    memo = {} if memo is None else memo  # a whole run's kinds do not change with the bandwidth
    for i, value in enumerate(sweep.values):
        workers, network = ((int(value), r.network) if sweep.variable == "workers"
                            else (r.workers, with_bandwidth(r.network, value)))
        point = estimate_rows(r, workers, network, memo)
        if notes is not None:
            notes += point_entries(r, i, workers, network, point, sweep.variable)
        for row in point:
            row["sweep_value"] = value
            row[NETWORK_GBPS] = r.network.inter.bandwidth_Bps * r.network.inter.efficiency / GB
        rows.extend(point)
    return rows


@dataclass(frozen=True, slots=True)
class Swept:
    """An estimate over a sweep: what varied, every row, and where each run crosses the baseline."""

    sweep: Sweep
    rows: pd.DataFrame
    crossings: pd.DataFrame
    """Crossovers of the step's speedup (CROSSOVER_COLUMNS)."""
    to_target: pd.DataFrame | None = None
    """With --from-run: crossovers of to_target_speedup, the time to target's."""
    algorithm_notes: tuple[str, ...] = ()
    """A line per run whose exchange's algorithm changes across the sweep (algorithm_note)."""
    point_notes: tuple[PointNote, ...] = ()
    """What an estimate at each swept point notes, each note once with its runs and points
    (lionsim.estimate.point_notes)."""

    def __iter__(self):
        """Unpacks as (sweep, rows, crossings), as run_sweep's tuple did."""
        return iter((self.sweep, self.rows, self.crossings))

    def __getitem__(self, index: int):
        return tuple(self)[index]


def run_sweep(cfg: EstimateConfig, spec: str, r: Resolved | None = None) -> Swept:
    """The estimate over `--sweep spec` of cfg, its crossovers (and with --from-run the time to target's)."""
    r = resolve(cfg) if r is None else r  # the command's plan, resolved once
    sweep = parse_sweep(spec, r.network.workers_per_node)
    if sweep.variable == "bandwidth":
        check_crosses_nodes(r, f"--sweep {spec}")
    if sweep.variable == "workers":
        for w in sweep.values:  # every count fills whole nodes, refused naming the --sweep typed
            check_workers(int(w), r.network.workers_per_node, r.network.name, "--sweep", Text(spec))
    memo: dict = {}
    found: list = []
    records = sweep_rows(r, sweep, memo, found)
    found += unmeasured_entries(r, sweep.values, sweep.variable, cfg.network)  # once a count, not once a point
    frame = pd.DataFrame.from_records(records, columns=["sweep_value", *columns(records), NETWORK_GBPS])
    to_target = crossovers(frame, sweep, r, TO_TARGET, memo) if r.convergence is not None else None
    crossings = crossovers(frame, sweep, r, memo=memo)
    for crossed in (c for c in (crossings, to_target) if c is not None):
        crossed[CAPPED] = capped_above(frame, sweep)  # points past the library's cap repeat its figures
    return Swept(sweep, frame, crossings, to_target,
                 tuple(algorithm_notes(frame, sweep.variable)), tuple(group(found)))


def capped_above(rows: pd.DataFrame, sweep: Sweep) -> float:
    """The library's cap in GB/s a node (fabric_cap_GBps: NCCL over sockets) where a swept bandwidth
    passes it, else NaN: above it the link is priced at the cap (CROSSOVER_COLUMNS)."""
    cap = float(rows["fabric_cap_GBps"].iloc[0]) if "fabric_cap_GBps" in rows.columns and len(rows) else math.nan
    passes = sweep.variable == "bandwidth" and math.isfinite(cap) and max(sweep.values) > cap
    return cap if passes else math.nan


def worker_counts(after: int, upto: int, workers_per_node: int) -> list[int]:
    """The valid worker counts in (after, upto]: those that fill nodes (lionsim.whole_nodes)."""
    return [w for w in range(after + 1, upto + 1) if fills_nodes(w, workers_per_node)]


def _speedup_at(r: Resolved, label: str, workers: int, column: str = "speedup", memo: dict | None = None) -> float:
    rows = estimate_rows(r, workers, r.network, memo)
    return float(next(row for row in rows if f"{row['strategy']}@{row['transport']}" == label)[column])


def _wins_at(r: Resolved, label: str, workers: int, column: str = "speedup", memo: dict | None = None,
             level: float = 1.0) -> bool:
    return _speedup_at(r, label, workers, column, memo) > level


def worker_crossover(r: Resolved, label: str, after: int, upto: int, wins_above: bool, column: str = "speedup",
                     memo: dict | None = None, level: float = 1.0) -> int:
    """The first valid count on the winning side (a speedup above `level`: 1.00x where it crosses,
    1 + TIE where it leaves the tie band) between sweep points `after` (one side) and `upto` (the
    other): bisection keeps `after`'s side on the left and `upto`'s on the right."""
    counts = worker_counts(after, upto, r.network.workers_per_node)
    left, right = -1, len(counts) - 1  # counts[-1] is `upto`; index -1 stands for `after`
    upto_side = _wins_at(r, label, upto, column, memo, level)
    while right - left > 1:
        mid = (left + right) // 2
        if _wins_at(r, label, counts[mid], column, memo, level) == upto_side:
            right = mid
        else:
            left = mid
    if wins_above:  # the strategy wins on `upto`'s side: the first winning count
        return counts[right]
    return counts[left] if left >= 0 else after  # wins on `after`'s side: the last winning count


def tie_edge(r: Resolved, label: str, column: str, memo: dict | None, wins_at: float, ties_at: float) -> float:
    """winning_spans' `refine` over workers: the winning count next to the ties, between swept counts
    `wins_at` and `ties_at`, where the speedup leaves the tie band (1 + TIE)."""
    low, high = sorted((int(wins_at), int(ties_at)))
    return float(worker_crossover(r, label, low, high, wins_at == high, column, memo, 1 + TIE))


def losing_neighbour(crossover: int, wins_above: bool, workers_per_node: int) -> int:
    """The valid count beside a worker crossover on the losing side: the one before the first
    winning count ("above"), or after the last ("below"); whole nodes beyond one node."""
    return neighbour_count(crossover, workers_per_node, up=not wins_above)


TO_TARGET = "to_target_speedup"
"""The column of the time to target's crossovers (--from-run)."""


def crossovers(frame: pd.DataFrame, sweep: Sweep, r: Resolved | None = None, column: str = "speedup",
               memo: dict | None = None) -> pd.DataFrame:
    """One row per crossover of each non-baseline run (module doc) in `column` (the step's speedup,
    or with --from-run TO_TARGET, the time to target's); a run that never changes sides gets one
    row with crossover NaN and wins "everywhere" (a win at every point), "nowhere" (no win at any),
    "level" (every speedup within TIE of 1.00x: it ties everywhere), or "no figure" where it has no
    time to target at any point; one that ties at some points and wins at the others (a tie is a tie,
    never counted a win) gets wins "partly" and a row per edge of the spans where it wins
    (winning_spans), the edge its crossover, wins_where the spans in words. Worker
    crossovers need `r` (the resolved config) to price the counts between sweep points."""
    records = []
    for (strategy, transport), rows in frame.groupby(["strategy", "transport"], sort=False):
        if f"{strategy}@{transport}" == rows["baseline"].iloc[0]:
            continue
        rows = rows.sort_values("sweep_value")
        # the speedups at the sweep's ends, NaN where there is no time to target (--from-run's rules)
        values, speedups = rows["sweep_value"].to_numpy(dtype=float), rows[column].to_numpy(dtype=float)
        base = {"strategy": strategy, "transport": transport, "variable": sweep.variable,
                "speedup_first": float(rows[column].iloc[0]), "speedup_last": float(rows[column].iloc[-1]),
                **extremes(values, speedups)}
        blank = rows.loc[rows[column].isna(), "sweep_value"].tolist()
        if not np.isfinite(speedups).any():  # no time to target at any point
            records.append({**base, "crossover": math.nan, "wins": "no figure", "wins_where": ""})
            continue
        times = rows[TIMES[column]].to_numpy(dtype=float) if TIMES.get(column) in rows.columns else None
        # which segment crosses, and the tie rule (within TIE of 1.00x is level): between.py's, on the
        # line sweep.png draws; a point without a figure breaks it
        label = f"{strategy}@{transport}"
        turns = crossing_points(values, speedups, times)
        found = [] if not any(turn.level == 1.0 for turn in turns) else [
            _turn_record(turn, values, sweep, r, label, column, memo) for turn in turns]
        if len(found) > 1:  # it turns more than once: every row says where it wins, loses and ties
            # a crossing across a gap (NaN over bandwidth) bounds its span at its winning point
            edges = [(row["crossover"] if math.isfinite(row["crossover"])
                      else float(values[turn.j if turn.wins == "above" else turn.i]), turn.wins)
                     for row, turn in zip(found, turns)]
            where = turning_words(values, speedups, edges, sweep, blank)
            found = [{**found_row, "wins_where": where} for found_row in found]
        records += [{**base, **found_row} for found_row in found]
        figured = speedups[np.isfinite(speedups)]
        sided = [v for v in sides(figured) if v]  # the tie rule's: wins and losses, no level points
        if not found:
            wins = ("level" if not sided else "nowhere" if sided[0] < 0
                    else "everywhere" if len(sided) == len(figured) else "partly")
            if wins != "partly":
                priced = rows.loc[rows[column].notna(), "sweep_value"].tolist()
                records.append({**base, "crossover": math.nan, "wins": wins,
                                "wins_where": only_where_priced(wins, priced, blank, sweep)})
                continue
            refine = (partial(tie_edge, r, f"{strategy}@{transport}", column, memo)
                      if sweep.variable == "workers" and r is not None else None)
            spans = winning_spans(values, speedups, sweep, refine, times)
            where = winning_ranges(spans, sweep)
            # each edge where it starts (or stops) winning is its crossover: one row an edge, as a run
            # that crosses 1 twice has two, every one marked on sweep.png; no losing side, so no loses_at
            for edge in sorted(e for span in spans for e in span if e is not None):
                records.append({**base, "crossover": edge, "wins": wins, "loses_at": math.nan, "wins_where": where})
    return pd.DataFrame.from_records(records, columns=CROSSOVER_COLUMNS)


def _turn_record(turn, values: np.ndarray, sweep: Sweep, r: Resolved | None, label: str, column: str,
                 memo: dict | None) -> dict:
    """A crossover.csv row's crossing fields for one of between.crossing_points' turns of a run that
    wins and loses: a crossing of 1.00x (level 1), or an edge where a win meets ties reaching no loss.
    Over workers the counts between the two swept ones are priced for the whole count."""
    if sweep.variable != "workers":
        return {"crossover": turn.at, "wins": turn.wins, "loses_at": math.nan, "wins_where": ""}
    if r is None:
        raise ValueError("worker crossovers need the resolved config")
    if turn.level != 1.0:  # an edge: the winning count next to the ties (at the winning point beside a gap)
        win, other = (turn.i, turn.j) if turn.wins == "below" else (turn.j, turn.i)
        at = (tie_edge(r, label, column, memo, values[win], values[other]) if turn.segment >= 0
              else float(values[win]))
        return {"crossover": at, "wins": turn.wins, "loses_at": math.nan, "wins_where": ""}
    # on the segment the drawn line crosses 1 on (between.py's, ties included), else across the gap
    low, high = (turn.segment, turn.segment + 1) if turn.segment >= 0 else (turn.i, turn.j)
    at = float(worker_crossover(r, label, int(values[low]), int(values[high]), turn.wins == "above", column, memo))
    loses = float(losing_neighbour(int(at), turn.wins == "above", r.network.workers_per_node))
    return {"crossover": at, "wins": turn.wins, "loses_at": loses, "wins_where": "",
            "speedup_at_crossover": _speedup_at(r, label, int(at), column, memo),
            "speedup_at_loses": _speedup_at(r, label, int(loses), column, memo)}


def turning_words(values: np.ndarray, speedups: np.ndarray, edges: list[tuple[float, str]], sweep: Sweep,
                  blank: list | None = None) -> str:
    """Where a run that turns more than once wins, from its crossovers `edges` (value, wins) in order:
    the spans between them, each from an "above" to the next "below" (the sweep's ends where none),
    then the swept points where it loses and ties: "wins from 16 to 24 and from 48 to 64 workers;
    loses at 8, ties at 32 workers". Every change of side is said: one verdict, never "from 16" alone."""
    unit = sweep.unit

    def at(x: float) -> str:
        return f"{x:,.0f}" if sweep.variable == "workers" else f"{x:.4g}"

    spans, start = [], float(values[0])  # a run that wins at the first point wins from there
    for x, wins in edges:
        if wins == "above":
            start = x
        elif start is not None:
            spans.append((start, x))
            start = None
        else:  # two "below" in a row cannot follow from between.py; kept whole rather than guessed
            spans.append((x, x))
    if start is not None and edges[-1][1] == "above":
        spans.append((start, float(values[-1])))
    words = [f"at {at(a)}" if a == b else f"from {at(a)} to {at(b)}" for a, b in spans]
    side = sides(speedups)
    said = [f"wins {in_words(words)} {unit}"]
    for value, name in ((-1, "loses"), (0, "ties")):
        points = [values[k] for k in range(len(values)) if side[k] == value and np.isfinite(speedups[k])]
        if points:
            said.append(f"{name} at {in_words(point_runs(points, values, at))}")
    where = "; ".join(said[:1] + [", ".join(said[1:]) + f" {unit}"] if len(said) > 1 else said)
    if blank:
        where += f"; no time to target at {in_words([at(v) for v in blank])}"
    return where


def point_runs(points: list, values: np.ndarray, at) -> list[str]:
    """Swept `points` in words, three or more neighbouring swept values as one run "a-b" (a dense
    sweep's hundred points would read as a list)."""
    index = [int(np.flatnonzero(values == p)[0]) for p in points]
    runs: list[list[int]] = []
    for k in index:
        if runs and k == runs[-1][-1] + 1:
            runs[-1].append(k)
        else:
            runs.append([k])
    out = []
    for run in runs:
        out += ([f"{at(values[run[0]])}-{at(values[run[-1]])}"] if len(run) > 2 else [at(values[k]) for k in run])
    return out


def extremes(values: np.ndarray, speedups: np.ndarray) -> dict[str, float]:
    """The highest and lowest speedup over the swept points and where (CROSSOVER_COLUMNS): the first
    point of equals, the points without a figure (NaN) left out; all NaN where none has one."""
    finite = np.isfinite(speedups)
    if not finite.any():
        return {"speedup_best": math.nan, "best_at": math.nan, "speedup_worst": math.nan, "worst_at": math.nan}
    best = int(np.argmax(np.where(finite, speedups, -np.inf)))
    worst = int(np.argmin(np.where(finite, speedups, np.inf)))
    return {"speedup_best": float(speedups[best]), "best_at": float(values[best]),
            "speedup_worst": float(speedups[worst]), "worst_at": float(values[worst])}


def only_where_priced(wins: str, priced: list, blank: list, sweep: Sweep) -> str:
    """A run that never crosses, said over the points that have a figure where some have none (a time
    to target past a measured miss, or under other options than the run trained with:
    lionsim.estimate.to_target): "later at 2 workers; no time to target at 8 and 32 workers", not
    "later everywhere" ("" where every point has a figure)."""
    if not blank:
        return ""

    def at(values: list) -> str:
        shown = [f"{v:,.0f}" if sweep.variable == "workers" else f"{v:.4g}" for v in values]
        return f"{in_words(shown)} {sweep.unit}"

    side = {"everywhere": "sooner", "nowhere": "later", "level": "level"}[wins]
    return f"{side} at {at(priced)}; no time to target at {at(blank)}"


def winning_spans(values: np.ndarray, speedups: np.ndarray, sweep: Sweep, refine=None, times=None) -> list[
        tuple[float | None, float | None]]:
    """The (start, end) of each span where a run that wins at some sweep points and ties at the others
    ("partly": no loss, or it would cross) wins, None where a span reaches the sweep's end. Over
    bandwidth each edge is interpolated as a crossover is (lionsim.reports.between, with the run's
    `times` where given) to where the speedup leaves the tie band (1 + TIE); over workers
    `refine(wins_at, ties_at)` prices the counts between the two swept ones for the winning count
    next to the ties, as a crossover's are
    (crossovers passes it; without it, the swept count that wins). Each edge is a crossover; beside
    a point without a figure (NaN), where the line stops, the winning point itself (between.py)."""
    speedups = np.asarray(speedups, dtype=float)
    wins = sides(speedups) > 0

    def between(i: int, j: int) -> float:  # i wins, j ties (or has no figure)
        if not np.isfinite(speedups[j]):
            return float(values[i])
        if sweep.variable == "workers":
            return float(values[i]) if refine is None else refine(values[i], values[j])
        t = (times[i], times[j]) if times is not None else (1.0, 1.0)
        return crossing(values[i], values[j], speedups[i], speedups[j], *t, level=1 + TIE)

    spans = []  # (start, end): None where the span reaches the sweep's end
    i = 0
    while i < len(wins):
        if not wins[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(wins) and wins[j + 1]:
            j += 1
        spans.append((None if i == 0 else between(i, i - 1), None if j == len(wins) - 1 else between(j, j + 1)))
        i = j + 1
    return spans


def winning_ranges(spans: list[tuple[float | None, float | None]], sweep: Sweep) -> str:
    """winning_spans' `spans` in words: "wins below 0.402 GB/s, ties above", "wins from 16 to 64
    workers, ties elsewhere"."""
    unit = sweep.unit

    def at(x: float) -> str:
        return f"{x:,.0f}" if sweep.variable == "workers" else f"{x:.4g}"

    if sweep.variable == "workers":
        words = [f"up to {at(b)}" if a is None else f"from {at(a)}" if b is None else f"from {at(a)} to {at(b)}"
                 for a, b in spans]
    else:
        words = [f"below {at(b)}" if a is None else f"above {at(a)}" if b is None else f"from {at(a)} to {at(b)}"
                 for a, b in spans]
    if len(spans) == 1 and spans[0][0] is None:
        rest = "ties above"
    elif len(spans) == 1 and spans[0][1] is None:
        rest = "ties below"
    else:
        rest = "ties elsewhere"
    return f"wins {' and '.join(words)} {unit}, {rest}"
