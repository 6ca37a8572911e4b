"""The per-step time breakdown of a run set, readable when one part dwarfs the others.

Three panels share the runs' rows: the mean time of each part stacked (absolute), the same
parts as shares of the step (100% stacked), and every part on a log axis (dots), where a
part 1000x smaller than compute is still read off exactly.

Where the steps carry comm_exposed_s (overlap modelled), the stacked parts are compute,
encode, exposed comm, decode, update, which add up to the step; the communication hidden
under backward (comm_s - comm_exposed_s) follows the step end, hatched. Without it the
parts are TIME_COLUMNS, and a step longer than its parts shows the rest as "other". Where a
compute spread made the step wait for its slowest worker (wait_s, in step_s), that wait is a part
of its own after compute, named as the table's footnote names it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.legend_handler import HandlerTuple
from matplotlib.lines import Line2D

from lionsim.reports.columns import TIME_COLUMNS
from lionsim.reports.plots.style import context, display_label, figure, legend_outside, save, time_unit

# Muted component colours, unlike the saturated run colours of the tick labels; comm is the
# darkest because it is what the strategies compete on.
COMPONENT_COLOURS = {
    "compute_s": "#c4c4c4",
    "encode_s": "#e8c36a",
    "comm_s": "#3d3d3d",
    "comm_exposed_s": "#3d3d3d",
    "decode_s": "#a3bcd6",
    "update_s": "#9cc89c",
    "wait_s": "#d9a0a0",
}
NAMES = {"compute_s": "compute", "encode_s": "encode", "comm_s": "comm", "comm_exposed_s": "comm, exposed",
         "decode_s": "decode", "update_s": "update", "wait_s": "wait for the slowest worker"}
SHARE_LABEL_MIN = 8.0  # % of the step: shares at least this wide are written on the bar


def _mean(rows, col: str) -> float:
    """A part's mean time per step; wait_s, absent or empty where no run waited, counts 0."""
    if col == "wait_s":
        return float(rows[col].fillna(0.0).mean()) if col in rows.columns else 0.0
    return float(rows[col].mean())


