"""The PNG plots of a run: loss against modelled time and steps, eval accuracy, time breakdown.

Figures are built as matplotlib.figure.Figure objects rendered by the Agg canvas, never through
pyplot: no display is needed, no global backend is switched, and no figure outlives its call.
Each run keeps one colour in every plot (its first-appearance index in the tab10/tab20 cycle).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from lionsim.errors import LionsimError
from lionsim.reports.columns import TIME_COLUMNS, run_label
from lionsim.reports.files import write_atomic
from lionsim.reports.summary import smooth, split_runs

FIGSIZE = (10.0, 5.2)  # inches
DPI = 120
PLOT_SMOOTH_FRACTION = 0.02  # light smoothing: a trailing mean over 2% of the steps
# Muted component colours, unlike the saturated run colours of the tick labels; comm is the
# darkest because it is what the strategies compete on.
COMPONENT_COLOURS = {
    "compute_s": "#c4c4c4",
    "encode_s": "#e8c36a",
    "comm_s": "#3d3d3d",
    "decode_s": "#a3bcd6",
    "update_s": "#9cc89c",
}


def run_colours(labels: list[str]) -> dict[str, tuple]:
    """One colour per run label, by order: tab10 up to 10 runs, tab20 beyond (cycling)."""
    cmap = colormaps["tab10" if len(labels) <= 10 else "tab20"]
    return {label: cmap(i % cmap.N) for i, label in enumerate(labels)}


def time_unit(max_seconds: float) -> tuple[float, str]:
    """(divisor, unit) so a time axis reaching max_seconds reads in ms, s, min or h."""
    if max_seconds < 1.0:
        return 1e-3, "ms"
    if max_seconds < 300.0:
        return 1.0, "s"
    if max_seconds < 3 * 3600.0:
        return 60.0, "min"
    return 3600.0, "h"


def _context(steps: pd.DataFrame) -> str:
    """'workload · N workers · network' (lists values if a run set mixes them)."""

    def values(col: str) -> str:
        return ", ".join(str(v) for v in dict.fromkeys(steps[col]))

    return f"{values('workload')} · {values('workers')} workers · {values('network')}"


def _figure(title: str, steps: pd.DataFrame) -> tuple[Figure, Axes]:
    fig = Figure(figsize=FIGSIZE, dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    ax.set_title(f"{title}\n{_context(steps)}", fontsize=11)
    ax.grid(True, alpha=0.3, linewidth=0.6)
    return fig, ax


def _legend_outside(ax: Axes, handles: list | None = None) -> None:
    """Legend to the right of the axes, so it never covers a curve."""
    kwargs = {"handles": handles} if handles is not None else {}
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False, **kwargs)


def _save(fig: Figure, path: Path) -> Path:
    return write_atomic(path, lambda f: fig.savefig(f, format="png"), binary=True)


def _display_label(label: str, baseline: str | None) -> str:
    return f"{label} (baseline)" if label == baseline else label


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


def _clock(steps: pd.DataFrame) -> str:
    """What the time axis is: modelled on sim, measured step times on gloo/nccl."""
    real = "backend" in steps.columns and (steps["backend"] != "sim").any()
    return "measured wall clock" if real else "modelled wall clock"


def _loss_plot(runs, colours, baseline, steps, x_col: str, path: Path) -> Path:
    """Training loss (faint raw + light trailing mean) against x_col, eval loss as diamonds."""
    if x_col == "sim_time_s":
        scale, unit = time_unit(float(steps["sim_time_s"].max()))
        clock = _clock(steps)
        title, xlabel = f"Training loss vs {clock}", f"{clock} ({unit})"
    else:
        scale, title, xlabel = 1.0, "Training loss vs step", "step"
    fig, ax = _figure(title, steps)
    handles = []
    has_eval = has_raw = False
    for label, rows in runs:
        colour = colours[label]
        x = rows[x_col] / scale
        window = max(1, math.ceil(PLOT_SMOOTH_FRACTION * len(rows)))
        if window > 1:
            has_raw = True
            ax.plot(x, rows["loss"], color=colour, alpha=0.25, linewidth=0.8)
        (line,) = ax.plot(x, smooth(rows["loss"], window), color=colour, linewidth=1.8,
                          label=_display_label(label, baseline))
        handles.append(line)
        evals = rows[rows["eval_loss"].notna()]
        if len(evals):
            has_eval = True
            # Dashed with small markers: stays readable with one eval or a hundred.
            ax.plot(evals[x_col] / scale, evals["eval_loss"], color=colour, linestyle="--", linewidth=1.0,
                    marker="D", markersize=3.5, markeredgecolor="black", markeredgewidth=0.4, zorder=3)
    if has_eval:
        handles.append(Line2D([], [], color="grey", linestyle="--", linewidth=1.0, marker="D", markersize=3.5,
                              markeredgecolor="black", markeredgewidth=0.4, label="eval loss"))
    if has_raw:
        handles.append(Line2D([], [], color="grey", alpha=0.35, linewidth=0.8, label="raw (per step)"))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("loss (mean over workers)")
    ax.set_xlim(left=0)
    _cap_divergence(ax, runs)
    _legend_outside(ax, handles)
    return _save(fig, path)


def _eval_acc_plot(runs, colours, baseline, steps, path: Path) -> Path:
    scale, unit = time_unit(float(steps["sim_time_s"].max()))
    fig, ax = _figure(f"Eval accuracy vs {_clock(steps)}", steps)
    for label, rows in runs:
        evals = rows[rows["eval_acc"].notna()]
        if len(evals):
            ax.plot(evals["sim_time_s"] / scale, evals["eval_acc"] * 100.0, color=colours[label],
                    marker="o", markersize=4, linewidth=1.6, label=_display_label(label, baseline))
    ax.set_xlabel(f"{_clock(steps)} ({unit})")
    ax.set_ylabel("eval accuracy (%)")
    ax.set_xlim(left=0)
    _legend_outside(ax)
    return _save(fig, path)


def _breakdown_plot(summary: pd.DataFrame, colours, baseline, steps, path: Path) -> Path:
    """Stacked horizontal bars of the mean time components per step, the modelled step annotated."""
    labels = [run_label(s, t) for s, t in zip(summary["strategy"], summary["transport"])]
    parts_sum = summary[TIME_COLUMNS].sum(axis=1)
    scale, unit = time_unit(float(max(parts_sum.max(), summary["step_s"].max())))
    height = max(FIGSIZE[1], 1.6 + 0.55 * len(labels))
    fig = Figure(figsize=(FIGSIZE[0], height), dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    ax.set_title(f"Mean time per step\n{_context(steps)}", fontsize=11)
    ax.grid(True, axis="x", alpha=0.3, linewidth=0.6)
    ax.set_axisbelow(True)
    y = list(range(len(labels)))
    left = [0.0] * len(labels)
    for col in TIME_COLUMNS:
        widths = (summary[col] / scale).tolist()
        ax.barh(y, widths, left=left, height=0.6, color=COMPONENT_COLOURS[col], label=col.removesuffix("_s"))
        left = [a + b for a, b in zip(left, widths)]
    step_s = (summary["step_s"] / scale).tolist()
    # A step longer than its parts holds time no component claims: show it rather than hide it.
    other = [max(0.0, step - total) if step > total * (1 + 1e-9) else 0.0 for step, total in zip(step_s, left)]
    if any(other):
        rows = [i for i in y if other[i] > 0]  # a zero-width bar would still draw its edge
        ax.barh(rows, [other[i] for i in rows], left=[left[i] for i in rows], height=0.6, color="white",
                edgecolor="grey", hatch="//", linewidth=0.6, label="other (step - parts)")
        left = [a + b for a, b in zip(left, other)]
    biggest = max(left) if max(left) > 0 else 1.0
    overlap = False
    for i, (total, step) in enumerate(zip(left, step_s)):
        text = f"{step:.3g} {unit}"
        if step < total * (1 - 1e-9):  # overlap modelled: the step is shorter than its parts
            text += f" ({total - step:.3g} {unit} overlapped)"
            ax.plot([step, step], [i - 0.4, i + 0.4], color="black", linewidth=2.0)
            overlap = True
        ax.text(total + 0.01 * biggest, i, text, va="center", fontsize=9)
    ax.set_yticks(y, [_display_label(lab, baseline) for lab in labels])
    for tick, lab in zip(ax.get_yticklabels(), labels):
        tick.set_color(colours[lab])
        tick.set_fontweight("bold")
    ax.invert_yaxis()  # first run on top, as in the table
    ax.set_xlim(0, biggest * 1.3)  # room for the annotations
    ax.set_xlabel(f"mean time per step ({unit})")
    handles, _ = ax.get_legend_handles_labels()
    if overlap:
        handles.append(Line2D([], [], color="black", linewidth=2.0, label="modelled step\n(with overlap)"))
    _legend_outside(ax, handles)
    return _save(fig, path)


def plot_run(out_dir: Path, steps: pd.DataFrame, summary: pd.DataFrame) -> list[Path]:
    """Draw loss_vs_time.png, loss_vs_step.png, time_breakdown.png (and eval_acc_vs_time.png
    when accuracy was evaluated) into out_dir; return their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = split_runs(steps)
    labels = [label for label, _ in runs]
    summary_labels = [run_label(s, t) for s, t in zip(summary["strategy"], summary["transport"])]
    if summary_labels != labels:
        raise LionsimError(f"summary runs {', '.join(summary_labels)} differ from the steps' runs {', '.join(labels)}")
    colours = run_colours(labels)
    baseline = summary["baseline"].iloc[0] if "baseline" in summary.columns else None
    paths = [
        _loss_plot(runs, colours, baseline, steps, "sim_time_s", out_dir / "loss_vs_time.png"),
        _loss_plot(runs, colours, baseline, steps, "step", out_dir / "loss_vs_step.png"),
        _breakdown_plot(summary, colours, baseline, steps, out_dir / "time_breakdown.png"),
    ]
    if steps["eval_acc"].notna().any():
        paths.append(_eval_acc_plot(runs, colours, baseline, steps, out_dir / "eval_acc_vs_time.png"))
    return paths
