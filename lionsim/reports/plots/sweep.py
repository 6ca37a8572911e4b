"""The plots of a `lionsim sweep` root, from sweep_summary.csv and sweep_steps.csv.

One panel per worker count (or per network, against workers), one line per run label in the
directory's run styles, the baseline first and thicker. Over seeds a line is the mean and its
band the min-max (said in the legend); over bandwidth the band's edges are drawn as the line is,
so the band holds it. A crossover, where the mean speedup crosses 1 between two neighbouring
points (which pair, and the tie rule, as estimate's: between.crossing_points, for bandwidth and
workers alike), is interpolated with each run's mean time linear in 1/bandwidth (the model's
form, as `estimate --sweep` does: lionsim.reports.between), the line drawn the same way so the
crossover lies on it, and marked by a dotted line in the run's colour; over workers it is a whole
count, as estimate says it: the winning one of two neighbouring counts (marked on the line at its
measured point), else the span between the two measured counts ("between 2 and 4 workers"),
shaded. A line that would hide under an earlier run's (the same or within style.CLOSE of it,
panel by panel) is drawn dashed over it and named so in the legend, as in the run plots. The
time-to-target plots account for every run in the legend: one that did not reach the target in
some cells says in how many ("not reached in 2 of 6 cells", "baseline not reached in 1 of 6
cells" where the run got there and the cell's baseline did not), one with no point anywhere is
named with a hollow marker and "not reached, no line" (as the tables say).

Cells that differ only in the network train identically (the network changes the modelled
time, not the training), so loss and accuracy come from each (workers, seed, run)'s first
network. A sweep over several lrs is drawn with each run at its best lr (lionsim.reports.best_lr,
the lowest final loss; every subtitle says so, and each legend entry which lr: chosen_lr_words):
one line per run, never one per lr; loss_vs_step_by_lr (lionsim.reports.plots.lr_curves) draws
the lr search itself, every lr, and loss_vs_step's subtitle points to it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import NullFormatter

from lionsim.reports.between import TIMES, Crossing, crossing_points, curve
from lionsim.reports.best_lr import CHOSEN, NOTE, at_best_lr, chosen_lr_words, has_lr_axis
from lionsim.reports.cells_rounds import cells_rounds
from lionsim.reports.columns import eval_metric, label_name, metric_axis, run_name
from lionsim.reports.plots.lr_curves import STEM as LR_STEM, plot_lr_curves
from lionsim.reports.plots.sweep_axes import AXES, skipped_plots, stem
from lionsim.reports.columns import workload_text
from lionsim.reports.target_speedup import BASELINE_NOT_REACHED, NO_BASELINE, NO_TARGET, NOT_REACHED, to_target_kind
from lionsim.whole_nodes import neighbour_count
from lionsim.reports.plots.style import (TWIN_DASHES, display_label, figure, labelled_linear_axis, legend_outside,
                                         mark_every, marker_size, ordered_labels, overlapping, run_styles, save,
                                         twin_name, Words)

SUMMARY_NEEDS = ["cell", "workload", "seed", "workers", "network", "bandwidth_GBps", "strategy", "transport",
                 "speedup", "time_to_target_speedup", "final_loss", "final_eval_acc", "baseline"]
STEPS_NEEDS = ["cell", "workload", "seed", "workers", "network", "strategy", "transport", "step", "loss", "eval_acc"]
BAND = "band: min-max over seeds"
WHY = (NOT_REACHED, BASELINE_NOT_REACHED, NO_TARGET, NO_BASELINE)
"""Why a run has no time-to-target point in a cell, in the legend's order."""
END_MARGIN = 0.025  # of the step axis: it runs this far past the last step, so a marker there shows whole


def _labelled(frame: pd.DataFrame, rounds: dict[str, int]) -> pd.DataFrame:
    """Each row's run by its name (columns.run_name: a local-step run with its H, from the cells)."""
    return frame.assign(label=[run_name(s, t, rounds) for s, t in zip(frame["strategy"], frame["transport"])])


def _about(frame: pd.DataFrame) -> str:
    """A subtitle's first part: the workload, and where the cells are each run's best lr's, that."""
    return workload_text(frame["workload"].iloc[0]) + (f" · {NOTE}" if CHOSEN in frame.columns else "")


def _own_model(frame: pd.DataFrame) -> str:
    """A speedup plot's second subtitle line: whose steps these are (the sweep's own small model's,
    which a real model's need not follow), and what prices a real one; "" without a params column."""
    if "params" not in frame.columns or not frame["params"].notna().any():
        return ""
    params = int(frame["params"].dropna().iloc[0])
    return (f"\nsteps of this workload's own model ({params:,} params), not a real model's: "
            "lionsim estimate --from-run prices one")


