"""`lionsim estimate --from-run`'s plots, drawn from estimate.csv or sweep.csv and its crossovers alone.

    to_target.png   one estimate: each run's time to target at scale, the band as whiskers (the
                    caption says what they are: BAND), and
                    the runs with no figure named (not reached, not trained)
                    a sweep: time to target against the swept workers or bandwidth (the band
                    shaded, the measured worker counts marked), and its speedup against the
                    baseline with the crossovers where a run starts or stops winning; a run
                    with no figure anywhere is named in the legend with why (not reached, not
                    trained); against bandwidth the network given, and a capped fabric's cap

Each caption says what the figures rest on: the target loss, where the steps come from (the
baseline's from --tokens or --steps, else its steps to target in the run), and the proxy model the
convergence came from, where it was trained; where the figures are extrapolated beyond the worker
counts it measured; and which runs do not fit on their worker (labelled "(does not fit)").

Built like the other plots here: a matplotlib Figure on the Agg canvas, written as PNG and SVG.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from lionsim.numbers import plural, speedup_text
from lionsim.reports.between import curve, marks_at
from lionsim.reports.plots.bandwidth_axis import label_swept, mark_presets
from lionsim.reports.columns import model_name, model_text, rounds_of, run_name, topology, workload_text
from lionsim.reports.rates import axis_label, efficiency_of
from lionsim.reports.plots.estimate_marks import (mark_cap, mark_crossovers, mark_given_network, replaced_workers,
                                                  speedup_axis, through_crossings)
from lionsim.reports.plots.style import (DPI, MARKERS, fit_title, mark_every, plain_log, run_colours, save,
                                         time_unit, title_with_caption)
from lionsim.reports.to_target import (held_past_doubling, no_band_words, no_plot_reason, notes, speedup_band_text,
                                      status, unfit, unfit_words)

TO_TARGET_CROSSOVER = "to_target_crossover.csv"
"""The time to target's crossovers beside crossover.csv (an estimate --sweep with --from-run)."""
TEXT = ["to_target_from", "to_target_kind", "to_target_workload", "to_target_workers", "to_target_how",
        "to_target_note", "to_target_match", "to_target_phases", "to_target_basis", "to_target_rule",
        "to_target_baseline"]
"""The --from-run columns that hold text."""
NEEDS = ["strategy", "transport", "workers", "network", "params", "model", "device", "baseline", "steps_to_target",
         "time_to_target_s", "to_target_speedup", "time_to_target_lo_s", "time_to_target_hi_s", *TEXT]
"""The columns the plots read (estimate.csv or sweep.csv written with --from-run)."""
FIGSIZE = (10.0, 7.0)  # inches
WIDTH = 10.0
"""One estimate's figure width, inches (its height follows the runs and the caption's lines)."""
CAPTION_POINTS = 8
"""The caption's font size (title_with_caption's)."""
CAPTION_LINE = 0.15
"""Inches a caption line takes at CAPTION_POINTS, with its spacing."""
MAX_VALUE_TICKS = 12


def _source(first) -> str:
    """Where the convergence came from: the proxy model DIR trained (its size where recorded, and how
    much smaller than the priced one it is), where it is, at which worker counts."""
    counts = str(first["to_target_workers"]).split()
    at = counts[0] if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
    proxy = pd.to_numeric(first.get("to_target_params"), errors="coerce")
    priced = pd.to_numeric(first.get("params"), errors="coerce")
    fewer = f", {priced / proxy:,.0f}x fewer than the priced model" if proxy > 0 and priced / proxy >= 2 else ""
    size = f" ({proxy:,.0f} params{fewer})" if math.isfinite(proxy) else ""
    return (f"convergence from a proxy: {workload_text(first['to_target_workload'])}{size} trained in "
            f"{first['to_target_from']} at {at} workers, assumed to hold at scale")


def _steps(first) -> str:
    """Where the steps come from: the baseline's at scale from --tokens or --steps (not from the
    target), else its own steps to target in the proxy run; each run's from its measured ratio to it."""
    basis, base, priced = str(first["to_target_basis"]), first["to_target_baseline"], first["baseline"]
    given = basis.startswith("--")
    fitted = ", fitted against log N" if basis.endswith("fitted") else ""
    where = f"from {basis}, not from the target" if given else f"steps to the target in the proxy run{fitted}"
    # the bars' "(baseline)" is the estimate's --baseline: where the trained runs' was another, both named
    who, against = ("the baseline", "") if base == priced else \
        ("the trained runs' reference", f"; speedup against {priced}")
    return f"Steps: {base}'s ({who}) {where}, x each run's steps-to-target ratio to it{against}"


