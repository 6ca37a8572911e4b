"""The plots of a comm.csv, nccl-tests style: time and bus bandwidth against message size
(log-log), one figure per collective, the model dashed with a hollow dot at each priced size and the
measurement solid with filled ones.

One colour per worker count and dtype, so a model line and the measurement of the same N and
dtype share it; one line style per model network (dashed: the first, e.g. the preset the sweep
was priced on; dash-dot: the next), and the profile `--fit` wrote from the measurement dotted,
whether the prior network is drawn beside it or not (comm leaves it out without --network). Where
the model picks the cheapest algorithm per size (`--algorithm auto`), its points are marked
with one marker shape per algorithm, so the switches show.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
from matplotlib.lines import Line2D

from lionsim.reports.plots.style import (MARKERS, PALETTE, figure, labelled_log_axis, legend_outside, mark_every, save,
                                         size_axis)


def plain(value: float) -> str:
    """A y tick in positional digits, whatever its size, thousands grouped ("0.005", "1,000,000"):
    every comm plot's time and busbw axes label so, where a wide axis read 10^-2 and a narrow one
    0.005 in the same --out, and an 8-digit time in microseconds needs its commas to be read."""
    import numpy as np

    digits = np.format_float_positional(float(f"{value:.12g}"), trim="-")  # 3 x 10^-1 is 0.30000000000000004
    sign, unsigned = ("-", digits[1:]) if digits.startswith("-") else ("", digits)
    whole, point, fraction = unsigned.partition(".")
    return sign + f"{int(whole):,}" + point + fraction if whole.isdigit() else digits


COMM_NEEDS = ["collective", "algorithm", "workers", "bytes", "time_s", "busbw_GBps", "source"]


def plot_comm(out_dir: Path, comm: pd.DataFrame, fitted: str | None = None,
              libraries: dict[str, str] | None = None, measured_on: str | None = None) -> list[Path]:
    """comm_<collective>.png (and .svg) per collective in the table, or comm_<collective>_<dtype>
    per dtype where a sweep measured the collective in several; return their paths. `fitted`:
    the model network that is the profile `--fit` wrote, drawn dotted; `libraries`: the library
    that priced each model network ("ideal", "nccl over sockets"), named in the title as the
    table names it (a comm.csv redrawn alone records none); `measured_on`: where the measured rows
    were measured (lionsim.reports.titles.measured_on: "loopback", "between hosts"), as the table says."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    comm = comm.assign(dtype=comm["dtype"].fillna("") if "dtype" in comm else "")
    colours = {w: PALETTE[i % len(PALETTE)] for i, w in enumerate(sorted(comm["workers"].unique()))}
    models = list(dict.fromkeys(comm.loc[comm["source"] == "model", "network"])) if "network" in comm else [""]
    styles = model_styles(models, fitted)
    algorithms = list(dict.fromkeys(comm.loc[comm["source"] == "model", "algorithm"]))
    shapes = {a: MARKERS[i % len(MARKERS)] for i, a in enumerate(algorithms)}
    paths: list[Path] = []
    for op, rows in comm.groupby("collective", sort=False):
        dtypes = [d for d in dict.fromkeys(rows["dtype"]) if d]
        for dtype in dtypes if len(dtypes) > 1 else [None]:
            part = rows if dtype is None else rows[rows["dtype"].isin([dtype, ""])]
            name = op if dtype is None else f"{op}_{dtype}"
            paths += _collective_plot(op if dtype is None else f"{op} ({dtype})", part, colours, shapes, styles,
                                      libraries or {}, measured_on, out_dir / f"comm_{re.sub(r'[^A-Za-z0-9._-]', '_', name)}.png")
    return paths


def model_styles(models: list[str], fitted: str | None = None) -> dict[str, str]:
    """Each model network's line style (module doc): the fitted profile dotted, the others
    dashed, then dash-dot, in order."""
    others = [net for net in models if net != fitted]
    return {net: ("--", "-.")[i % 2] for i, net in enumerate(others)} | ({fitted: ":"} if fitted in models else {})


