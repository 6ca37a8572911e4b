"""The plots of a comm.csv, nccl-tests style: time and bus bandwidth against message size
(log-log), one figure per collective, the model dashed and the measurement solid with markers.

One colour per worker count, so a model line and the measurement of the same N share it. Where
the model picks the cheapest algorithm per size (`--algorithm auto`), its points are marked
with one marker shape per algorithm, so the switches show.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
from matplotlib.lines import Line2D

from lionsim.reports.plots.style import BYTES_FORMATTER, MARKERS, PALETTE, figure, legend_outside, save

COMM_NEEDS = ["collective", "algorithm", "workers", "bytes", "time_s", "busbw_GBps", "source"]


def plot_comm(out_dir: Path, comm: pd.DataFrame) -> list[Path]:
    """comm_<collective>.png (and .svg) per collective in the table; return their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    workers = sorted(comm["workers"].unique())
    colours = {w: PALETTE[i % len(PALETTE)] for i, w in enumerate(workers)}
    algorithms = list(dict.fromkeys(comm.loc[comm["source"] == "model", "algorithm"]))
    shapes = {a: MARKERS[i % len(MARKERS)] for i, a in enumerate(algorithms)}
    paths: list[Path] = []
    for op, rows in comm.groupby("collective", sort=False):
        paths += _collective_plot(op, rows, colours, shapes, out_dir / f"comm_{re.sub(r'[^A-Za-z0-9._-]', '_', op)}.png")
    return paths


def _collective_plot(op: str, rows: pd.DataFrame, colours: dict, shapes: dict, path: Path) -> list[Path]:
    networks = ", ".join(dict.fromkeys(rows.loc[rows["source"] == "model", "network"])) if "network" in rows else ""
    measured_on = ", ".join(dict.fromkeys(rows.loc[rows["source"] == "measured", "algorithm"]))
    subtitle = " · ".join(x for x in (f"model: {networks}" if networks else "",
                                      f"measured: {measured_on}" if measured_on else "") if x)
    fig, (time_ax, bw_ax) = figure(f"{op}: time and bus bandwidth vs message size", subtitle, ncols=2,
                                   size=(13.0, 5.2))
    handles = []
    used_shapes: list[str] = []
    for (source, n), series in rows.groupby(["source", "workers"], sort=False):
        series = series.sort_values("bytes")
        model = source == "model"
        algs = list(dict.fromkeys(series["algorithm"]))
        name = f"{'model' if model else 'measured'}, {n} workers" + (f" ({algs[0]})" if len(algs) == 1 else "")
        for ax, col, factor in ((time_ax, "time_s", 1e6), (bw_ax, "busbw_GBps", 1.0)):
            if model:
                ax.plot(series["bytes"], series[col] * factor, color=colours[n], linestyle="--", linewidth=1.4)
                if len(algs) > 1:  # auto: show which algorithm the model picked at each size
                    for alg, part in series.groupby("algorithm", sort=False):
                        ax.plot(part["bytes"], part[col] * factor, linestyle="", marker=shapes[alg], markersize=4,
                                color=colours[n], markerfacecolor="white")
                        if alg not in used_shapes:
                            used_shapes.append(alg)
            else:
                ax.plot(series["bytes"], series[col] * factor, color=colours[n], linestyle="-", linewidth=1.6,
                        marker="o", markersize=4.5)
                if {"time_p10_s", "time_p90_s"} <= set(series.columns) and col == "time_s":
                    ax.fill_between(series["bytes"], series["time_p10_s"] * 1e6, series["time_p90_s"] * 1e6,
                                    color=colours[n], alpha=0.15, linewidth=0)
        handles.append(Line2D([], [], color=colours[n], linestyle="--" if model else "-",
                              marker=None if model else "o", label=name))
    handles += [Line2D([], [], linestyle="", marker=shapes[a], color="grey", markerfacecolor="white",
                       label=f"model picks {a}") for a in used_shapes]
    if (rows["source"] == "measured").any() and "time_p10_s" in rows:
        handles.append(Line2D([], [], color="grey", alpha=0.3, linewidth=6, label="measured p10-p90"))
    for ax in (time_ax, bw_ax):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(BYTES_FORMATTER)
        ax.set_xlabel("message size (bytes, log scale; 1 kB = 1e3 B)")
        ax.grid(True, which="minor", alpha=0.12, linewidth=0.4)
    time_ax.set_ylabel("time (us, log scale)")
    time_ax.set_title("time", fontsize=10)
    bw_ax.set_ylabel("busbw (GB/s = 1e9 B/s, log scale)")
    bw_ax.set_title("bus bandwidth (nccl-tests factors)", fontsize=10)
    legend_outside(fig, handles)
    return save(fig, path)
