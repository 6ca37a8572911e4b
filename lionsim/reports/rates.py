"""Which rate an estimate's bandwidth is: what the inter link moves, or the link's own rate.

A network's inter link carries its stated rate x its efficiency (lionsim.network.link: a profile's
bandwidth_GBps and `lionsim networks`' GB/s are the stated rate; h100x8-100gbe's 11.7 GB/s at
efficiency 0.43 moves 5.03). `--need`'s answer and a bandwidth sweep's values are the rate moved,
the efficiency folded in (lionsim.estimate.sweep.with_bandwidth): a renter comparing them with a
NIC's rating or a price sheet would read them 1 / efficiency too low, so every table, plot and
column that shows them says which it is, and where the efficiency is below 1 the link's own rate
it takes at this network's efficiency: moved / efficiency. estimate.csv's EFFICIENCY column carries
the given network's efficiency to the files the plots are drawn from.
"""

from __future__ import annotations

import math

EFFICIENCY = "inter_efficiency"
"""estimate.csv's (and sweep.csv's) column: the given network's inter link efficiency."""


def efficiency_of(frame) -> float:
    """The given network's inter efficiency in an estimate or sweep frame; 1 where the file predates
    the column (its figures said nothing of it)."""
    if EFFICIENCY not in frame.columns:
        return 1.0
    value = float(frame[EFFICIENCY].iloc[0])
    return value if math.isfinite(value) and value > 0 else 1.0


def moved_words(network: str, efficiency: float, what: str, column: str = "") -> str:
    """A caption's sentence saying that `what` ("needed", "bandwidth") is the rate the inter link
    moves a node (on `network`, where named), and how the link's own rate follows from it (in
    `column`, where a table shows it)."""
    network = f" on {network}" if network else ""
    if efficiency >= 1.0:
        return f"{what}: the inter link's rate a node{network} (its efficiency is 1: the link moves all of it)"
    rate = f"{what} / {efficiency:g} (the rate a profile's bandwidth_GBps, `lionsim networks` and a NIC's rating state)"
    return (f"{what}: what the inter link moves a node{network}, after its efficiency {efficiency:g}; "
            + (f"{column}: the link's own rate that moves it, {rate}" if column else
               f"the link's own rate that moves it is {rate}"))


def axis_label(efficiency: float, log: bool = True) -> str:
    """A bandwidth axis' label: the rate moved, and where the efficiency is below 1 the link's rate."""
    scale = ", log scale" if log else ""
    if efficiency >= 1.0:
        return f"inter-node bandwidth (GB/s a node{scale})"
    return f"inter-node bandwidth moved (GB/s a node: the link's own rate x {efficiency:g}{scale})"
