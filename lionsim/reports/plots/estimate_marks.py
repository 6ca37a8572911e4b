"""What both of `lionsim estimate --sweep`'s two-panel plots (sweep.png, and to_target.png with
--from-run) share beyond style.py: the speedup panel's y axis and its crossovers, and on a
bandwidth axis the network the user gave and a capped fabric's cap.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from lionsim.reports.between import TIMES, curve
from lionsim.reports.columns import NETWORK_GBPS, run_name, strategy_text
from lionsim.reports.rates import efficiency_of
from lionsim.reports.tables import said_where
from lionsim.reports.plots.style import TITLE_CHARS, fold_label, labelled_log_axis

LOG_SPEEDUPS = 10.0
"""Speedups (the line at 1 among them) spanning more than this factor are drawn on a log axis: on a
linear one up to 90x, every run within a few x of the baseline sat flat on the line at 1."""
GIVEN_STYLE = {"color": "black", "linestyle": "-.", "linewidth": 1.1, "zorder": 1.5}
"""The given network's line: black dash-dot, apart from the crossovers (dotted, in a run's colour)
and the fabric's cap (grey dashes)."""


LABEL_BOX = {"boxstyle": "square,pad=0.15", "facecolor": "white", "alpha": 0.8, "edgecolor": "none"}
"""Behind a note drawn over the data: the lines under it show faintly, the note reads."""


def speedup_axis(ax, speedups) -> bool:
    """Put `ax`'s speedups on a log y axis, labelled in plain round numbers at both ends
    (labelled_log_axis, as the step-time panel), where they and 1 span more than LOG_SPEEDUPS;
    leave it linear otherwise. Returns whether the axis is log."""
    values = np.asarray(speedups, dtype=float)
    values = values[np.isfinite(values) & (values > 0)]
    if not len(values):
        return False
    low, high = min(float(values.min()), 1.0), max(float(values.max()), 1.0)
    if high / low <= LOG_SPEEDUPS:
        return False
    ax.set_yscale("log")
    labelled_log_axis(ax.yaxis, low, high)
    return True


PANEL_BANDS = 1.1  # inches of a two-panel figure's height that are not panels: tick labels, x label, gaps
LABEL_FONT = 10  # points: matplotlib's axis label size


def speedup_label(what: str, baseline: str, log: bool, fig) -> str:
    """The speedup panel's y label, "`what` vs BASELINE (log scale)", folded (style.fold_label) to
    the height of one of `fig`'s two stacked panels: on one line a long baseline's name
    (streaming-diloco@hier:fp8-e5m2-allreduce) ran past its panel and off the figure."""
    title = fig._suptitle.get_text().count("\n") + 1 if fig._suptitle is not None else 0
    panel = (fig.get_figheight() - 0.25 * title - PANEL_BANDS) / 2
    return fold_label(f"{what} vs {baseline}" + (" (log scale)" if log else ""),
                      max(12, int(0.85 * panel * TITLE_CHARS / LABEL_FONT)))


def replaced_workers(variable: str, values, workers: int | None) -> str:
    """A workers sweep's note where its counts stood in for --workers (as the crossover table's title
    says it), "" otherwise: the plot's counts are not the --workers the command was given."""
    if variable != "workers" or workers is None or workers in {int(v) for v in values}:
        return ""
    return f"the sweep's counts in place of --workers {workers:,}"


def crossover_label(row, rounds: dict[str, int] | None = None) -> str:
    """A crossover's legend entry: what the dotted line marks, as the crossover table says it, the
    run named as estimate names it (run_name: its H from `rounds`)."""
    words = _crossover_words(row)
    return f"{run_name(row.strategy, row.transport, rounds)}{'' if words.startswith(chr(10)) else ' '}{words}"


def _crossover_words(row) -> str:
    """What a crossover's line marks, after the run's name: "wins from 16 workers\n(8 loses: ...)"."""
    where = getattr(row, "wins_where", "")
    if isinstance(where, str) and where and ";" in where:  # a run that turns more than once: its verdict
        return "\n" + where.replace("; ", ";\n")  # under its name, a line a clause
    if isinstance(where, str) and where:  # an edge of the ties, not a crossing of 1
        return where.replace(", ", ",\n", 1)
    if row.variable == "workers":
        loses = getattr(row, "loses_at", math.nan)
        side = f"from {row.crossover:,.0f}" if row.wins == "above" else f"up to {row.crossover:,.0f}"
        return (f"wins {side} workers" + ("" if loses != loses else f"\n({loses:,.0f} loses: the speedup "
                                            f"crosses 1 between)"))
    return f"wins {row.wins} {row.crossover:.3g} GB/s\n(interpolated crossing)"


