"""The step-time distribution of a bench run: how steps spread, with p50 and p99 per run.

The step times are lionsim.reports.summary.step_spread's, the ones summary.csv's step_p50_s and
step_p99_s are of: on sim step_s; on gloo/nccl, whose step_s books comm, encode, decode and
update as each kind of step's median, each step with the comm it measured, past the warm-up (its
compute and wait as step_s books them: _measured_note says which are each step's own).

With uneven workers (--compute-spread, or a real backend's own jitter) every step waits for
its slowest worker, so steps differ and the tail matters as much as the mean. Left: each
run's share of steps at or below a step time (an empirical CDF), p50 and p99 marked. Right:
p50 and p99 side by side per run, the straggler tax at a glance.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from lionsim.compute.device_file import device_shown
from lionsim.reports.columns import off_sim
from lionsim.reports.summary import SummaryRule, measured_run, nearest_rank, step_spread
from lionsim.reports.plots.style import CHAR_WIDTH, TWIN_DASHES, context, display_label, figure, legend_outside, overlapping, \
    save, time_unit, twin_name

QUANTILES = ((0.5, "p50", "o"), (0.99, "p99", "v"))


def quantiles(label: str, values: np.ndarray, summary: pd.DataFrame | None) -> list[float]:
    """A run's step-time p50 and p99 (seconds) as summary.csv states them (step_p50_s,
    step_p99_s: lionsim.reports.summary's definition, each a step that happened), so the plot
    and the table show one figure; computed the same way (nearest_rank) where a summary lacks them."""
    row = None
    if summary is not None and "run" in summary.columns:
        found = summary[summary["run"] == label]
        row = found.iloc[0] if len(found) else None
    out = []
    for q, name, _marker in QUANTILES:
        col = f"step_{name}_s"
        given = row[col] if row is not None and col in row.index else math.nan
        out.append(float(given) if given == given else nearest_rank(values, q))
    return out


def _spread_note(steps: pd.DataFrame, meta: dict | None) -> str:
    """Why steps differ: workers made uneven (--compute-spread, in run.json), a real backend's
    own jitter, or nothing (the model is the time)."""
    if (meta or {}).get("config", {}).get("compute_spread") or (meta is None and _waits(steps)):
        return "uneven workers (--compute-spread): each step waits for the slowest"
    return ""


def _waits(steps: pd.DataFrame) -> bool:
    """Whether any step waited for a slower worker (a run whose run.json is not at hand)."""
    waits = steps["wait_s"].dropna() if "wait_s" in steps.columns else pd.Series(dtype=float)
    return bool(len(waits) and (waits > 0).any())


def _measured_note(warmup: int, steps: pd.DataFrame, meta: dict | None) -> str:
    """What a measured run's curves are: each step's own comm, and what the rest of its step_s
    books (lionsim.training.booking): under --compute-spread its own compute and wait for the
    slowest rank, else the bench's one compute figure; encode, decode and update each kind of
    step's median, measured, or modelled for a --compute device."""
    config = (meta or {}).get("config") or {}
    device = device_shown(config.get("compute")) if config.get("compute") not in (None, "measured") else None
    spread = bool(_spread_note(steps, meta))
    modelled = f", compute modelled for {device}" if device else ""
    own = f"comm, compute and wait (comm_measured_s{modelled})" if spread else "comm (comm_measured_s)"
    compute = "" if spread else (f"compute modelled for {device}, " if device else "compute the bench's one figure, ")
    codec = f"modelled for {device} per kind of step" if device else "each kind of step's median"
    past = f", the {warmup} warm-up steps left out" if warmup else ""
    return f"measured: each step with its own {own}; {compute}encode, decode and update {codec}{past}"


def _alike_note(steps: pd.DataFrame, spread: bool) -> str:
    """Every step of every run took the same time: say why, so the bare CDF is read right."""
    real = off_sim(steps)
    if spread:
        return "uneven workers (--compute-spread), as slow on every step: every step alike"
    if real:
        return "every step alike: the measured parts are booked as each kind of step's median"
    return "modelled: every step alike (--compute-spread adds one)"


