"""loss_vs_step_by_lr: a sweep's lr search itself, every lr's training loss against step.

The sweep's other plots draw each run at its best lr only (lionsim.reports.best_lr), so an lr
search's own curves (a slow start at a small lr, a blow-up at a large one) were in no plot. Here
each run and worker count is a panel and each lr a line in it: lrs in order along one sequential
colour map (the same lr the same colour in every panel), the panel's best lr thick and named in
its title. A loss that blows up is cut at 1.5x the highest first-step loss, as a run's loss plot
cuts a diverging run, so it does not flatten the others; a line that ends above the cut (a blow-up
that stayed finite: lion at lr 5 reaches a loss of thousands) or went non-finite is marked with an
X where it left the axis for good, on its top edge (a non-finite one that never left it: at its
last finite loss), so no line runs off the plot unmarked. Mean over seeds; one network (the
training does not depend on it).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.lines import Line2D

from lionsim.reports.best_lr import best_lrs
from lionsim.reports.columns import label_name, lr_text, run_label, workload_text
from lionsim.reports.plots.style import figure, labelled_linear_axis, legend_outside, save

STEM = "loss_vs_step_by_lr"
CAP = 1.5
"""A panel's loss axis stops at this times its highest first-step loss (run.py's _cap_divergence)."""
THICK, THIN = 2.6, 1.3
"""Line widths: the panel's best lr, every other lr."""


def lr_colours(lrs) -> dict[float, tuple]:
    """lr -> its colour: the lrs in increasing order along viridis, its pale yellow end left out
    (it vanishes on white)."""
    ordered = sorted(set(float(lr) for lr in lrs))
    cmap = colormaps["viridis"]
    return {lr: cmap(x) for lr, x in zip(ordered, np.linspace(0.0, 0.82, len(ordered)) if len(ordered) > 1 else [0.0])}


def left_at(steps, losses, top: float) -> float | None:
    """The step where a line whose last point is above `top` crosses it for the last time (linear
    between the two points either side, as the line is drawn); None where it ends in range. A line
    above `top` from its first point leaves at that point."""
    steps, losses = np.asarray(steps, dtype=float), np.asarray(losses, dtype=float)
    if not losses[-1] > top:
        return None
    inside = np.flatnonzero(losses <= top)
    if inside.size == 0:
        return float(steps[0])
    i = int(inside[-1])  # the last point in range; the line goes up from it and stays out
    (s0, s1), (l0, l1) = steps[i:i + 2], losses[i:i + 2]
    return float(s0 + (top - l0) / (l1 - l0) * (s1 - s0))


def _curves(steps: pd.DataFrame) -> pd.DataFrame:
    """Mean loss over seeds per step for each (run, workers, lr), on each group's first network."""
    first = steps.groupby(["workers", "seed", "run", "lr"], sort=False)["network"].transform("first")
    rows = steps[steps["network"] == first]
    return rows.groupby(["run", "workers", "lr", "step"], sort=True)["loss"].mean().reset_index()


def plot_lr_curves(path: Path, summary: pd.DataFrame, steps: pd.DataFrame,
                   rounds: dict[str, int] | None = None) -> list[Path]:
    """Draw one workload's lr search into `path` (PNG and SVG): `summary` and `steps` are its
    sweep_summary.csv and sweep_steps.csv rows (every lr, not at_best_lr's), `rounds` each
    local-step run's H (cells_rounds), for its name."""
    summary = summary.assign(run=[run_label(s, t) for s, t in zip(summary["strategy"], summary["transport"])])
    lr_of = dict(zip(summary["cell"], summary["lr"]))
    steps = steps.assign(run=[run_label(s, t) for s, t in zip(steps["strategy"], steps["transport"])],
                         lr=steps["cell"].map(lr_of))
    curves = _curves(steps)
    best = {(r.run, r.workers): r for r in best_lrs(summary).itertuples(index=False)}
    died = (summary[summary["diverged_at_step"].notna()] if "diverged_at_step" in summary.columns
            else summary.iloc[0:0])
    diverged = {(r, n, float(lr)) for r, n, lr in zip(died["run"], died["workers"], died["lr"])}
    panels = list(dict.fromkeys(zip(summary["run"], summary["workers"])))
    colours = lr_colours(summary["lr"])
    ncols = min(len(panels), 3)
    nrows = math.ceil(len(panels) / ncols)
    seeds = summary["seed"].nunique()
    about = (f"{workload_text(summary['workload'].iloc[0])} · every lr the sweep tried"
             + (f" · mean over {seeds} seeds" if seeds > 1 else ""))
    fig, axes = figure("Training loss vs step at each lr", about, nrows, ncols,
                       size=(4.6 * ncols + 2.6, 3.6 * nrows + 1.2))
    end = float(curves["step"].max())
    cut = False
    marked = False
    for ax, (run, workers) in zip(axes, panels):
        chosen = best.get((run, workers))
        starts, drawn = [], []  # each line's finite points, colour and whether it went non-finite
        for lr, rows in curves[(curves["run"] == run) & (curves["workers"] == workers)].groupby("lr", sort=True):
            lr = float(lr)
            finite = rows[np.isfinite(rows["loss"])]
            if finite.empty:
                continue
            starts.append(float(finite["loss"].iloc[0]))
            top = chosen is not None and float(chosen.lr) == lr
            ax.plot(finite["step"], finite["loss"], color=colours[lr], linewidth=THICK if top else THIN,
                    zorder=3 if top else 2)
            drawn.append((finite, colours[lr], (run, workers, lr) in diverged))
        if starts:
            cap = CAP * max(starts)
            if ax.get_ylim()[1] > cap:
                low = float(curves.loc[(curves["run"] == run) & (curves["workers"] == workers)
                                       & (curves["loss"] <= cap), "loss"].min())
                ax.set_ylim(low - 0.05 * (cap - low), cap)
                cut = True
        high = ax.get_ylim()[1]
        for finite, colour, went in drawn:  # where each line left the axis for good, or went non-finite
            step = left_at(finite["step"], finite["loss"], high)
            if step is None and not went:
                continue
            at = (step, high) if step is not None else (float(finite["step"].iloc[-1]), float(finite["loss"].iloc[-1]))
            ax.plot([at[0]], [at[1]], linestyle="none", marker="X", markersize=8, color=colour,
                    markeredgecolor="black", zorder=4, clip_on=False)
            marked = True
        best_words = "" if chosen is None else f" · best lr {lr_text(chosen.lr)}"
        ax.set_title(f"{label_name(run, rounds or {})}\n{workers} workers{best_words}", fontsize=9, pad=9)
        ax.set_xlabel("step")
        labelled_linear_axis(ax.xaxis, end)
        ax.set_xlim(0, end * 1.025)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    for ax in axes[::ncols]:
        ax.set_ylabel("training loss (mean over workers)")
    handles = [Line2D([], [], color=colour, linewidth=THIN, label=f"lr {lr_text(lr)}") for lr, colour in colours.items()]
    handles.append(Line2D([], [], color="black", linewidth=THICK, label="thick: the panel's\nbest lr"))
    if marked:
        handles.append(Line2D([], [], linestyle="none", marker="X", markersize=8, color="grey",
                              markeredgecolor="black", label="X: diverged: where it\nleft the axis for good\n"
                              "(or its last finite loss)"))
    if cut:
        handles.append(Line2D([], [], linestyle="none", label=f"loss axis cut at {CAP:g}x\nthe first step's"))
    legend_outside(fig, handles)
    return save(fig, path)