def shared_label(rows, rounds: dict[str, int] | None = None, said: set | None = None) -> str:
    """The legend entry of one dotted line: crossover_label for one run; for runs that cross at the
    same value (one grey line), each run on a line of its own and, where they say the same
    ("wins from 16 workers"), those words once ("each wins from 16 workers"), else each run's own.
    `said`: the runs whose whole verdict (wins_where) an earlier line's entry gave, each added here
    as it is given: a later line of theirs says "also turns at 40", not the verdict again."""
    said = set() if said is None else said

    def one(row) -> str:
        key = (row.strategy, row.transport)
        if said_where(row) and key in said:
            unit = "workers" if row.variable == "workers" else "GB/s"
            return f"{run_name(row.strategy, row.transport, rounds)} also turns at {crossover_value(row)} {unit}"
        if said_where(row):
            said.add(key)
        return crossover_label(row, rounds)

    if len(rows) == 1:
        return one(rows[0])
    words = {_crossover_words(row) for row in rows}
    runs = [run_name(row.strategy, row.transport, rounds) for row in rows]
    if len(words) == 1 and (shared := words.pop()).startswith("wins ") and not any(
            said_where(row) and (row.strategy, row.transport) in said for row in rows):
        said.update((row.strategy, row.transport) for row in rows if said_where(row))
        return ",\n".join(runs) + "\neach " + shared
    return "\n".join(one(row) for row in rows)


def crossover_value(row) -> str:
    """A crossover's value as its line's label says it: a worker count whole ("4,096"), a bandwidth
    in 3 figures ("12.5")."""
    return f"{row.crossover:,.0f}" if row.variable == "workers" else f"{row.crossover:.3g}"


def through_crossings(rows: pd.DataFrame, crossings: pd.DataFrame, label: str, column: str = "speedup",
                      variable: str = "workers"):
    """A run's line (x, y) over the swept points and, on a workers sweep, the two counts priced either
    side of each of its crossovers (crossover.csv's speedup_at_crossover and speedup_at_loses): the
    line then crosses 1 where the table says, not where a straight segment between sparse swept
    counts (64 and 512) happens to (near 250, where the priced counts cross at 127-128). `column`:
    the speedup the crossings are of (to_target_speedup for the time to target's). A CSV
    without those columns: the swept points alone. A bandwidth sweep: the curve its crossovers
    are interpolated on (lionsim.reports.between), so each marker lies on its line."""
    if variable == "bandwidth":
        time = TIMES.get(column)
        return curve(rows["sweep_value"], rows[column], rows[time] if time in rows.columns else None)
    points = dict(zip(rows["sweep_value"].astype(float), rows[column].astype(float)))
    if "speedup_at_crossover" in crossings.columns:
        strategy, transport = label.split("@", 1)
        mine = crossings[(crossings["strategy"] == strategy) & (crossings["transport"] == transport)]
        for row in mine.itertuples(index=False):
            for x, y in ((row.crossover, row.speedup_at_crossover), (row.loses_at, row.speedup_at_loses)):
                if x == x and y == y and float(x) not in points:
                    points[float(x)] = float(y)
    xs = sorted(points)
    return xs, [points[x] for x in xs]