def _facets(n: int) -> tuple[int, int]:
    ncols = min(n, 3)
    return math.ceil(n / ncols), ncols


def crossings(x: np.ndarray, speedup: np.ndarray, times: np.ndarray | None = None) -> list[Crossing]:
    """Each crossover of the line drawn through speedup over bandwidths x (the run's `times` linear
    in 1/x; equal where None), as estimate finds them: lionsim.reports.between.crossing_points, the
    tie rule included; those the line does not join (a point between without a figure) left out."""
    return [c for c in crossing_points(x, speedup, times) if math.isfinite(c.at)]


class WorkerCrossing(NamedTuple):
    """A crossover over worker counts (worker_crossings)."""
    low: int
    high: int
    """The count itself where low == high, else the two measured counts it lies between."""
    y: float
    """Where its marker sits on the run's line: the speedup at the count (a measured point), or
    the level the line crosses between low and high (1.0, or 1 + TIE for an edge of the ties)."""


def worker_crossings(workers: np.ndarray, speedup: np.ndarray, per_node: int = 1) -> list[WorkerCrossing]:
    """Where speedup crosses 1 over worker counts, as `estimate --sweep workers` says it: a whole
    count, never a fraction (lionsim.estimate.sweep.worker_crossover: the first count on the
    winning side), on the segment between.crossing_points picks (the tie rule: within TIE of 1.00x
    is level, neither a win nor a loss; a run that only ties and wins has an edge where it starts
    to win; a count without a figure breaks the line). estimate prices the counts between the
    segment's ends to find it; a bench sweep measured only its points, so where they are
    neighbouring valid counts on nodes of `per_node` workers (lionsim.whole_nodes.neighbour_count:
    2 and 3 within a node, 8 and 16 on nodes of 8) the crossover is the one on the winning side,
    (n, n), as estimate names it, and otherwise it lies between them, (low, high): "between 2 and 4
    workers" rather than an interpolated 2.39."""
    x, s = np.asarray(workers, dtype=float), np.asarray(speedup, dtype=float)
    found = []
    for turn in crossing_points(x, s):
        if turn.segment < 0:  # beside a gap: an edge at its winning point, a crossing nowhere (as over bandwidth)
            if math.isfinite(turn.at):
                found.append(WorkerCrossing(round(turn.at), round(turn.at), turn.level))
            continue
        low, high = round(float(x[turn.segment])), round(float(x[turn.segment + 1]))
        if neighbour_count(low, per_node, up=True) == high:
            k = turn.segment + (turn.wins == "above")  # estimate's rule: the winning side's count
            found.append(WorkerCrossing(round(float(x[k])), round(float(x[k])), float(s[k])))
        else:
            found.append(WorkerCrossing(low, high, turn.level))
    return found


def worker_crossing_text(span: WorkerCrossing | tuple[int, int]) -> str:
    """A worker crossover (worker_crossings) in words: "3 workers", "between 2 and 4 workers"."""
    low, high = span[:2]
    return f"{low} workers" if low == high else f"between {low} and {high} workers"


SHAPES_DIFFER = ("the networks differ in more than the inter-node rate (workers a node, intra-node link): "
                 "each network a point, no line or crossover between them")


def network_shape(name: str) -> tuple:
    """What a network is besides its inter-node rate: workers a node and the intra-node link
    (lionsim.network.link.Network). A name no longer loadable (a profile moved) is its own shape."""
    from lionsim.network.profile import load_network

    try:
        network = load_network(name)
    except Exception:  # noqa: BLE001 - any failure to load: assume nothing shared
        return ("unknown", name)
    return (network.workers_per_node, network.intra)


def _one_shape(networks) -> bool:
    """Whether the swept `networks` differ only in their inter-node rate, so a line across
    their bandwidths (and a crossover on it) means what bandwidth alone does."""
    return len({network_shape(str(name)) for name in dict.fromkeys(networks)}) <= 1


