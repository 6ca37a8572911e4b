"""`lionsim networks`: the presets (`lionsim comm` is in comm_cmd.py)."""

from __future__ import annotations

from rich import box
from rich.table import Table

from lionsim.cli.app import app
from lionsim.cli.output import Format, emit
from lionsim.network.link import GB, US, Link
from lionsim.network.presets import NETWORKS


def _link_text(link: Link | None) -> str:
    if link is None:
        return "-"
    text = f"{link.alpha_s / US:g}us {link.bandwidth_Bps / GB:g}GB/s"
    return text if link.efficiency == 1.0 else f"{text} x {link.efficiency:g}"


def networks_frame() -> pd.DataFrame:
    """One row per preset, every value in its unit (the --format csv/json of `lionsim networks`)."""
    import pandas as pd

    rows = []
    for name, net in NETWORKS.items():
        intra = net.intra
        rows.append({"name": name, "alpha_us": net.inter.alpha_s / US, "bandwidth_GBps": net.inter.bandwidth_Bps / GB,
                     "efficiency": net.inter.efficiency, "workers_per_node": net.workers_per_node,
                     "intra_alpha_us": None if intra is None else intra.alpha_s / US,
                     "intra_bandwidth_GBps": None if intra is None else intra.bandwidth_Bps / GB,
                     "intra_efficiency": None if intra is None else intra.efficiency,
                     "description": net.description})
    return pd.DataFrame.from_records(rows)


def _networks_table() -> Table:
    # short headers that never truncate; the description folds in what is left of 80 columns
    table = Table(title="network presets (inter link; GB = 1e9 bytes)", box=box.SIMPLE_HEAD, padding=(0, 1),
                  pad_edge=False, caption="us: per-message latency alpha; GB/s: bandwidth per direction; eff: "
                                          "efficiency; w/node: workers per node; intra: the link inside a node")
    table.add_column("name", no_wrap=True)
    for column in ("us", "GB/s", "eff", "intra", "w/node"):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("description", overflow="fold", ratio=1)
    for name, net in NETWORKS.items():
        table.add_row(name, f"{net.inter.alpha_s / US:g}", f"{net.inter.bandwidth_Bps / GB:g}",
                      f"{net.inter.efficiency:g}", _link_text(net.intra), str(net.workers_per_node), net.description)
    return table


@app.command()
def networks(format: Format = "table") -> None:
    """List the network presets (per direction; GB = 1e9 bytes)."""
    emit(networks_frame, format, _networks_table)