def _collective_plot(op: str, rows: pd.DataFrame, colours: dict, shapes: dict, styles: dict, libraries: dict,
                     link: str | None, path: Path) -> list[Path]:
    names = {"--": "dashed", ":": "dotted", "-.": "dash-dot"}
    networks = ", ".join(f"{n} ({'fitted, ' if styles.get(n) == ':' else ''}"
                         f"{libraries[n] + ', ' if n in libraries else ''}{names[styles.get(n, '--')]})" for n in dict.fromkeys(
        rows.loc[rows["source"] == "model", "network"])) if "network" in rows else ""
    measured_on = ", ".join(dict.fromkeys(rows.loc[rows["source"] == "measured", "algorithm"]))
    measured_on += f" on {link}" if measured_on and link else ""
    subtitle = " · ".join(x for x in (f"model: {networks}" if networks else "",
                                      f"measured: {measured_on}" if measured_on else "") if x)
    fig, (time_ax, bw_ax) = figure(f"{op}: time and bus bandwidth vs message size", subtitle, ncols=2,
                                   size=(13.0, 5.2))
    handles = []
    drawn: dict = {time_ax: [], bw_ax: []}  # each panel's values, for its y labels
    used_shapes: list[str] = []
    rows = rows.assign(_net=rows["network"] if "network" in rows else "")
    for (source, net, n, dtype), series in rows.groupby(["source", "_net", "workers", "dtype"], sort=False):
        series = series.sort_values("bytes")
        model = source == "model"
        colour, style = colours[n], styles.get(net, "--")
        algs = list(dict.fromkeys(series["algorithm"]))
        name = (f"{'model ' + net if model else 'measured (mean)'}, {n} workers"
                + (f" ({algs[0]})" if model and len(algs) == 1 else ""))
        for ax, col, factor in ((time_ax, "time_s", 1e6), (bw_ax, "busbw_GBps", 1.0)):
            drawn[ax] += list(series[col] * factor)
            if model:  # one algorithm: a hollow dot at each priced size (two sizes drew a bare line)
                ax.plot(series["bytes"], series[col] * factor, color=colour, linestyle=style, linewidth=1.4,
                        marker="o" if len(algs) == 1 else None, markersize=3.5, markerfacecolor="white",
                        markevery=mark_every(len(series)))
                if len(algs) > 1:  # auto: show which algorithm the model picked at each size
                    for alg, part in series.groupby("algorithm", sort=False):
                        ax.plot(part["bytes"], part[col] * factor, linestyle="", marker=shapes[alg], markersize=4,
                                color=colour, markerfacecolor="white", markevery=mark_every(len(part)))
                        if alg not in used_shapes:
                            used_shapes.append(alg)
            else:  # the measured mean where the run recorded it: what the model's mean predicts
                # (comm.csv's measured busbw comes from that mean already, as nccl-tests' does)
                mean = col == "time_s" and "time_mean_s" in series and series["time_mean_s"].notna().all()
                ax.plot(series["bytes"], series["time_mean_s" if mean else col] * factor, color=colour, linestyle="-",
                        linewidth=1.6, marker="o", markersize=4.5, markevery=mark_every(len(series)))
                if {"time_p10_s", "time_p90_s"} <= set(series.columns) and col == "time_s":
                    drawn[ax] += [*series["time_p10_s"] * 1e6, *series["time_p90_s"] * 1e6]
                    ax.fill_between(series["bytes"], series["time_p10_s"] * 1e6, series["time_p90_s"] * 1e6,
                                    color=colour, alpha=0.15, linewidth=0)
        handles.append(Line2D([], [], color=colour, linestyle=style if model else "-",
                              marker="o" if not model or len(algs) == 1 else None,
                              markerfacecolor="white" if model else colour, markersize=3.5 if model else 6,
                              label=name))
    handles += [Line2D([], [], linestyle="", marker=shapes[a], color="grey", markerfacecolor="white",
                       label=f"model picks {a}") for a in used_shapes]
    if (rows["source"] == "measured").any() and "time_p10_s" in rows:
        handles.append(Line2D([], [], color="grey", alpha=0.3, linewidth=6, label="measured p10-p90"))
    sizes = sorted(set(rows["bytes"]))
    for ax in (time_ax, bw_ax):
        ax.set_yscale("log")
        ax.set_xlabel(size_axis(ax, sizes))  # the table's unit system (binary for --sizes 1KiB:1GiB)
        ax.grid(True, which="minor", alpha=0.12, linewidth=0.4)
        values = [v for v in drawn[ax] if v > 0]
        if values:  # round values in plain digits at any span: one style for every collective's plot
            labelled_log_axis(ax.yaxis, min(values), max(values), plain)
    time_ax.set_ylabel("time (us, log scale)")
    time_ax.set_title("time", fontsize=10)
    bw_ax.set_ylabel("busbw (GB/s = 1e9 B/s, log scale)")
    bw_ax.set_title("bus bandwidth (nccl-tests factors)", fontsize=10)
    legend_outside(fig, handles)
    return save(fig, path)