BAND = "the band, steps to target with each fit one residual standard deviation lower and higher"
"""What the whiskers (one estimate) or the shading (a sweep) are, in the caption: the band the
report's table names (lionsim.estimate.to_target)."""


def _caption(first, cluster: str, band: str = "") -> str:
    """What the title shortens, in full: the model with its size, the cluster, the target loss;
    where the steps come from; where the convergence was measured; and `band`, how the band is
    drawn ("Whiskers"), where one is. A line each, so each reads apart."""
    drawn = f" {band}: {BAND}." if band else ""
    return (f"{model_text(first)}; {cluster}, {first['device']}. Target loss {first['to_target_rule']}.\n"
            f"{_steps(first)}.\n{_source(first)[0].upper()}{_source(first)[1:]}.{drawn}")


def _unfit_line(frame: pd.DataFrame) -> str:
    """The caption's line on the runs marked "(does not fit)" (unfit_words), with a leading newline; ""."""
    words = unfit_words(frame)
    return f"\n(does not fit): {words}." if words else ""


def _extrapolated_line(frame: pd.DataFrame) -> str:
    """The caption's line where figures are priced at worker counts beyond those measured (the text's
    "extrapolated beyond the measured 2-8 workers": lionsim.estimate.to_target), with a leading
    newline; "" where every count priced lies among them."""
    counts = [int(c) for c in str(frame["to_target_workers"].iloc[0]).split()]
    beyond = sorted({int(w) for w in frame["workers"]} - set(range(min(counts), max(counts) + 1)))
    if not beyond:
        return ""
    if len(counts) == 1:
        return f"\nMeasured at {counts[0]:,} workers only: the figures at {_counts(beyond)} workers hold its ratios there."
    held = [w for w in beyond if held_past_doubling(counts, w)]
    extended = [w for w in beyond if w not in held]
    words = [f"the figure{'s' if len(extended) > 1 else ''} at {_counts(extended)} workers extend"
             f"{'' if len(extended) > 1 else 's'} the fits against log N"] if extended else []
    words += [f"at {_counts(held)} workers the fits through 2 counts are held at the nearest measured count's "
              "figures (one doubling on, no further)"] if held else []
    return f"\nExtrapolated beyond the measured {counts[0]:,}-{counts[-1]:,} workers: {'; '.join(words)}."


def _counts(workers: list[int]) -> str:
    """Worker counts for a caption: all of them up to three, else the first and last."""
    return ", ".join(f"{w:,}" for w in workers) if len(workers) <= 3 else f"{workers[0]:,} to {workers[-1]:,}"


def _no_band_line(frame: pd.DataFrame) -> str:
    """The caption's line where no run has a band, and why (no_band_words), with a leading newline; ""."""
    why = no_band_words(frame)
    return f"\nNo band: {why}." if why else ""


NO_FIGURE_WIDTH = 60
"""Characters a line of a bar's "no figure" reason takes in the plot: wrapped, it stays in the axes."""


def _no_figure_text(row) -> str:
    """A run without a figure, beside its empty bar: its reason's first clause (the CLI's notes hold
    it whole), wrapped, so that it neither runs off the image nor squeezes the bars."""
    reason = (notes(row) or [str(row.to_target_how)])[-1].split(": ")[0]
    return textwrap.fill(f"no figure: {reason}", NO_FIGURE_WIDTH)


def _speedup_bands(frame: pd.DataFrame) -> bool:
    """Whether any run's speedup has a band (speedup_band_text), drawn in brackets beside its figure."""
    return any(speedup_band_text(row) != "-" for row in frame.itertuples(index=False))


def _workers(first) -> str:
    """The workers, and the nodes they make where a node holds several ("16 workers (2 nodes x 8 GPUs)",
    as estimate's title says them: columns.topology)."""
    several = int(first.get("gpus_per_node", 1) or 1) > 1
    return f"{first['workers']:,} workers" + (f" ({topology(first)})" if several else "")