def step_time_plot(runs: list[tuple[str, pd.DataFrame]], styles: dict[str, dict], baseline: str | None,
                   steps: pd.DataFrame, path: Path, meta: dict | None = None, setting: str | None = None,
                   summary: pd.DataFrame | None = None) -> list[Path]:
    """Draw step_time_distribution (PNG and SVG); return both paths. `meta` run.json (what made
    workers uneven), `setting` the subtitle the run's other plots carry (titles.subtitle),
    `summary` summary.csv, whose p50 and p99 the plot marks (quantiles)."""
    warmup = SummaryRule.of_run(meta).warmup_steps or 0
    live = [(label, step_spread(rows, warmup).to_numpy(dtype=float)) for label, rows in runs]
    live = [(label, values) for label, values in live if len(values)]
    scale, unit = time_unit(max(float(v.max()) for _, v in live) if live else 1.0)
    note = _spread_note(steps, meta)
    alike = bool(live) and all(np.ptp(v) == 0 for _, v in live)
    if alike:
        note = _alike_note(steps, bool(note))
    elif measured_run(steps):
        note = "; ".join(filter(None, [note, _measured_note(warmup, steps, meta)]))
    fewest = min((len(v) for _, v in live), default=0)
    if 0 < fewest < 100 and not alike:  # the nearest rank of 0.99 over fewer than 100 steps is the last
        note = "; ".join(filter(None, [note, f"p99 of fewer than 100 steps ({fewest} here) is the slowest step"]))
    line = setting if setting is not None else context(steps)
    # run names are written twice (the bars' labels and the legend): the figure widens with them
    widest = max((len(display_label(label, baseline)) for label, _ in live), default=0)
    fig, (cdf, bars) = figure("Step time distribution: p50 and p99 per run", f"{line}\n{note}" if note else line,
                              ncols=2, size=(max(12.0, 7.5 + 2 * CHAR_WIDTH * widest), max(4.6, 1.8 + 0.42 * len(live))),
                              gridspec_kw={"width_ratios": [3, 2]})
    marks = {label: [v / scale for v in quantiles(label, values, summary)] for label, values in live}
    curves = []
    for label, values in live:
        x = np.sort(values) / scale
        curves.append((label, x, np.arange(1, len(x) + 1) / len(x)))
    same = overlapping([(label, y, x) for label, x, y in curves])  # equal distributions: dashed over
    for label, x, y in curves:
        style = styles[label]
        cdf.step(x, y, where="post", color=style["color"], linewidth=style["linewidth"],
                 linestyle=TWIN_DASHES if label in same else style["linestyle"],
                 label=twin_name(display_label(label, baseline), same.get(label)))
        for (q, _name, marker), at in zip(QUANTILES, marks[label]):
            cdf.plot([at], [q], marker=marker, color=style["color"], markersize=7, linestyle="none")
    cdf.set_xlabel(f"step time ({unit})")
    cdf.xaxis.set_major_locator(MaxNLocator(6))  # a narrow range otherwise crowds its ticks
    cdf.set_ylabel("share of steps at or below")
    cdf.set_ylim(0, 1.02)
    if alike:  # each curve is one vertical line: say so on the panel itself
        cdf.text(0.03, 0.05, "every step alike: p50 = p99 = the step time", transform=cdf.transAxes, fontsize=9,
                 va="bottom", ha="left", color="#444444",
                 bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.9})
    y = np.arange(len(live))
    height = 0.38
    for i, (label, values) in enumerate(live):
        colour = styles[label]["color"]
        for k, v in enumerate(marks[label]):
            bars.barh(i + (k - 0.5) * height, v, height=height * 0.92, color=colour, alpha=0.95 if k == 0 else 0.5,
                      hatch=None if k == 0 else "//", edgecolor="black", linewidth=0.4)
            bars.text(v, i + (k - 0.5) * height, f" {v:.3g}", va="center", fontsize=7)
    bars.set_yticks(y, [display_label(label, baseline) for label, _ in live], fontsize=8)
    for tick, (label, _v) in zip(bars.get_yticklabels(), live):
        tick.set_color(styles[label]["color"])
    bars.invert_yaxis()
    bars.grid(False, axis="y")
    bars.set_xlabel(f"step time ({unit}); solid p50, hatched p99")
    bars.set_xlim(0, max((max(v) for v in marks.values()), default=1.0) * 1.25)
    keys = [Line2D([], [], marker=m, color="black", linestyle="none", label=f"{name} of a run") for _q, name, m in QUANTILES]
    handles, labels = cdf.get_legend_handles_labels()
    legend_outside(fig, handles=handles + keys, labels=labels + [h.get_label() for h in keys])
    return save(fig, path)