def workers_per_node(root: Path, summary: pd.DataFrame) -> dict[str, int]:
    """network -> its workers a node, for each network of the sweep's `summary`: from a cell's
    run.json (the network the run was priced on, even where a profile file has moved since),
    else from loading the name (network_shape); 1 where neither says."""
    import json

    found: dict[str, int] = {}
    for cell, network in zip(summary["cell"], summary["network"]):
        network = str(network)
        if network in found:
            continue
        try:
            found[network] = int(json.loads((Path(root) / "cells" / str(cell) / "run.json").read_text())
                                 ["network"]["workers_per_node"])
        except (OSError, ValueError, KeyError, TypeError):  # no cells kept (a redrawn copy): the name's
            shape = network_shape(network)
            found[network] = shape[0] if isinstance(shape[0], int) else 1
    return found


def _aggregate(rows: pd.DataFrame, x: str, y: str) -> pd.DataFrame:
    """mean, min, max of y over seeds at each x, sorted by x; for a speedup, `time`: the run's mean
    time behind it (between.TIMES), which a bandwidth line and its crossings interpolate. A time to
    target some seed did not reach is none at that x (not the mean of the seeds that did)."""
    agg = rows.groupby(x)[y].agg(["mean", "min", "max", "count"])
    if TIMES.get(y) in rows.columns:
        agg["time"] = rows.groupby(x)[TIMES[y]].mean()
    if y.startswith("time_to_target"):  # a point some seed never reached is not reached, as the report says it
        missed = agg["count"] < rows.groupby(x).size()
        agg.loc[missed, [c for c in ("mean", "min", "max", "time") if c in agg.columns]] = math.nan
    return agg.reset_index().sort_values(x)


CURVE_POINTS = 3
"""Fewest bandwidths a run's line is drawn through as the model's curve (time linear in
1/bandwidth, between.curve); at two, a curve from one computed point to the other reads as points
that were never computed between them: the two are drawn alone (whiskers for the seeds' spread), the
crossover still marked where the model puts it."""


def too_few(agg: pd.DataFrame, x: str) -> bool:
    """Whether a run's points over bandwidth are too few for its curve (CURVE_POINTS)."""
    return x == "bandwidth_GBps" and 1 < len(agg) < CURVE_POINTS


def _series(ax: Axes, agg: pd.DataFrame, x: str, style: dict, band: bool, twin: bool = False,
            joined: bool = True) -> str:
    """One run's mean (a line through its points, or the points alone where not `joined` or too_few)
    and its seeds' spread: "band" where a band was drawn, "whiskers" where the points alone are
    (too_few), "" where none was (over a single x, one evaluation per run, there is none to draw)."""
    if joined and too_few(agg, x):
        ax.plot(agg[x], agg["mean"], color=style["color"], linestyle="none", marker=style["marker"],
                markersize=marker_size(len(agg), 5))
        if not (band and (agg["max"] > agg["min"]).any()):
            return ""
        ax.errorbar(agg[x], agg["mean"], yerr=[agg["mean"] - agg["min"], agg["max"] - agg["mean"]], fmt="none",
                    ecolor=style["color"], elinewidth=1.0, capsize=3)
        return "whiskers"
    linestyle = "none" if not joined else TWIN_DASHES if twin else style["linestyle"]
    if joined and x == "bandwidth_GBps":  # the curve the crossings are interpolated on, markers on the points
        ax.plot(*curve(agg[x], agg["mean"], agg["time"] if "time" in agg else None), color=style["color"],
                linestyle=linestyle, linewidth=style["linewidth"])
        linestyle = "none"
    ax.plot(agg[x], agg["mean"], color=style["color"], linestyle=linestyle,
            linewidth=style["linewidth"], marker=style["marker"], markersize=marker_size(len(agg), 5),
            markevery=style.get("markevery"))
    if not (band and len(agg) > 1 and (agg["max"] > agg["min"]).any()):
        return ""
    if joined and x == "bandwidth_GBps":  # each edge as the line, with the mean's times: min <= mean <= max between
        time = agg["time"] if "time" in agg else None
        (xs, low), (_, high) = curve(agg[x], agg["min"], time), curve(agg[x], agg["max"], time)
        ax.fill_between(xs, low, high, color=style["color"], alpha=0.18, linewidth=0)
        return "band"
    ax.fill_between(agg[x], agg["min"], agg["max"], color=style["color"], alpha=0.18, linewidth=0)
    return "band"


