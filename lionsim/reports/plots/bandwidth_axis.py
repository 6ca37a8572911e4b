"""A bandwidth sweep's x axis (estimate's sweep.png and to_target.png): every swept point labelled,
and each swept point that is a link preset's rate named as the network given is.

Round log labels (0.2, 0.5, 1, 2) left a sweep's own points unlabelled: --sweep
bandwidth=0.117,0.3,1,2.9 showed no label below 0.2, so the 0.117 point (1gbe) read as nothing in
particular while 2.9 carried the given network's line (mark_given_network). Where the points are
few and far enough apart to read, they are the labels; a point at a preset's rate gets a line of
the given network's kind, in grey, named in the legend.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.ticker import NullFormatter

from lionsim.reports.columns import NETWORK_GBPS
from lionsim.reports.plots.style import MIN_LOG_GAP

MAX_SWEPT_TICKS = 12
"""Most swept points labelled each; a denser sweep keeps the round log labels."""
SAME_RATE = 0.01
"""Relative difference within which a swept point is a preset's rate (the presets' figures have
three digits: 0.117, 2.9)."""
PRESET_STYLE = {"color": "0.5", "linestyle": "-.", "linewidth": 0.9, "zorder": 1.4}
"""A preset's line: the given network's dash-dot (estimate_marks.GIVEN_STYLE), grey and thinner,
for it is a point of the sweep, not the network the rest of the estimate priced."""


def link_presets() -> dict[str, float]:
    """Each flat link preset's name -> the rate it moves, GB/s (its inter link's bandwidth x
    efficiency, as sweep.csv's NETWORK_GBPS and the swept values are); loopback, one host's, is no
    link between nodes. A node preset (dgx-h100) shares its inter link with a flat one and a rate
    is named once, by its first preset."""
    from lionsim.network.presets import NETWORKS

    rates: dict[str, float] = {}
    for name, network in NETWORKS.items():
        rate = network.inter.bandwidth_Bps * network.inter.efficiency / 1e9
        if network.workers_per_node == 1 and name != "loopback" and not _near(rate, rates.values()):
            rates[name] = rate
    return rates


def _near(value: float, others) -> bool:
    return any(abs(value - other) <= SAME_RATE * other for other in others)


def presets_swept(frame: pd.DataFrame) -> list[tuple[str, float]]:
    """The presets (name, rate) at a swept bandwidth of `frame` (sweep.csv), in the axis's order; not
    one at the given network's rate, whose own line is drawn there (mark_given_network)."""
    given = float(frame[NETWORK_GBPS].iloc[0]) if NETWORK_GBPS in frame.columns else math.nan
    values = sorted(set(frame["sweep_value"].astype(float)))
    return sorted((name, rate) for name, rate in link_presets().items()
                  if _near(rate, values) and not (math.isfinite(given) and _near(rate, [given])))


def mark_presets(frame: pd.DataFrame, axes, named) -> list[tuple[str, float]]:
    """On a bandwidth sweep, a grey dash-dot line on every one of `axes` at each preset's rate the
    sweep has a point at (presets_swept), named in `named`'s legend. Returns those presets."""
    marked = sorted(presets_swept(frame), key=lambda preset: preset[1])
    for name, rate in marked:
        for ax in axes:
            ax.axvline(rate, label=f"{name}: {rate:.3g} GB/s" if ax is named else None, **PRESET_STYLE)
    return marked


def label_swept(axis, values) -> bool:
    """Label a log axis (ax.xaxis) at each swept value alone, as it is written (0.117, 2.9), where
    there are at most MAX_SWEPT_TICKS of them at least MIN_LOG_GAP of their span apart, each written
    in three digits (a START:STOP:N range's geometric steps are not); returns whether it did (else
    the caller labels round values)."""
    points = np.array(sorted(set(float(v) for v in values)))
    if not 1 < len(points) <= MAX_SWEPT_TICKS or points[0] <= 0:
        return False
    if any(f"{v:.3g}" != f"{v:g}" for v in points):  # a range's steps (0.809384): the round labels read better
        return False
    decades = np.diff(np.log10(points))
    if decades.min() < MIN_LOG_GAP * decades.sum():  # as labelled_log_axis spaces its labels
        return False
    axis.set_ticks(points, [f"{v:g}" for v in points])
    axis.set_minor_formatter(NullFormatter())  # the round values' minor labels would crowd the points
    return True
