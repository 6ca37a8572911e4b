"""`lionsim estimate --sweep`'s plots, drawn from sweep.csv and crossover.csv alone: step time
and speedup against the swept workers or bandwidth, crossovers marked (sweep.png); with
hierarchical transports in a workers sweep, flat against hierarchical: bytes across nodes and
step time against workers (hierarchy.png).

Built like the other plots here: a matplotlib Figure on the Agg canvas, never pyplot,
written atomically as PNG and SVG (same stem). A run whose curve equals an earlier run's (or
lies within style.CLOSE of it) is drawn dashed over it and named so in the legend.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from lionsim.reports.between import curve, marks_at
from lionsim.reports.plots.bandwidth_axis import label_swept, mark_presets
from lionsim.reports.columns import library_text, model_text, rounds_of, run_name
from lionsim.reports.rates import axis_label, efficiency_of
from lionsim.reports.plots.estimate_marks import (mark_cap, mark_crossovers, mark_given_network, replaced_workers,
                                                  speedup_axis, speedup_label, through_crossings)
from lionsim.reports.plots.style import (DPI, MARKERS, TWIN_DASHES, bytes_log, bytes_tick, fit_title,
                                         labelled_log_axis, legend_below, mark_every, overlapping, run_colours, save,
                                         time_unit, twin_name)
from lionsim.transports import TRANSPORTS

MAX_VALUE_TICKS = 12  # up to this many swept worker counts, each is a tick
FIGSIZE = (10.0, 7.0)  # inches


def plot_estimate_sweep(frame: pd.DataFrame, crossings: pd.DataFrame, variable: str, path: Path,
                        workers: int | None = None) -> list[Path]:
    """Two panels sharing the x axis: step time per run (log scale), and speedup against the
    baseline with the crossovers where a run starts or stops winning, against the swept
    `variable` (lionsim.reports.columns.ESTIMATE_SWEEP_VARIABLES); the legend under them.
    `workers`: the --workers the command was given, named in the title where a workers sweep's
    counts stood in for it (estimate_marks.replaced_workers). Returns the PNG and SVG."""
    labels = list(dict.fromkeys(f"{s}@{t}" for s, t in zip(frame["strategy"], frame["transport"])))
    colours = run_colours(labels)
    baseline = frame["baseline"].iloc[0]
    scale, unit = time_unit(float(frame["step_s"].max()))
    fig = Figure(figsize=FIGSIZE, dpi=DPI, layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    first = frame.iloc[0]
    fixed = (f"{first['workers']} workers, " if variable != "workers" else "") + (
        f"{first['network']}{nodes_text(first)}, " if variable != "bandwidth"
        else f"{first['network']} inter link{nodes_text(first)}, ")
    # over the whole figure, not the top panel (which the legend leaves half of: a long model name was cut)
    spread = first.get("compute_spread")  # the expected step over uneven workers: say so, as the table does
    spread = f", compute spread {spread}" if isinstance(spread, str) and spread else ""
    replaced = replaced_workers(variable, frame["sweep_value"], workers)
    fig.suptitle(fit_title(f"Modelled step time against {variable}" + (f" ({replaced})" if replaced else "")
                           + f"\n{model_text(first)}, {fixed}{first['device']}, "
                           f"overlap {first['overlap'] if len(labels) == 1 else 'per run'}{spread}", FIGSIZE[0]),
                 fontsize=11)
    rows_of = {}
    for label in labels:
        strategy, transport = label.split("@", 1)
        rows_of[label] = frame[(frame["strategy"] == strategy) & (frame["transport"] == transport)].sort_values(
            "sweep_value")
    # a run hidden under an earlier one in either panel is dashed there; the legend names the twin
    # both panels are log scale: curves hide each other where their logs are close, not their values (0.8 and
    # 0.55 s a step are far apart on an axis up to 100 s, yet within its linear span's CLOSE share)
    same_top = overlapping([(l, r["sweep_value"], np.log10(r["step_s"])) for l, r in rows_of.items()])
    same_bottom = overlapping([(l, r["sweep_value"], np.log10(r["speedup"])) for l, r in rows_of.items()])
    points = max(len(r) for r in rows_of.values())
    rounds = rounds_of(frame)  # a local-step run named with its H, as the tables name it
    for k, (label, rows) in enumerate(rows_of.items()):
        name = run_name(*label.split("@", 1), rounds) + (" (baseline)" if label == baseline else "")
        style = {"color": colours[label], "linewidth": 1.6, "marker": MARKERS[k % len(MARKERS)], "markersize": 4.5,
                 "markevery": mark_every(points, k)}
        twin = same_top.get(label) or same_bottom.get(label)
        twin = twin and (run_name(*twin[0].split("@", 1), rounds), twin[1])  # the earlier run, named as it is
        dashes = TWIN_DASHES if label in same_top else "-"
        if variable == "bandwidth":  # step time linear in 1/bandwidth, as the crossings (between.py)
            xs, ys = curve(rows["sweep_value"], rows["step_s"] / scale)
            top.plot(xs, ys, label=twin_name(name, twin), linestyle=dashes,
                     **{**style, "markevery": marks_at(xs, rows["sweep_value"], style["markevery"])})
        else:
            top.plot(rows["sweep_value"], rows["step_s"] / scale, label=twin_name(name, twin), linestyle=dashes,
                     **style)
        # the line through the counts priced beside each crossover, the markers on the swept points alone
        bottom.plot(*through_crossings(rows, crossings, label, variable=variable), color=colours[label], linewidth=1.6,
                    linestyle=TWIN_DASHES if label in same_bottom else "-")
        bottom.plot(rows["sweep_value"], rows["speedup"], linestyle="none",
                    **{k: v for k, v in style.items() if k != "linewidth"})
    mark_crossovers(bottom, crossings[crossings["crossover"].notna()], colours,
                    float(frame["sweep_value"].min()), float(frame["sweep_value"].max()), top, rounds)
    bottom.axhline(1.0, color="black", linewidth=0.8)
    if variable == "bandwidth":
        mark_cap(frame, top, bottom)
        mark_given_network(frame, (top, bottom), top)
        mark_presets(frame, (top, bottom), top)  # a swept point at a preset's rate, named as the given one
    for ax in (top, bottom):
        ax.set_xscale("log")
        ax.grid(True, which="both", alpha=0.3, linewidth=0.6)
    top.set_yscale("log")
    step = frame["step_s"] / scale
    labelled_log_axis(top.yaxis, float(step.min()), float(step.max()))  # 60, 100, 200 ms, the top labelled
    values = sorted(frame["sweep_value"].unique())
    one_node = one_node_counts(frame, variable)  # nothing crosses a node there: said on the axis
    if variable == "workers" and len(values) <= MAX_VALUE_TICKS:
        bottom.set_xticks(values, [f"{v:g}" + ("\n(one node)" if v in one_node else "") for v in values])
        bottom.xaxis.set_minor_formatter(NullFormatter())  # the swept counts, as plain integers
    elif not (variable == "bandwidth" and label_swept(bottom.xaxis, values)):  # each swept point labelled
        labelled_log_axis(bottom.xaxis, float(values[0]), float(values[-1]))
        if one_node:  # too many counts to label each: shade the ones within one node
            for ax in (top, bottom):
                ax.axvspan(values[0], max(one_node), color="#888888", alpha=0.12, linewidth=0)
            top.text(0.01, 0.04, f"shaded: one node (up to {max(one_node):g} workers)", transform=top.transAxes,
                     fontsize=8, color="#444444", va="bottom", ha="left")
    log = speedup_axis(bottom, frame["speedup"])  # 90x and 0.9x apart: a linear axis flattened the latter
    top.set_ylabel(f"step time ({unit}, log scale)")
    bottom.set_ylabel(speedup_label("speedup", run_name(*baseline.split("@", 1), rounds), log, fig))  # folded to its panel's height
    # a workers sweep's speedup line runs through the counts priced either side of each crossover (a
    # step that jumps there, int8's int32 from 128 workers, shows in it), the step times join the swept ones
    between = variable == "workers" and crossings["crossover"].notna().any()
    bottom.set_xlabel("workers (log scale)" + ("\nmarkers: the swept counts; the speedup's line also runs through the "
                                               "counts priced either side of a crossover" if between else "")
                      if variable == "workers" else axis_label(efficiency_of(frame))
                      + "\nmarkers: the priced points; lines: linear in 1 / bandwidth between them")
    legend_below(fig, top.get_legend_handles_labels()[0])
    return save(fig, Path(path))


def nodes_text(row) -> str:
    """" (8 GPUs a node, library: nccl over sockets)": what the network's nodes hold and the library
    that priced comm, as estimate's title says them; "" for a CSV without those columns."""
    parts = []
    if "gpus_per_node" in row and pd.notna(row["gpus_per_node"]):
        parts.append(f"{int(row['gpus_per_node']):,} GPU{'s' if int(row['gpus_per_node']) != 1 else ''} a node")
    if library := library_text(row):
        parts.append(f"library: {library}")
    return f" ({', '.join(parts)})" if parts else ""


