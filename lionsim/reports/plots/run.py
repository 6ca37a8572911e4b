"""The plots of one bench run: loss and eval accuracy against step and wall clock, the time
breakdown (lionsim.reports.plots.breakdown), bytes per worker per step and the step-time
distribution (lionsim.reports.plots.steptimes).

Every run keeps one style (colour, line style) in every plot: its first-appearance order.
Curves that are identical to an earlier run's (two strategies with bit-identical losses)
are drawn dashed over it and named in the legend, so neither hides the other.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from lionsim.errors import LionsimError
from lionsim.numbers import bytes_text
from lionsim.reports.columns import eval_metric, label_name, metric_axis, off_sim, recorded_rounds, run_label
from lionsim.reports.plots.breakdown import breakdown_plot
from lionsim.reports.plots.steptimes import step_time_plot
from lionsim.reports.plots.style import (BYTES_FORMATTER, TWIN_DASHES, display_label, figure,
                                         labelled_linear_axis, legend_outside, mark_every, marker_size, overlapping, run_styles,
                                         save, time_unit, twin_name)
from lionsim.reports.plots.titles import ratio_text, subtitle
from lionsim.reports.titles import compute_measured
from lionsim.reports.summary import final_window, ran_steps, reach, smooth, split_runs

PLOT_SMOOTH_FRACTION = 0.02  # light smoothing: a trailing mean over 2% of the steps
MARK_SIZE = 8  # points: a "reaches the target" triangle
RING = 6  # points: each open triangle round a coinciding one is this much larger
COINCIDE = 0.005  # of the x span and of the target: triangles this close are one point (ringed, RING)
END_MARGIN = 0.025  # of the x span: the step axis runs this far past the last step, so its marks show whole
EDGE_MARGIN = 0.15  # inches the bytes plot keeps between its axes and the image's edge
BAR_HEIGHT = 0.6  # of a bytes-plot row: the bar, centred on the row
WHISKER_LANE = 0.38  # of a row, below its centre: the min-max whisker runs under its bar, not through it
NOTE_PAD = 6  # pixels between a bytes note's end and the axes' right edge
BAR_LABEL_CHARS = 26  # a bytes-plot run name longer than this goes on two lines (bar_label)


def twins(runs, cols: tuple[str, ...], x_col: str) -> dict[str, tuple[str, bool]]:
    """{label: (an earlier run's label, exactly equal)} for runs whose curves of every column of
    `cols` the figure draws (the loss plot: training loss and eval loss) against x_col equal an
    earlier run's, or lie within CLOSE of the plot's y span of them everywhere: two runs whose
    eval points match but whose training losses differ are not "identical" in a plot of both."""
    def curve(rows):
        drawn = [rows[rows[col].notna()] for col in cols]
        return (pd.concat([d[x_col] for d in drawn], ignore_index=True),
                pd.concat([d[col] for d, col in zip(drawn, cols)], ignore_index=True))

    return overlapping([(label, *curve(rows)) for label, rows in runs])


def _name(label: str, baseline: str | None, same: dict[str, tuple[str, bool]], rows: pd.DataFrame) -> str:
    """A run's legend entry: its label, its twin, and where it diverged (as the bench table says it):
    a run that diverged at step 2 is one point, which the legend says is all there is."""
    at = rows["diverged_at_step"].max() if "diverged_at_step" in rows.columns else math.nan
    return twin_name(display_label(label, baseline), same.get(label)) + (
        "" if pd.isna(at) else f" (diverged at step {int(at)})")


def _clock(steps: pd.DataFrame, meta: dict | None) -> tuple[str, str]:
    """What the time axis is, (its words, what they are): measured step times on gloo/nccl; on sim
    modelled, or with --compute measured the compute timed here and the network modelled."""
    real = off_sim(steps)
    if real:
        return "measured wall clock", ""
    if compute_measured(meta):
        return "wall clock", "compute measured, network modelled"
    return "modelled wall clock", ""


def _x_axis(steps: pd.DataFrame, x_col: str, meta: dict | None = None) -> tuple[float, str, str]:
    """(divisor, axis label, title words) for a step or wall-clock x axis."""
    if x_col == "step":
        return 1.0, "step", "step"  # callers set an integer locator
    scale, unit = time_unit(float(steps["sim_time_s"].max()))
    words, how = _clock(steps, meta)
    return scale, f"{words} ({how + ', ' if how else ''}{unit})", words


def _one_point(evaluations: list[int]) -> str:
    """What a legend entry or axis adds where every run was evaluated once: a point each, no line."""
    return " (one evaluation a run: a point each)" if evaluations and max(evaluations) == 1 else ""


def _line(ax: Axes, x, y, style: dict, twin: bool, **kwargs):
    kw = {"color": style["color"], "linestyle": style["linestyle"], "linewidth": style["linewidth"]}
    if twin:
        kw["linestyle"] = TWIN_DASHES
    kw.update(kwargs)
    return ax.plot(x, y, **kw)[0]


def _cap_divergence(ax: Axes, runs) -> None:
    """Keep a diverging run (loss far above where every run started) from flattening the others:
    show 1.5x the highest starting loss at most; the diverging curve visibly leaves the top."""
    starts = [rows["loss"].dropna().iloc[0] for _, rows in runs if rows["loss"].notna().any()]
    if not starts:
        return
    cap = 1.5 * max(starts)
    if not (math.isfinite(cap) and ax.get_ylim()[1] > cap):
        return
    values = pd.concat([rows[col] for _, rows in runs for col in ("loss", "eval_loss")])
    low = float(values[values <= cap].min())
    ax.set_ylim(low - 0.05 * (cap - low), cap)


def _target_line(ax: Axes, summary: pd.DataFrame | None, runs, styles: dict, x_col: str, scale: float) -> list:
    """The time-to-target loss as a dotted line, named with where it came from, and where each
    run reaches it as a triangle in the run's colour at the loss it marks: its smoothed loss (the
    table's definition: a trailing mean over 10% of the steps, heavier than the lines' light
    smoothing) at the first step (or time) that is at or below the line. Lifted above the line,
    stacked where runs crowd, the triangles' height meant nothing (0.76-0.95 for a target of 0.722)."""
    if summary is None or "target_loss" not in summary.columns or summary["target_loss"].isna().all():
        return []
    target = float(summary["target_loss"].iloc[0])
    rule = summary["target_rule"].iloc[0] if "target_rule" in summary.columns else None  # older summaries: no rule
    line = ax.axhline(target, color="black", linestyle=":", linewidth=1.2, zorder=1)
    line.set_label(f"target {target:.4g}" + (f"\n({rule})" if isinstance(rule, str) else ""))
    window = final_window(max(len(rows) for _, rows in runs))  # summarize's window, shared by every run
    reached = []
    for label, rows in runs:
        time, step, loss = reach(rows, target, window)
        if step == step:  # NaN: never reached
            reached.append(((step if x_col == "step" else time) / scale, loss, styles[label]["color"]))
    span = max((x for x, _, _ in reached), default=0.0) or 1.0
    placed: list[tuple[float, float]] = []
    for x, loss, colour in reached:
        # runs reaching it at the same point (identical curves) each show: a later one is an open
        # triangle round the earlier, RING larger each; near ones overlap in part, each at its loss
        ring = sum(abs(x - a) <= COINCIDE * span and abs(loss - b) <= COINCIDE * abs(target) for a, b in placed)
        placed.append((x, loss))
        face = {"markerfacecolor": "none", "markeredgecolor": colour, "markeredgewidth": 1.4} if ring else {
            "markeredgecolor": "black", "markeredgewidth": 0.8}
        ax.plot([x], [loss], marker="v", markersize=MARK_SIZE + RING * ring, linestyle="none", zorder=6 - 0.01 * ring,
                color=colour, clip_on=False, **face)
    if not reached:
        return [line]
    mark = Line2D([], [], color="grey", marker="v", markersize=MARK_SIZE, markeredgecolor="black", markeredgewidth=0.8,
                  linestyle="none", label="reaches the target: the trailing\nmean (as the table) where it first\n"
                                          "is at or below the target")
    return [line, mark]


def _step_axis(ax: Axes, steps: pd.DataFrame) -> None:
    """Round ticks and the last step, labelled; the axis runs END_MARGIN past the last step, so a
    mark there (an eval's diamond or dot, a target triangle, a curve's marker) shows whole rather
    than cut in half by the axes' edge."""
    end = float(steps["step"].max())
    labelled_linear_axis(ax.xaxis, end)
    ax.set_xlim(0, end * (1 + END_MARGIN))


def _loss_plot(runs, styles, baseline, steps, x_col: str, path: Path, summary: pd.DataFrame | None = None,
               meta: dict | None = None) -> list[Path]:
    """Training loss (faint raw + light trailing mean) against x_col, eval loss as diamonds, and
    the time-to-target loss."""
    scale, xlabel, words = _x_axis(steps, x_col, meta)
    fig, (ax,) = figure(f"Training loss vs {words}", subtitle(steps, meta))
    same = twins(runs, ("loss", "eval_loss"), x_col)
    handles, evaluations, has_raw = [], [], False
    for k, (label, rows) in enumerate(runs):
        style, twin = styles[label], label in same
        x = rows[x_col] / scale
        window = max(1, math.ceil(PLOT_SMOOTH_FRACTION * len(rows)))
        if window > 1:
            has_raw = True
            ax.plot(x, rows["loss"], color=style["color"], alpha=0.25, linewidth=0.8)
        # sparse markers in the run's own shape (a few steps: larger, as they are all the curve shows)
        single = {"marker": style["marker"], "markersize": marker_size(len(rows), 5),
                  "markevery": mark_every(len(rows), k)}
        handles.append(_line(ax, x, smooth(rows["loss"], window), style, twin, label=_name(label, baseline, same, rows),
                             **single))
        evals = rows[rows["eval_loss"].notna()]
        if len(evals):
            evaluations.append(len(evals))
            # Dashed with small markers: stays readable with a hundred evals; a few are larger
            # (marker_size): one eval is one point, no line, and a small diamond was lost
            ax.plot(evals[x_col] / scale, evals["eval_loss"], color=style["color"], linestyle="--", linewidth=1.0,
                    marker="D", markersize=marker_size(len(evals), 3.5), markeredgecolor="black",
                    markeredgewidth=0.4, zorder=3, markevery=mark_every(len(evals), k))
    if evaluations:
        handles.append(Line2D([], [], color="grey", linestyle="--", linewidth=1.0, marker="D",
                              markersize=marker_size(min(evaluations), 3.5), markeredgecolor="black",
                              markeredgewidth=0.4, label="eval loss" + _one_point(evaluations)))
    if has_raw:
        handles.append(Line2D([], [], color="grey", alpha=0.35, linewidth=0.8, label="raw (per step)"))
    handles += _target_line(ax, summary, runs, styles, x_col, scale)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("loss (mean over workers)")
    if x_col == "step":
        _step_axis(ax, steps)
    else:
        ax.set_xlim(left=0)
    _cap_divergence(ax, runs)
    legend_outside(ax, handles)
    return save(fig, path)


def _eval_acc_plot(runs, styles, baseline, steps, x_col: str, path: Path, meta: dict | None = None) -> list[Path]:
    """The workload's eval metric (accuracy, or its own by name) against step or wall clock:
    against the clock, this is time to accuracy."""
    scale, xlabel, words = _x_axis(steps, x_col, meta)
    metric, higher = eval_metric(steps)
    ylabel, factor = metric_axis(metric, higher)
    samples = ((meta or {}).get("evaluation") or {}).get("samples")
    if factor == 100.0 and isinstance(samples, int) and samples > 0:  # a step of the axis may be one sample
        ylabel += f"\non {samples:,} held-out samples (one: {100 / samples:.2g} pp)"
    title = f"Eval {metric} vs step" if x_col == "step" else f"Time to {metric}: eval {metric} vs {words}"
    fig, (ax,) = figure(title, subtitle(steps, meta))
    evaluated = [(label, rows[rows["eval_acc"].notna()]) for label, rows in runs]
    evaluated = [(label, rows) for label, rows in evaluated if len(rows)]
    same = twins(evaluated, ("eval_acc",), x_col)
    for k, (label, rows) in enumerate(evaluated):
        _line(ax, rows[x_col] / scale, rows["eval_acc"] * factor, styles[label], label in same,
              marker=styles[label]["marker"], markersize=marker_size(len(rows), 4.5), markevery=mark_every(len(rows), k),
              label=_name(label, baseline, same, rows))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    # plain numbers: runs evaluated once, close together, would read "+2.094" over 1e-4 ticks
    ax.ticklabel_format(axis="both", style="plain", useOffset=False)
    if x_col == "step":
        _step_axis(ax, steps)
    else:  # past the last eval as the step axis is: a lone point at the end was cut in half by the edge
        ax.set_xlim(0, max(float(rows[x_col].max()) / scale for _, rows in evaluated) * (1 + END_MARGIN))
    once = _one_point([len(rows) for _, rows in evaluated]).strip(" ()")
    legend_outside(ax, title=once or None)
    return save(fig, path)


def bar_label(label: str, baseline: str | None) -> str:
    """A run's name beside its bar: on one line up to BAR_LABEL_CHARS, else the strategy over
    "@transport", so that the longest names (streaming-diloco@hier:fp8-e5m2-allreduce, the
    baseline's marked too) leave the bars and their texts the figure's width at the same font."""
    text = display_label(label, baseline)
    if len(text) <= BAR_LABEL_CHARS or "@" not in label:
        return text
    strategy, transport = label.split("@", 1)
    return f"{display_label(strategy, strategy if label == baseline else None)}\n@{transport}"


def _bytes_plot(runs, styles, baseline, steps, path: Path, meta: dict | None = None) -> list[Path]:
    """Bytes one worker sends per step, per run (one rank on gloo/nccl, whose wire_bytes are a
    rank's, all its workers' together: so say the title and axis): the mean as a bar on a linear
    axis from zero (so bar lengths compare as the byte counts do), min-max whiskers, each labelled
    with its bytes, bits per parameter and its ratio to the baseline's bytes."""
    sender = "rank" if off_sim(steps) else "worker"
    labels = [label for label, _ in runs]
    ran = [ran_steps(rows) for _, rows in runs]  # a diverged step sent nothing: not a step's bytes
    mean, low, high = ([float(getattr(rows["wire_bytes"], f)()) if len(rows) else 0.0 for rows in ran]
                       for f in ("mean", "min", "max"))
    base = mean[labels.index(baseline)] if baseline in labels else mean[0]
    row = 0.56 if any("\n" in bar_label(label, baseline) for label in labels) else 0.42  # inches a bar takes
    fig, (ax,) = figure(f"Bytes sent per {sender} per step", subtitle(steps, meta),
                        size=(10.0, max(3.2, 1.8 + row * len(labels))))
    y = np.arange(len(labels))
    for i, label in enumerate(labels):
        ax.barh(i, mean[i], height=BAR_HEIGHT, color=styles[label]["color"], alpha=0.85)
        if high[i] > low[i]:  # the bytes vary over steps: the range in a lane under the bar (the y axis is
            # inverted), clear of it: drawn through the bar, a local-step method's 0 to max ran over the mean
            ax.errorbar(mean[i], i + WHISKER_LANE, xerr=[[mean[i] - low[i]], [high[i] - mean[i]]], color="black",
                        capsize=3, linewidth=0.8)
    top = max(max(high), 1.0)
    notes = []
    for i, (label, rows) in enumerate(runs):
        bits = f"{rows['bits_per_param_up'].mean():.3g}/{rows['bits_per_param_down'].mean():.3g} bits/param"
        ratio = "(the baseline)" if label == baseline else ratio_text(mean[i], base)
        diverged = rows["diverged_at_step"].max() if "diverged_at_step" in rows else math.nan
        before = {0: "no step before it", 1: "the mean of the step before"}.get(len(ran[i]),
                                                                               f"the mean of the {len(ran[i])} steps before")
        note = "" if math.isnan(diverged) else f"\ndiverged at step {int(diverged)}: {before}"
        # just past the bar's end, above its whisker's lane; the axis widens to hold it (_room_for_notes)
        notes.append(ax.text(max(mean[i], 0.0) + 0.01 * top, i, f"{bytes_text(mean[i])}  {ratio}  ({bits}){note}",
                             va="center", fontsize=8))
    # ticks over the bars' range only, the last the first tick past the largest bar or whisker
    ticks = [t for t in MaxNLocator(6).tick_values(0, top) if t >= 0]
    ticks = [t for t in ticks if t <= min(x for x in ticks if x >= top)]
    ax.set_xticks(ticks)
    ax.set_xlim(0, ticks[-1])
    ax.xaxis.set_major_formatter(BYTES_FORMATTER)
    ax.set_yticks(y, [bar_label(label, baseline) for label in labels])
    for tick, label in zip(ax.get_yticklabels(), labels):
        tick.set_color(styles[label]["color"])
    ax.set_ylim(len(labels) - 1 + WHISKER_LANE + 0.22, -0.5)  # inverted (the first run on top); the last lane clear
    ax.grid(False, axis="y")
    ax.set_xlabel(f"bytes per {sender} per step (linear axis from 0)\nbar: mean, whisker under it: min-max over steps")
    fig.get_layout_engine().set(w_pad=EDGE_MARGIN)
    _room_for_notes(fig, ax, notes)
    return save(fig, path)


def _room_for_notes(fig, ax: Axes, notes: list, passes: int = 3) -> None:
    """Widen `ax`'s x axis past its last tick until every note ends inside the axes (its right
    border drawn, nothing past it): a note of w pixels starting at x fits when the axis runs to at
    least x * W / (W - w - NOTE_PAD), W the axes' width. Measured on the laid-out figure, again
    after each widening, as the layout then gives the axes another width; laid out without
    rasterizing (a third of a full draw's time, the same extents: the saved files are unchanged)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    low, end = ax.get_xlim()  # the last tick: the axis runs at least this far
    for _ in range(passes):
        fig.draw_without_rendering()
        renderer = canvas.get_renderer()
        width = ax.get_window_extent(renderer).width
        need = end
        for note in notes:
            room = width - note.get_window_extent(renderer).width - NOTE_PAD
            start = note.get_position()[0] - low
            need = max(need, low + start * width / room if room > 0.2 * width else low + 5 * start)
        if math.isclose(need, ax.get_xlim()[1], rel_tol=1e-3):
            return
        ax.set_xlim(low, need)  # from the last tick each pass: the axes' width is the layout's, now known


def plot_run(out_dir: Path, steps: pd.DataFrame, summary: pd.DataFrame, meta: dict | None = None) -> list[Path]:
    """Draw a run's plots into out_dir (PNG and SVG each); return their paths:
    loss_vs_time, loss_vs_step, time_breakdown, bytes_per_step, step_time_distribution
    (lionsim.reports.plots.steptimes), and where accuracy was evaluated eval_acc_vs_time and
    eval_acc_vs_step. `meta` (run.json) names the data split, momentum sync and measured link
    in the titles, and each local-step run's H: every plot names the run as the tables do (`diloco
    H=5@fp32-allreduce`: columns.run_name)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = split_runs(steps)
    labels = [label for label, _ in runs]
    summary_labels = [run_label(s, t) for s, t in zip(summary["strategy"], summary["transport"])]
    if summary_labels != labels:
        raise LionsimError(f"summary runs {', '.join(summary_labels)} differ from the steps' runs {', '.join(labels)}")
    baseline = summary["baseline"].iloc[0] if "baseline" in summary.columns else None
    rounds = recorded_rounds((meta or {}).get("runs"))
    if rounds:  # each run by its name from here on: legends, tick labels and twins all say its H
        runs = [(label_name(label, rounds), rows) for label, rows in runs]
        labels = [label for label, _ in runs]
        baseline = label_name(baseline, rounds) if baseline is not None else None
        summary = summary.assign(run=[label_name(label, rounds) for label in summary_labels])  # quantiles' key
    styles = run_styles(labels, baseline)
    paths = [
        *_loss_plot(runs, styles, baseline, steps, "sim_time_s", out_dir / "loss_vs_time.png", summary, meta),
        *_loss_plot(runs, styles, baseline, steps, "step", out_dir / "loss_vs_step.png", summary, meta),
        *breakdown_plot(runs, styles, baseline, steps, out_dir / "time_breakdown.png", subtitle(steps, meta), meta),
        *_bytes_plot(runs, styles, baseline, steps, out_dir / "bytes_per_step.png", meta),
        *step_time_plot(runs, styles, baseline, steps, out_dir / "step_time_distribution.png", meta,
                        subtitle(steps, meta), summary),
    ]
    if steps["eval_acc"].notna().any():
        paths += _eval_acc_plot(runs, styles, baseline, steps, "sim_time_s", out_dir / "eval_acc_vs_time.png", meta)
        paths += _eval_acc_plot(runs, styles, baseline, steps, "step", out_dir / "eval_acc_vs_step.png", meta)
    return paths