class _Twins:
    """Which curves hide under an earlier run's, panel by panel (style.overlapping), and the
    legend entry that says so: "(overlaps X)", with "in some panels" where it is not all."""

    def __init__(self) -> None:
        self.drawn: dict[str, int] = {}  # panels each label is drawn in
        self.hits: dict[str, list[tuple[str, bool]]] = {}

    def panel(self, aggs: dict[str, pd.DataFrame], x: str) -> dict[str, tuple[str, bool]]:
        found = overlapping([(label, agg[x], agg["mean"]) for label, agg in aggs.items()])
        for label in aggs:
            self.drawn[label] = self.drawn.get(label, 0) + 1
        for label, twin in found.items():
            self.hits.setdefault(label, []).append(twin)
        return found

    def twin(self, label: str) -> tuple[tuple[str, bool] | None, str]:
        hits = self.hits.get(label, [])
        if not hits:
            return None, ""
        others = list(dict.fromkeys(other for other, _ in hits))
        exact = all(e for _, e in hits)
        everywhere = len(hits) == self.drawn.get(label, 0) and len(others) == 1
        return (" / ".join(others), exact), "" if everywhere else " in some panels"


def unreached(summary: pd.DataFrame, labels, column: str) -> dict[str, tuple[str, bool]]:
    """label -> (what the legend adds, whether it has a point anywhere) for each run with no `column`
    in some cells, in the tables' words (lionsim.reports.target_speedup): "not reached" (the run
    never got to the cell's target), "baseline not reached" (it did, the cell's baseline did not:
    no speedup to draw), "no target" (none was set: the cell's baseline diverged), "no baseline"
    (the cell's baseline has not finished)."""
    found = {}
    for label in labels:
        rows = summary[summary["label"] == label]
        missing = rows[rows[column].isna()]
        if missing.empty:
            continue
        kinds = pd.Series([to_target_kind(row) for row in missing.itertuples(index=False)], dtype=object)
        counts = {kind: int((kinds == kind).sum()) for kind in WHY if (kinds == kind).any()}
        parts = [f"{why} in {count} of {len(rows)} cells" for why, count in counts.items()]
        drawn = len(missing) < len(rows)
        found[label] = (f" ({'; '.join(parts)})" if drawn else
                        ": " + ("; ".join(parts) if len(counts) > 1 else next(iter(counts))) + ", no line", drawn)
    return found


def _name(label: str, baseline: str, named: dict[str, str] | None) -> str:
    """A run's legend entry: legend_names' where given, else the run and whether it is the baseline."""
    return (named or {}).get(label) or display_label(label, baseline)


def legend_names(labels, baseline: str, lrs: dict[str, str]) -> dict[str, str]:
    """label -> its legend name: the run, with "baseline" and the lr it is drawn at (chosen_lr_words:
    a subtitle that says "each run at its best lr" would otherwise leave which lr unsaid)."""
    notes = {label: [*(["baseline"] if label == baseline else []), *([lrs[label]] if label in lrs else [])]
             for label in labels}
    return {label: f"{label} ({', '.join(n)})" if n else label for label, n in notes.items()}


def _handles(labels, styles, baseline, seeds: int, extra: list | None = None, twins: _Twins | None = None,
             missing: dict[str, tuple[str, bool]] | None = None, banded: bool = False,
             named: dict[str, str] | None = None, points: set[str] = frozenset(), whiskered: bool = False) -> list:
    """One legend entry per run, each accounted for: `missing` (unreached) adds why a run has no
    point in some cells, and one with no point anywhere is a hollow marker with no line, as
    estimate's to_target.png names its runs without a figure; one drawn as points alone in every
    panel (`points`: too_few) has no line in its entry either. The seed band is named only where
    one is `banded` (drawn in some panel), the whiskers where `whiskered`."""
    handles = []
    for l in labels:
        twin, where = twins.twin(l) if twins is not None else (None, "")
        note, drawn = (missing or {}).get(l, ("", True))
        handles.append(Line2D([], [], color=styles[l]["color"], marker=styles[l]["marker"],
                              linestyle=("none" if not drawn or l in points else TWIN_DASHES if twin and not where
                                         else styles[l]["linestyle"]),
                              markerfacecolor=None if drawn else "white",
                              linewidth=styles[l]["linewidth"],
                              label=twin_name(_name(l, baseline, named), twin, where) + note))
    if seeds > 1 and banded:
        handles.append(Patch(color="grey", alpha=0.3, label=f"line: mean over {seeds} seeds\n{BAND}"))
    if seeds > 1 and whiskered:
        handles.append(Line2D([], [], color="grey", linestyle="none", marker="|", markersize=12,
                              label=f"point: mean over {seeds} seeds\nwhiskers: min-max over seeds"))
    elif seeds > 1 and not banded:
        handles.append(Line2D([], [], color="grey", linestyle="none", marker="o",
                              label=f"mean over {seeds} seeds"))
    return handles + (extra or [])