def one_node_counts(frame: pd.DataFrame, variable: str) -> set[float]:
    """The swept worker counts that fit in one node of several GPUs (nothing crosses a node there);
    empty for a bandwidth sweep or one GPU a node (every count crosses from 2)."""
    if variable != "workers" or "gpus_per_node" not in frame.columns:
        return set()
    per_node = int(frame["gpus_per_node"].iloc[0])
    return {float(v) for v in frame["sweep_value"].unique() if per_node > 1 and v <= per_node}


def hierarchical(frame: pd.DataFrame) -> bool:
    """Whether a workers sweep holds a hierarchical transport and the bytes across nodes."""
    return "inter_bytes" in frame.columns and any(
        t in TRANSPORTS and TRANSPORTS.get(t).hierarchical for t in frame["transport"].unique())


def plot_hierarchy(frame: pd.DataFrame, path: Path, workers: int | None = None) -> list[Path]:
    """Flat against hierarchical transports over the swept worker counts: the bytes one node
    sends across nodes per step (top) and the step time (bottom), each on a log axis its label
    names with the unit; the legend under them. Hierarchical runs dashed with open markers.
    `workers`: as plot_estimate_sweep's. Returns the PNG and SVG."""
    labels = list(dict.fromkeys(f"{s}@{t}" for s, t in zip(frame["strategy"], frame["transport"])))
    colours = run_colours(labels)
    baseline = frame["baseline"].iloc[0]
    first = frame.iloc[0]
    scale, unit = time_unit(float(frame["step_s"].max()))
    fig = Figure(figsize=FIGSIZE, dpi=DPI, layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    replaced = replaced_workers("workers", frame["sweep_value"], workers)
    fig.suptitle(fit_title("Flat and hierarchical exchanges against workers" + (f" ({replaced})" if replaced else "")
                           + f"\n{model_text(first)}, {first['network']} "
                           f"({first['gpus_per_node']} per node), {first['device']}", FIGSIZE[0]), fontsize=11)
    positive = frame["inter_bytes"][frame["inter_bytes"] > 0]
    floor = float(positive.min()) / 4 if len(positive) else 1.0  # where 0 bytes (one node) is drawn
    for k, label in enumerate(labels):
        strategy, transport = label.split("@", 1)
        rows = frame[(frame["strategy"] == strategy) & (frame["transport"] == transport)].sort_values("sweep_value")
        hier = TRANSPORTS.get(transport).hierarchical if transport in TRANSPORTS else False
        style = {"color": colours[label], "linewidth": 1.6, "marker": MARKERS[k % len(MARKERS)], "markersize": 5,
                 "linestyle": "--" if hier else "-", "markerfacecolor": "white" if hier else colours[label],
                 "markevery": mark_every(len(rows), k)}
        name = run_name(strategy, transport, rounds_of(frame)) + (" (baseline)" if label == baseline else "")
        name += " (hierarchical)" if hier else ""
        across = rows["inter_bytes"].where(rows["inter_bytes"] > 0)  # 0 within one node: no point on a log axis
        top.plot(rows["sweep_value"], across, label=name, **style)
        bottom.plot(rows["sweep_value"], rows["step_s"] / scale, **style)
        within = rows[rows["inter_bytes"] <= 0]
        if len(within):  # drawn on the axis floor below, named there, rather than dropped
            top.plot(within["sweep_value"], [floor] * len(within), color=colours[label], marker=style["marker"],
                     markersize=5, markerfacecolor="white" if hier else colours[label], linestyle="none",
                     clip_on=False, zorder=4)
    for ax in (top, bottom):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3, linewidth=0.6)
    if (frame["inter_bytes"] <= 0).any():
        top.set_ylim(bottom=floor)
        top.text(0.01, 0.04, "on the floor: 0 B across nodes (all workers in one node)", transform=top.transAxes,
                 fontsize=8, color="#444444", va="bottom", ha="left")
    if len(positive) and not (frame["inter_bytes"] <= 0).any():
        labelled_log_axis(top.yaxis, float(positive.min()), float(positive.max()), bytes_tick)
    else:  # the floor (0 B) is the axis's bottom: matplotlib's labels
        bytes_log(top.yaxis)
    step = frame["step_s"] / scale
    labelled_log_axis(bottom.yaxis, float(step.min()), float(step.max()))
    values = sorted(frame["sweep_value"].unique())
    if len(values) <= MAX_VALUE_TICKS:
        bottom.set_xticks(values, [f"{v:g}" for v in values])
        bottom.xaxis.set_minor_formatter(NullFormatter())
    top.set_ylabel("bytes across nodes per node\nper step (bytes, log scale)")
    bottom.set_ylabel(f"step time ({unit}, log scale)")
    bottom.set_xlabel("workers (log scale)")
    legend_below(fig, top.get_legend_handles_labels()[0])
    return save(fig, Path(path))