def mark_crossovers(ax, marked: pd.DataFrame, colours: dict, low: float, high: float, named=None,
                    rounds: dict[str, int] | None = None) -> None:
    """Each crossover in `marked` (crossover.csv's rows with one) as a dotted line in its run's
    colour on the speedup panel `ax`, whose log x axis spans the swept `low` to `high`, and its value
    beside the line at 1.0x: right of it in the axis's left half, left of it in the right half, so a
    crossover near either end keeps its label inside the panel (right of a line at 78.9 of 0.1-100,
    the label ran past the panel's edge). Neighbours' labels are staggered up, so they do not overlap;
    runs crossing at the same value share one grey line and one label naming them.
    Each line drawn is named once in `named`'s legend, in the line's colour (crossover_label, a
    shared line's runs one under another): on a workers sweep the line is the first count that
    wins (the last, where it wins below), its losing neighbour named beside it. `rounds`: each
    run's H (rounds_of), so a local-step run is named with it."""
    span = math.log(high / low) if high > low > 0 else 0.0
    rows = list(marked.itertuples(index=False))
    at_x: dict[float, list] = {}  # runs crossing at the same value share one line and one label
    said: set[tuple[str, str]] = set()  # a run's turns share one verdict: said once in the legend
    for row in rows:
        # the exact value: grouped on its 3 figures, 4096 and 4104 workers shared one line at 4096
        same = at_x.setdefault(float(row.crossover), [])
        if all((r.strategy, r.transport) != (row.strategy, row.transport) for r in same):  # a turn's two edges
            same.append(row)
    for i, (at, same) in enumerate(at_x.items()):
        text = crossover_value(same[0])
        # one run: its colour; several: grey, each run named ("16: dlion-mavo, powersgd"), where two
        # labels "16" and two dotted lines lay on top of each other
        colour = colours[f"{same[0].strategy}@{same[0].transport}"] if len(same) == 1 else "dimgrey"
        ax.axvline(at, color=colour, linestyle=":", linewidth=1.0)
        if named is not None:  # the line's legend entry, as drawn, in the panel that holds the legend
            named.plot([], [], color=colour, linestyle=":", linewidth=1.0, label=shared_label(same, rounds, said))
        if len(same) > 1:
            text += ": " + ", ".join(dict.fromkeys(
                strategy_text(row.strategy, (rounds or {}).get(f"{row.strategy}@{row.transport}", 1))
                if sum(r.strategy == row.strategy for r in same) == 1
                else run_name(row.strategy, row.transport, rounds) for row in same))
        right_half = span > 0 and math.log(at / low) > span / 2
        ax.annotate(text, (at, 1.0), textcoords="offset points",
                    xytext=(-3 if right_half else 3, 4 + 10 * (i % 3)), ha="right" if right_half else "left",
                    fontsize=8, color=colour, bbox=LABEL_BOX)  # boxed: legible over the runs' lines near 1.0x


def mark_given_network(frame: pd.DataFrame, axes, named) -> float | None:
    """On a bandwidth sweep, a vertical line on every one of `axes` at the effective bandwidth of
    the network the estimate was given (sweep.csv's NETWORK_GBPS), named in `named`'s legend. Nothing where sweep.csv predates that column, or the network lies
    outside the swept range (the axis does not reach it). Returns where it is drawn."""
    if NETWORK_GBPS not in frame.columns:
        return None
    at = float(frame[NETWORK_GBPS].iloc[0])
    values = frame["sweep_value"].to_numpy(dtype=float)
    if not (math.isfinite(at) and values.min() <= at <= values.max()):
        return None
    name = str(frame["network"].iloc[0])
    efficiency = efficiency_of(frame)
    link = f" moved (its {at / efficiency:.3g} GB/s link x {efficiency:g})" if efficiency < 1.0 else ""
    # named in the legend alone: a name beside the line sat on whichever curve passed there
    for ax in axes:
        ax.axvline(at, label=f"{name}, the network given: {at:.3g} GB/s{link}" if ax is named else None, **GIVEN_STYLE)
    return at


def mark_cap(frame: pd.DataFrame, top, bottom) -> None:
    """Where a capped fabric's transport stops moving more (NCCL over sockets: what the network's
    socket settings move, lionsim.network.sockets): a line there, and in the legend a note saying why
    (lionsim.network.fabrics; estimate --need). Beyond it the bytes a second stay, but NCCL still
    chooses on the link's rate (lionsim.network.nccl), so a faster link can flip a call to a tree
    the fabric prices slower and a curve can rise: the note says so."""
    from lionsim.network.fabrics import FABRICS

    first = frame.iloc[0]
    if first.get("library") != "nccl" or not first.get("fabric") or first["workers"] <= first["gpus_per_node"]:
        return
    fabric = FABRICS.get(first["fabric"])
    cap = float(first.get("fabric_cap_GBps", fabric.cap_GBps))  # the network's cap (its socket settings)
    if not math.isfinite(cap):
        return
    at = cap / fabric.share  # the link rate beyond which the transport moves no more
    # the note in the legend, beside the line's own dashes: in the panel it ran across the lines right of the cap
    note = (f"{fabric.name} fabric's cap: NCCL moves at most\n{cap:g} GB/s a node; beyond, NCCL still\n"
            "chooses on the link: a flip can slow a step")
    for ax in (top, bottom):
        ax.axvline(at, color="grey", linestyle="--", linewidth=1.0, label=note if ax is top else None)