def _legend(fig, axes: list[Axes], panels: int, handles: list, title: str | None = None) -> None:
    """Right of the figure; for one panel, right of that panel's axes (the figure's legend
    there ran up into the title)."""
    legend_outside(axes[0] if panels == 1 else fig, handles, title=title)


def _speedup_plot(summary, labels, styles, baseline, x: str, facet: str, column: str, title: str,
                  path: Path, per_node: dict[str, int] | None = None,
                  named: dict[str, str] | None = None) -> list[Path]:
    """`column` (a speedup) against x (bandwidth_GBps or workers, log axis), one panel per `facet`
    value; `per_node` (workers_per_node) decides which worker counts are neighbours."""
    if facet == "network":  # networks ordered by their bandwidth
        order = summary.groupby("network")["bandwidth_GBps"].first().sort_values().index.tolist()
    else:
        order = sorted(summary[facet].unique())
    nrows, ncols = _facets(len(order))
    seeds = summary["seed"].nunique()
    # across networks of different shapes the x axis is not the only change: no line, no crossover
    joined = x != "bandwidth_GBps" or all(_one_shape(summary[summary[facet] == value]["network"]) for value in order)
    fig, axes = figure(title, f"{_about(summary)} · baseline {baseline}{_own_model(summary)}"
                       + ("" if joined else f"\n{SHAPES_DIFFER}"), nrows, ncols, sharey=True,
                       size=(5.0 * ncols + 3.0, 4.0 * nrows + 1.0))
    marked = False
    spread: set[str] = set()  # how the seeds' spread was drawn: "band", "whiskers"
    spans: list[str] = []  # the colours of the shaded spans, one swatch each in the legend
    across: list[Words] = []  # spans as wide as the panel: said in the legend, not shaded
    curved: set[str] = set()  # runs drawn as a line in some panel (the others are points alone: too_few)
    twins = _Twins()
    for ax, value in zip(axes, order):
        cell = summary[summary[facet] == value]
        xs = sorted(cell[x].unique())
        aggs = {label: _aggregate(rows, x, column) for label in labels
                if not (rows := cell[cell["label"] == label]).empty}
        same = twins.panel(aggs, x)
        shaded = 0  # spans labelled in this panel, each label under the one before
        for k, label in enumerate(labels):
            if label not in aggs:
                continue
            agg = aggs[label]
            spread.add(_series(ax, agg, x, styles[label], seeds > 1 and joined, twin=label in same, joined=joined))
            if joined and not too_few(agg, x):
                curved.add(label)
            if label == baseline or not joined:
                continue
            if x == "workers":  # whole counts, as estimate says them (worker_crossings)
                # straight segments, no interpolation: a crossover is a measured point (a vertex) or a span
                for low, high, y in worker_crossings(agg[x].to_numpy(dtype=float), agg["mean"].to_numpy(dtype=float),
                                                     (per_node or {}).get(str(value), 1)):
                    marked |= low == high
                    colour = styles[label]["color"]
                    if low == high:
                        ax.axvline(low, color=colour, linestyle=":", linewidth=1.2)
                        ax.plot([low], [y], marker="X", color=colour, markeredgecolor="black", markersize=8, zorder=4)
                        ax.annotate(worker_crossing_text((low, high)), (low, y), textcoords="offset points",
                                    xytext=(4, 6 + 11 * (k % 3)), fontsize=8, color=colour)
                    elif (low, high) == (xs[0], xs[-1]):  # the whole panel: a shade there says nothing
                        where = f" ({_panel_title(facet, value)})" if len(order) > 1 else ""
                        turns = "crosses 1" if y == 1.0 else "a win meets a tie"  # an edge of the ties: 1 + TIE
                        across.append(Words(f"{label}: {turns}\n{worker_crossing_text((low, high))}{where}",
                                            colour))  # words alone: nothing in the panel marks it
                    else:  # somewhere between two measured counts: the span, no point
                        # the shade alone (its swatch in the legend): a dotted segment at 1.0 lay on the
                        # baseline's line, read as another run at 1.00x, and no legend entry named it
                        ax.axvspan(low, high, color=colour, alpha=SPAN_ALPHA, linewidth=0)
                        spans += [] if colour in spans else [colour]
                        # at the span's top, inside the axes: clear of the baseline at 1.00x
                        ax.annotate(worker_crossing_text((low, high)), (math.sqrt(low * high), 1.0),
                                    xycoords=("data", "axes fraction"), textcoords="offset points",
                                    xytext=(0, -4 - 11 * shaded), ha="center", va="top", fontsize=8, color=colour)
                        shaded += 1
                continue
            for turn in crossings(agg[x].to_numpy(dtype=float), agg["mean"].to_numpy(dtype=float),
                                  agg["time"].to_numpy(dtype=float) if "time" in agg else None):
                at, level = turn.at, turn.level
                marked = True  # on the line: at 1.0, or where a run that only ties and wins leaves the tie band
                ax.axvline(at, color=styles[label]["color"], linestyle=":", linewidth=1.2)
                ax.plot([at], [level], marker="X", color=styles[label]["color"], markeredgecolor="black", markersize=8,
                        zorder=4)
                ax.annotate(f"{at:.3g} GB/s", (at, 1.0), textcoords="offset points", xytext=(4, 6 + 11 * (k % 3)),
                            fontsize=8, color=styles[label]["color"])
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xscale("log", base=2 if x == "workers" else 10)
        if x == "workers":
            ax.set_xticks(xs, [str(int(v)) for v in xs])
            ax.set_xlabel("workers")
        else:
            ax.set_xlabel("network bandwidth (GB/s, log scale)")
            names = cell.groupby("network")[x].first().sort_values()
            top = ax.secondary_xaxis("top")
            top.set_xticks(names.to_numpy(dtype=float), names.index.tolist(), fontsize=7, rotation=30)
            top.xaxis.set_minor_formatter(NullFormatter())  # only the network names on top
            ax.xaxis.set_minor_formatter(NullFormatter())  # log minor labels ("2x10^-1") collide
            ax.set_xticks(names.to_numpy(dtype=float), [f"{v:.3g}" for v in names.to_numpy(dtype=float)])
        ax.set_title(_panel_title(facet, value), fontsize=10)
        if len(xs) == 1 or not any(agg["mean"].notna().any() for agg in aggs.values()):
            # one point: give the log axis some width around it; none (no cell's baseline got to the
            # target: every run is named in the legend): the cells' span, as a log axis needs limits
            ax.set_xlim(xs[0] / 2.0, xs[-1] * 2.0)
    for ax in axes[len(order):]:
        ax.set_visible(False)
    for ax in axes[::ncols]:
        ax.set_ylabel(f"{column.replace('_', ' ')} vs baseline (x)")
    crosses = (f"crossover: the winning count\nwhere {TURNS}" if x == "workers" else f"crossover: {TURNS}")
    extra = [Line2D([], [], color="grey", linestyle=":", marker="X", markeredgecolor="black",
                    label=crosses)] if marked else []
    if spans:  # a swatch as each shade is drawn: the run's colour, the shade's alpha
        extra.append(Swatches([Patch(color=colour, alpha=SPAN_ALPHA, linewidth=0) for colour in spans],
                              SPAN_TURNS))
    extra += across
    pointed = {label for label in labels if label not in curved}  # points alone in every panel
    few = joined and x == "bandwidth_GBps" and pointed - {baseline}
    _legend(fig, axes, len(order), _handles(labels, styles, baseline, seeds, extra, twins,
                                            unreached(summary, labels, column) if column == "time_to_target_speedup"
                                            else None, "band" in spread, named, pointed if joined else set(),
                                            "whiskers" in spread),
            f"points alone: {CURVE_POINTS - 1} bandwidths\nare too few for a curve" if few else None)
    return save(fig, path)