def _has_band(frame: pd.DataFrame) -> bool:
    """Whether any run has a band wider than its figure (a whisker or shade is drawn)."""
    hi = frame["time_to_target_hi_s"]
    return bool((hi.notna() & (hi != frame["time_to_target_s"])).any())


def _labels(frame: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(f"{s}@{t}" for s, t in zip(frame["strategy"], frame["transport"])))


def _why_none(row) -> str:
    """Why a run has no time to target at any swept value, in a legend's few words."""
    why = status(row)
    return why if why in ("not reached", "not trained") else "no time to target"


def plot_to_target(frame: pd.DataFrame, path: Path) -> list[Path]:
    """One estimate: a horizontal bar per run, its time to target, the band's ends as whiskers; a run
    without a figure is named at zero with why. Returns the PNG and SVG; nothing where no run has a
    figure (an empty plot says nothing: the report and `lionsim plot` say why instead)."""
    if no_plot_reason(frame):
        return []
    labels = _labels(frame)
    colours = run_colours(labels)
    first = frame.iloc[0]
    times = frame["time_to_target_s"].to_numpy(dtype=float)
    finite = times[np.isfinite(times)]
    top = max(float(np.nanmax(frame["time_to_target_hi_s"].to_numpy(dtype=float), initial=0.0)),
              float(finite.max()) if len(finite) else 1.0)
    scale, unit = time_unit(top)
    caption = _caption(first, f"{_workers(first)}, {first['network']}",
                       "Whiskers" if _has_band(frame) else "") + _no_band_line(frame) + _extrapolated_line(frame) \
        + _unfit_line(frame) + ("\nIn brackets: the speedup's band, the baseline's time over the run's at both "
                                "bands' low ends and at both high ends." if _speedup_bands(frame) else "")
    # the caption's lines past its first get room of their own: the bars keep their height
    extra = fit_title(caption, WIDTH, CAPTION_POINTS).count("\n") * CAPTION_LINE
    fig = Figure(figsize=(WIDTH, 1.6 + 0.55 * len(labels) + extra), dpi=DPI, layout="constrained")
    ax = fig.subplots()
    # over the whole figure, wrapped to it: over the axes alone (the run names take a third) it was cut
    title_with_caption(fig, f"Modelled time to target: {model_name(first)}, {_workers(first)}",
                       f"{first['network']}, {first['device']}", caption)
    y = np.arange(len(labels))[::-1]
    for k, row in enumerate(frame.itertuples(index=False)):
        label = f"{row.strategy}@{row.transport}"
        if math.isfinite(row.time_to_target_s):
            ax.barh(y[k], row.time_to_target_s / scale, color=colours[label], height=0.6)
            if math.isfinite(row.time_to_target_hi_s) and row.time_to_target_hi_s != row.time_to_target_s:
                lo = row.time_to_target_lo_s if math.isfinite(row.time_to_target_lo_s) else 0.0
                ax.errorbar(row.time_to_target_s / scale, y[k], xerr=[[(row.time_to_target_s - lo) / scale],
                            [(row.time_to_target_hi_s - row.time_to_target_s) / scale]], color="black",
                            capsize=4, linewidth=1.0)
            between = speedup_band_text(row)  # the speedup's band beside it, where it has one
            text = plural(f"{row.steps_to_target:,.0f}", "step") + (
                f", {speedup_text(row.to_target_speedup)}" if math.isfinite(row.to_target_speedup) else "") + (
                f" ({between})" if between != "-" else "")
            end = max(row.time_to_target_s, row.time_to_target_hi_s if math.isfinite(row.time_to_target_hi_s) else 0)
        else:
            text, end = _no_figure_text(row), 0.0
        note = ax.annotate(text, (end / scale, y[k]), xytext=(6, 0), textcoords="offset points", va="center",
                           fontsize=8)
        note.set_in_layout(not text.startswith("no figure"))  # wrapped to the axes: the bars keep their width
    rounds = rounds_of(frame)  # a local-step run named with its H, as the tables name it
    over = unfit(frame)
    ax.set_yticks(y, [run_name(s, t, rounds) + (" (baseline)" if f"{s}@{t}" == b else "")
                      + ("\n(does not fit)" if f"{s}@{t}" in over else "")
                      for s, t, b in zip(frame["strategy"], frame["transport"], frame["baseline"])], fontsize=9)
    ax.set_ylim(-0.6, len(labels) - 0.4)
    # room for the figures' text beyond the longest bar (more for a speedup's band in brackets)
    ax.set_xlim(0, top / scale * (1.5 if _speedup_bands(frame) else 1.3))
    ax.set_xlabel(f"time to target ({unit})")
    ax.grid(True, axis="x", alpha=0.3, linewidth=0.6)
    return save(fig, Path(path))