def _parts(runs) -> tuple[list[str], dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """(stacked part columns, their mean per run, mean step_s per run, hidden comm per run)."""
    exposed = all("comm_exposed_s" in rows.columns and rows["comm_exposed_s"].notna().all() for _, rows in runs)
    cols = [c if c != "comm_s" else "comm_exposed_s" for c in TIME_COLUMNS] if exposed else list(TIME_COLUMNS)
    if any("wait_s" in rows.columns and rows["wait_s"].fillna(0.0).gt(0.0).any() for _, rows in runs):
        cols.insert(cols.index("compute_s") + 1, "wait_s")  # the slowest worker's lead, after compute
    means = {c: np.array([_mean(rows, c) for _, rows in runs]) for c in [*cols, "comm_s"]}
    step = np.array([float(rows["step_s"].mean()) for _, rows in runs])
    hidden = np.clip(means["comm_s"] - means["comm_exposed_s"], 0.0, None) if exposed else np.zeros(len(runs))
    return cols, means, step, hidden


HOLLOW = ("comm_s",)
"""Parts drawn as an open marker: total comm beside the filled exposed comm of the same colour,
so the two read apart at a glance (same diamond, one filled, one open)."""


def _marker(marker: str, col: str) -> Line2D:
    if col in HOLLOW:
        return Line2D([], [], linestyle="", marker=marker, color=COMPONENT_COLOURS[col], markerfacecolor="white",
                      markeredgecolor=COMPONENT_COLOURS[col], markeredgewidth=1.6, markersize=6)
    return Line2D([], [], linestyle="", marker=marker, color=COMPONENT_COLOURS[col], markeredgecolor="black",
                  markeredgewidth=0.5, markersize=6)


def breakdown_title(meta: dict | None) -> str:
    """What the bars are: each part's mean over the run's steps, and how each part's per-step time
    was obtained, in the words the run's tables use (lionsim.reports.obtained, from run.json): a
    modelled part priced on what, a measured one the median of its kind of step, and on a gloo/nccl
    run the link its comm was measured on (titles.measured_on, as the bench table's caption says it)."""
    from lionsim.reports.obtained import UNKNOWN, run_times
    from lionsim.reports.titles import measured_on

    return f"Mean time per step over the run's steps, by part\n{run_times(meta, link=measured_on(meta)) if meta else UNKNOWN}"


def breakdown_plot(runs, styles, baseline, steps, path: Path, subtitle: str | None = None,
                   meta: dict | None = None) -> list[Path]:
    """The time_breakdown figure of `runs`; `meta` (run.json) says in its title how the times were obtained."""
    labels = [label for label, _ in runs]
    cols, means, step, hidden = _parts(runs)
    stacked = sum(means[c] for c in cols)
    scale, unit = time_unit(float(max((stacked + hidden).max(), step.max(), 1e-12)))
    n = len(labels)
    fig, (absolute, share, log) = figure(
        breakdown_title(meta), subtitle or context(steps), ncols=3, sharey=True,
        size=(15.0, max(3.6, 1.9 + 0.45 * n)), gridspec_kw={"width_ratios": [1.25, 1.0, 1.0]})
    y = np.arange(n)
    left = np.zeros(n)
    for col in cols:
        absolute.barh(y, means[col] / scale, left=left, height=0.6, color=COMPONENT_COLOURS[col], label=NAMES[col])
        left = left + means[col] / scale
    steps_scaled = step / scale
    other = np.where(steps_scaled > left * (1 + 1e-9), steps_scaled - left, 0.0)
    if other.any():  # a step longer than its parts holds time no part claims: show it
        rows = np.flatnonzero(other)
        absolute.barh(rows, other[rows], left=left[rows], height=0.6, color="white", edgecolor="grey", hatch="//",
                      linewidth=0.6, label="other (step - parts)")
        left = left + other
    if hidden.any():
        rows = np.flatnonzero(hidden)
        absolute.barh(rows, hidden[rows] / scale, left=left[rows], height=0.6, color="white", edgecolor="#3d3d3d",
                      hatch="xx", linewidth=0.6, label="comm hidden under backward\n(not in the step)")
    ends = left + hidden / scale
    biggest = float(ends.max()) if ends.max() > 0 else 1.0
    overlap = False
    for i in range(n):
        text = f"step {steps_scaled[i]:.3g} {unit}"
        if not hidden.any() and steps_scaled[i] < left[i] * (1 - 1e-9):  # overlap without comm_exposed_s
            text += f" ({left[i] - steps_scaled[i]:.3g} {unit} overlapped)"
            absolute.plot([steps_scaled[i]] * 2, [i - 0.4, i + 0.4], color="black", linewidth=2.0)
            overlap = True
        absolute.text(ends[i] + 0.01 * biggest, i, text, va="center", fontsize=8)
    absolute.set_xlim(0, biggest * 1.45)  # room for the annotations
    absolute.set_xlabel(f"mean time per step ({unit})")
    absolute.set_title("absolute", fontsize=10)

    total = stacked + other * scale
    left = np.zeros(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        for col in [*cols, "other"]:
            values = means[col] if col != "other" else other * scale
            pct = np.where(total > 0, 100.0 * values / total, 0.0)
            if col == "other" and not pct.any():
                continue
            colour = COMPONENT_COLOURS.get(col, "white")
            share.barh(y, pct, left=left, height=0.6, color=colour, edgecolor="grey" if col == "other" else None,
                       hatch="//" if col == "other" else None, linewidth=0.6)
            for i in np.flatnonzero(pct >= SHARE_LABEL_MIN):
                dark = col in ("comm_s", "comm_exposed_s")
                share.text(left[i] + pct[i] / 2, i, f"{pct[i]:.0f}%", ha="center", va="center", fontsize=7.5,
                           color="white" if dark else "black")
            left = left + pct
    share.set_xlim(0, 100)
    share.set_xlabel("share of the step (%)")
    share.set_title("share (100% stacked)", fontsize=10)

    markers = {"compute_s": "o", "encode_s": "s", "comm_s": "D", "comm_exposed_s": "D", "decode_s": "^",
               "update_s": "v", "wait_s": "P"}
    shown = [*cols, "comm_s"] if "comm_exposed_s" in cols else cols
    positive = [means[c][means[c] > 0] for c in shown]
    floor = min((float(v.min()) for v in positive if len(v)), default=1.0)
    for k, col in enumerate(shown):
        values = means[col]
        mask = values > 0
        offset = (k - (len(shown) - 1) / 2) * 0.09  # parts of one run side by side, not on top of each other
        hollow = col in HOLLOW
        log.scatter(values[mask] / scale, y[mask] + offset, marker=markers[col], s=28,
                    facecolor="white" if hollow else COMPONENT_COLOURS[col],
                    edgecolor=COMPONENT_COLOURS[col] if hollow else "black", linewidth=1.6 if hollow else 0.5, zorder=3)
    if any(len(v) for v in positive):
        log.set_xscale("log")
        log.set_xlim(floor / scale / 3.0, biggest * 3.0)
    log.set_xlabel(f"time per step ({unit}, log scale; zero parts not shown)")
    log.set_title("each part (log axis)\nmarkers as in the legend", fontsize=10)
    log.grid(True, which="minor", axis="x", alpha=0.15, linewidth=0.4)

    absolute.set_yticks(y, [display_label(label, baseline) for label in labels])
    for tick, label in zip(absolute.get_yticklabels(), labels):
        tick.set_color(styles[label]["color"])
        tick.set_fontweight("bold")
    absolute.invert_yaxis()  # first run on top, as in the table
    for ax in (absolute, share, log):
        ax.grid(False, axis="y")
    # One entry per part: its bar colour beside its log-panel marker. Exposed and total comm
    # share the colour and shape and differ in fill (total open), so total comm (log panel only) gets its own.
    bars, names = absolute.get_legend_handles_labels()
    handles, labels = [], []
    for bar, name in zip(bars, names):
        col = next((c for c in cols if NAMES[c] == name), None)
        handles.append(bar if col is None else (bar, _marker(markers[col], col)))
        labels.append(name)
    if "comm_exposed_s" in cols:
        handles.append(_marker(markers["comm_s"], "comm_s"))
        labels.append("comm, total (exposed + hidden;\nlog panel only: open)")
    if overlap:
        handles.append(Line2D([], [], color="black", linewidth=2.0))
        labels.append("modelled step\n(with overlap)")
    legend_outside(fig, handles, labels=labels, handler_map={tuple: HandlerTuple(ndivide=None, pad=0.6)})
    return save(fig, path)