TURNS = "speedup crosses 1\nor a win meets a tie"
"""What a crossover's dotted line and X mark (lionsim.reports.between): where the speedup crosses
1.00x, or where a run that only ties and wins leaves the tie band (within TIE of 1.00x) to win;
estimate's sweep.png says each run's ("wins from 16 workers, ties elsewhere"; "also turns at")."""
SPAN_TURNS = "crosses 1 or a win meets\na tie between these counts"
"""The legend's swatch of the shaded spans a crossover (TURNS) lies in."""
SPAN_ALPHA = 0.12
"""The shade of a span a worker crossover lies in (and its legend swatch)."""


class Swatches(tuple):
    """Several legend handles drawn side by side as one entry (matplotlib's tuple handler), with the
    label the legend reads of a handle."""

    def __new__(cls, handles, label: str):
        made = super().__new__(cls, handles)
        made.label = label
        return made

    def get_label(self) -> str:
        return self.label


def _panel_title(facet: str, value) -> str:
    """A panel's title: its worker count, or its network."""
    return f"{value} workers" if facet == "workers" else f"network {value}"


def _one_network(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows of each (workers, seed, run)'s first network: the training does not depend on it."""
    first = frame.groupby(["workers", "seed", "label"], sort=False)["network"].transform("first")
    return frame[frame["network"] == first]


def _curve_plot(steps, labels, styles, baseline, column: str, ylabel: str, title: str, path: Path,
                factor: float = 1.0, named: dict[str, str] | None = None, also: str = "") -> list[Path]:
    """`column` against step per run (mean over seeds, min-max band), one panel per worker count;
    `also`: where another plot shows more (the lr search's every lr), ending the subtitle."""
    steps = _one_network(steps)
    order = sorted(steps["workers"].unique())
    nrows, ncols = _facets(len(order))
    seeds = steps["seed"].nunique()
    fig, axes = figure(title, f"{_about(steps)} · training does not depend on the network" + (f" · {also}" if also else ""),
                       nrows, ncols,
                       sharey=True, size=(5.0 * ncols + 3.0, 4.0 * nrows + 1.0))
    twins = _Twins()
    banded = False
    points = []  # each drawn series' length: all of one, a legend title says they are points
    end = float(steps["step"].max())
    for ax, workers in zip(axes, order):
        cell = steps[(steps["workers"] == workers) & steps[column].notna()]
        aggs = {label: _aggregate(rows.assign(**{column: rows[column] * factor}), "step", column) for label in labels
                if not (rows := cell[cell["label"] == label]).empty}
        same = twins.panel(aggs, "step")
        for k, label in enumerate(labels):
            if label not in aggs:
                continue
            agg = aggs[label]
            style = dict(styles[label], markevery=mark_every(len(agg), k))
            banded |= bool(_series(ax, agg, "step", style, seeds > 1, twin=label in same))
            points.append(len(agg))
        ax.set_title(f"{workers} workers", fontsize=10)
        ax.set_xlabel("step")
        # from 0 to the last step, as a run's plots: around one eval at step 10 the axis ran 9.45-10.5
        labelled_linear_axis(ax.xaxis, end)
        ax.set_xlim(0, end * (1 + END_MARGIN))
    for ax in axes[len(order):]:
        ax.set_visible(False)
    for ax in axes[::ncols]:
        ax.set_ylabel(ylabel)
    once = (f"one {'evaluation' if column == 'eval_acc' else 'step'} a run: a point each"
            if points and max(points) == 1 else None)
    _legend(fig, axes, len(order), _handles(labels, styles, baseline, seeds, twins=twins, banded=banded,
                                            named=named), once)
    return save(fig, path)


def _by_workers_plot(summary, labels, styles, baseline, column: str, ylabel: str, title: str,
                     path: Path, factor: float = 1.0, named: dict[str, str] | None = None) -> list[Path]:
    """Grouped bars: `column` by worker count per run, mean over seeds, min-max whiskers, seeds as dots."""
    data = _one_network(summary)
    workers = sorted(data["workers"].unique())
    seeds = data["seed"].nunique()
    width = 0.8 / len(labels)
    fig, (ax,) = figure(title, f"{_about(data)} · bar: mean over {seeds} seed(s)"
                        + (", whiskers: min-max, dots: each seed" if seeds > 1 else ""),
                        size=(max(8.0, 2.0 + 0.35 * len(labels) * len(workers)), 5.2))
    for k, label in enumerate(labels):
        agg = _aggregate(data[data["label"] == label].assign(v=lambda d: d[column] * factor), "workers", "v")
        pos = {w: i for i, w in enumerate(workers)}
        xs = np.array([pos[w] for w in agg["workers"]]) - 0.4 + width * (k + 0.5)
        ax.bar(xs, agg["mean"], width=width * 0.92, color=styles[label]["color"],
               edgecolor="black" if label == baseline else "none", linewidth=1.2, label=_name(label, baseline, named))
        if seeds > 1:
            ax.errorbar(xs, agg["mean"], yerr=[agg["mean"] - agg["min"], agg["max"] - agg["mean"]], fmt="none",
                        ecolor="black", capsize=2, linewidth=0.8)
            points = data[data["label"] == label]
            ax.scatter([pos[w] - 0.4 + width * (k + 0.5) for w in points["workers"]], points[column] * factor,
                       s=8, color="black", zorder=3)
    ax.set_xticks(range(len(workers)), [f"{w} workers" for w in workers])
    ax.set_ylabel(ylabel)
    values = data[column].dropna() * factor
    if column == "final_eval_acc" and factor == 100.0:  # bars start at zero: a cut axis would exaggerate the gaps
        top = float(values.max()) if len(values) else 100.0
        ax.set_ylim(0.0, min(100.0, top + max(3.0, 0.05 * top)))
    elif not len(values) or values.min() >= 0:  # a metric of a workload's own may be negative
        ax.set_ylim(bottom=0.0)
    ax.grid(False, axis="x")
    legend_outside(ax)
    return save(fig, path)


def plot_sweep(out_dir: Path, sweep_steps: pd.DataFrame, sweep_summary: pd.DataFrame,
               rounds: dict[str, int] | None = None) -> list[Path]:
    """Draw a sweep's plots into out_dir (PNG and SVG each; per workload, suffixed, if several):
    speedup_vs_bandwidth, time_to_target_speedup_vs_bandwidth, speedup_vs_workers,
    time_to_target_speedup_vs_workers (each only with two or more values on its axis:
    skipped_plots), loss_vs_step, and where accuracy was evaluated eval_acc_vs_step and
    accuracy_by_workers (else final_loss_by_workers). `rounds`: each local-step run's H as the
    command read it already (cells_rounds), so its table, plots and report read the cells once;
    None: read here."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    every_lr = (sweep_summary, sweep_steps) if has_lr_axis(sweep_summary) else None  # for loss_vs_step_by_lr
    sweep_summary, sweep_steps = at_best_lr(sweep_summary, sweep_steps)  # several lrs: each run at its best
    rounds = cells_rounds(out_dir) if rounds is None else rounds  # each local-step run's H, as the cells record it
    summary, steps = _labelled(sweep_summary, rounds), _labelled(sweep_steps, rounds)
    baseline = label_name(summary["baseline"].iloc[0], rounds)
    labels = ordered_labels(summary["label"], baseline)
    styles = run_styles(labels, baseline)  # one style per run across every plot and workload
    workloads = list(dict.fromkeys(summary["workload"]))
    skip = {name for name, _ in skipped_plots(summary)}
    per_node = workers_per_node(out_dir, summary)
    paths: list[Path] = []
    for workload in workloads:
        s = summary[summary["workload"] == workload]
        st = steps[steps["workload"] == workload]
        wl = [l for l in labels if l in set(s["label"])]
        lrs = {label_name(run, rounds): words for run, words in chosen_lr_words(s).items()}
        named = legend_names(wl, baseline, lrs)  # label -> its legend entry
        metric, higher = eval_metric(s)  # accuracy, or the workload's own metric by name
        ylabel, factor = metric_axis(metric, higher)

        def target(name: str) -> Path:
            return out_dir / f"{stem(name, workload, len(workloads) > 1)}.png"

        for x, by, (step_plot, target_plot, _, _), words in (("bandwidth_GBps", "workers", AXES["bandwidth_GBps"],
                                                                "network bandwidth"),
                                                               ("workers", "network", AXES["workers"], "workers")):
            if target(step_plot).stem in skip:
                continue
            paths += _speedup_plot(s, wl, styles, baseline, x, by, "speedup", f"Step-time speedup vs {words}",
                                   target(step_plot), per_node, named)
            paths += _speedup_plot(s, wl, styles, baseline, x, by, "time_to_target_speedup",
                                   f"Time-to-target speedup vs {words}", target(target_plot), per_node, named)
        if not st.empty:
            also = f"every lr: {target(LR_STEM).name}" if every_lr is not None else ""
            paths += _curve_plot(st, wl, styles, baseline, "loss", "training loss (mean over workers)",
                                 "Training loss vs step", target("loss_vs_step"), named=named, also=also)
            if every_lr is not None:  # the lr search's own curves, every lr
                tried = every_lr[0][every_lr[0]["workload"] == workload]
                paths += plot_lr_curves(target(LR_STEM), tried,
                                        every_lr[1][every_lr[1]["cell"].isin(set(tried["cell"]))], rounds)
            if st["eval_acc"].notna().any():
                paths += _curve_plot(st, wl, styles, baseline, "eval_acc", ylabel, f"Eval {metric} vs step",
                                     target("eval_acc_vs_step"), factor, named)
        if s["final_eval_acc"].notna().any():
            paths += _by_workers_plot(s, wl, styles, baseline, "final_eval_acc", f"final {ylabel}",
                                      f"Final eval {metric} by workers", target("accuracy_by_workers"), factor, named)
        else:
            paths += _by_workers_plot(s, wl, styles, baseline, "final_loss", "final training loss",
                                      "Final training loss by workers (no eval accuracy)",
                                      target("final_loss_by_workers"), named=named)
    return paths