def plot_to_target_sweep(frame: pd.DataFrame, crossings: pd.DataFrame, variable: str, path: Path,
                         workers: int | None = None) -> list[Path]:
    """Time to target (log scale, the band shaded) and its speedup against the baseline, with the
    crossovers, against the swept `variable`; in a workers sweep the measured worker counts are
    shaded where they meet the swept range, which the axis keeps to (an empty band of counts never
    swept would squeeze the curves; the caption says where the figures extrapolate). `workers`: as
    plot_estimate_sweep's. Returns the PNG and SVG; nothing where no run has a figure at any point."""
    if no_plot_reason(frame):
        return []
    labels = _labels(frame)
    colours = run_colours(labels)
    baseline = frame["baseline"].iloc[0]
    first = frame.iloc[0]
    finite = frame["time_to_target_hi_s"].where(frame["time_to_target_hi_s"].notna(), frame["time_to_target_s"])
    scale, unit = time_unit(float(np.nanmax(finite.to_numpy(dtype=float), initial=1.0)))
    fig = Figure(figsize=FIGSIZE, dpi=DPI, layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    fixed = (f"{_workers(first)}, " if variable != "workers" else "") + f"{first['network']}"
    replaced = replaced_workers(variable, frame["sweep_value"], workers)
    title_with_caption(fig, f"Modelled time to target against {variable}: {model_name(first)}",
                       f"{fixed}, {first['device']}" + (f"; {replaced}" if replaced else ""),
                       _caption(first, fixed, "Shaded" if _has_band(frame) else "") + _no_band_line(frame)
                       + _extrapolated_line(frame) + _unfit_line(frame)
                       + ("\nShaded below: the speedup's band, the baseline's time over the run's at both bands' low "
                          "ends and at both high ends." if _speedup_bands(frame) else ""))
    values = sorted(frame["sweep_value"].unique())
    span, ends = (values[0], values[-1]), set()  # the x range drawn: the swept values; the measured ends in it
    if variable == "workers":  # the measured counts shaded where they meet the swept range: beyond, the fits extend
        counts = [int(c) for c in str(first["to_target_workers"]).split()]
        low, high = min(counts), max(counts)
        ends = {c for c in (low, high) if span[0] <= c <= span[1]}
        measured = f"measured: {low:,}-{high:,} workers" if high > low else f"measured: {low:,} workers"
        # one count: a band a few per cent wide on the log axis, so it shows; clipped to the axis drawn
        left = max(low / (1.0 if high > low else 1.04), span[0] / 1.1)
        right = min(high * (1.0 if high > low else 1.04), span[1] * 1.1)
        if left < right:
            for ax in (top, bottom):
                ax.axvspan(left, right, color="0.85", alpha=0.6, linewidth=0, label=measured if ax is top else None)
        else:  # none of them in the range drawn: the legend still says where they are
            top.plot([], [], linestyle="none", label=f"{measured} (off the axis)")
    rounds = rounds_of(frame)  # a local-step run named with its H, as the tables name it
    over = unfit(frame)
    for k, label in enumerate(labels):
        strategy, transport = label.split("@", 1)
        rows = frame[(frame["strategy"] == strategy) & (frame["transport"] == transport)].sort_values("sweep_value")
        shown = run_name(strategy, transport, rounds)
        if rows["time_to_target_s"].notna().sum() == 0:  # no figure anywhere: named in the legend, and why
            top.plot([], [], color=colours[label], marker=MARKERS[k % len(MARKERS)], markerfacecolor="white",
                     linestyle="none", label=f"{shown}: {_why_none(rows.iloc[0])}, no line")
            continue
        style = {"color": colours[label], "linewidth": 1.6, "marker": MARKERS[k % len(MARKERS)], "markersize": 4.5,
                 "markevery": mark_every(len(rows), k)}
        name = (f"{shown} (baseline)" if label == baseline else shown) + (" (does not fit)" if label in over else "")
        band = rows["time_to_target_lo_s"].notna() & rows["time_to_target_hi_s"].notna()
        if variable == "bandwidth":  # time linear in 1/bandwidth, as the crossings (between.py), markers on the points
            xs, ys = curve(rows["sweep_value"], rows["time_to_target_s"] / scale)
            top.plot(xs, ys, label=name, **{**style, "markevery": marks_at(xs, rows["sweep_value"], style["markevery"])})
            if band.any():  # the band's edges the same way
                bx, lo = curve(rows["sweep_value"][band], rows["time_to_target_lo_s"][band] / scale)
                top.fill_between(bx, lo, curve(rows["sweep_value"][band], rows["time_to_target_hi_s"][band] / scale)[1],
                                 color=colours[label], alpha=0.15, linewidth=0)
        else:
            top.plot(rows["sweep_value"], rows["time_to_target_s"] / scale, label=name, **style)
            if band.any():
                top.fill_between(rows["sweep_value"][band], rows["time_to_target_lo_s"][band] / scale,
                                 rows["time_to_target_hi_s"][band] / scale, color=colours[label], alpha=0.15,
                                 linewidth=0)
        # through the counts priced beside each crossover (through_crossings), markers on the swept points
        bottom.plot(*through_crossings(rows, crossings, label, "to_target_speedup", variable), color=colours[label],
                    linewidth=1.6)
        bottom.plot(rows["sweep_value"], rows["to_target_speedup"], linestyle="none",
                    **{k: v for k, v in style.items() if k != "linewidth"})
        if "to_target_speedup_hi" in rows.columns:  # the speedup's band, shaded as the time's (a CSV from before: none)
            both = rows["to_target_speedup_lo"].notna() & (rows["to_target_speedup_hi"] != rows["to_target_speedup_lo"])
            if both.any():
                xs = rows["sweep_value"][both]
                lo, hi = ((curve(xs, rows[c][both])[1] if variable == "bandwidth" else rows[c][both])
                          for c in ("to_target_speedup_lo", "to_target_speedup_hi"))
                bottom.fill_between(curve(xs, rows["to_target_speedup_lo"][both])[0] if variable == "bandwidth"
                                    else xs, lo, hi, color=colours[label], alpha=0.15, linewidth=0)
    mark_crossovers(bottom, crossings[crossings["crossover"].notna()], colours, *span, top, rounds)
    bottom.axhline(1.0, color="black", linewidth=0.8)
    if variable == "bandwidth":  # a rise past a socket fabric's cap is NCCL's choice: the note says so
        mark_cap(frame, top, bottom)
        mark_given_network(frame, (top, bottom), top)
        mark_presets(frame, (top, bottom), top)  # a swept point at 1gbe's rate named as 25gbe's is
    for ax in (top, bottom):
        ax.set_xscale("log")
        ax.grid(True, which="both", alpha=0.3, linewidth=0.6)
    bottom.set_xlim(span[0] / 1.1, span[1] * 1.1)
    log = speedup_axis(bottom, pd.concat([frame[c] for c in ("to_target_speedup", "to_target_speedup_lo",
                                                              "to_target_speedup_hi") if c in frame.columns]))
    top.set_yscale("log")
    plain_log(top.yaxis)
    if variable == "workers" and len(values) <= MAX_VALUE_TICKS:
        ticks = sorted(set(values) | ends)  # the measured ends ticked too, where the sweep does not reach them
        bottom.set_xticks(ticks, [f"{v:g}" for v in ticks])
        bottom.xaxis.set_minor_formatter(NullFormatter())
    elif not (variable == "bandwidth" and label_swept(bottom.xaxis, values)):  # each swept point labelled
        plain_log(bottom.xaxis)
    top.set_ylabel(f"time to target ({unit}, log scale)")
    bottom.set_ylabel(f"time-to-target speedup\nvs {run_name(*baseline.split('@', 1), rounds)}"
                      + (" (log scale)" if log else ""))
    bottom.set_xlabel("workers" if variable == "workers" else axis_label(efficiency_of(frame), log=False))
    top.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    return save(fig, Path(path))
