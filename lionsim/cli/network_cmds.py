"""`lionsim networks`: the presets (`lionsim comm` is in comm_cmd.py)."""

from __future__ import annotations

from rich.table import Table

from lionsim.cli.app import app, console
from lionsim.network import NETWORKS, Link
from lionsim.network.link import GB, US


def _link_text(link: Link | None) -> str:
    if link is None:
        return "-"
    text = f"{link.alpha_s / US:g} us {link.bandwidth_Bps / GB:g} GB/s"
    return text if link.efficiency == 1.0 else f"{text} x {link.efficiency:g}"


@app.command()
def networks() -> None:
    """List the network presets (per direction; GB = 1e9 bytes)."""
    table = Table(title="network presets (inter link; GB = 1e9 bytes)")
    table.add_column("name", no_wrap=True)
    for column in ("alpha us", "bandwidth GB/s", "efficiency", "intra link", "workers/node"):
        table.add_column(column, justify="right", no_wrap=column == "intra link")
    table.add_column("description", overflow="fold")
    for name, net in NETWORKS.items():
        table.add_row(
            name,
            f"{net.inter.alpha_s / US:g}",
            f"{net.inter.bandwidth_Bps / GB:g}",
            f"{net.inter.efficiency:g}",
            _link_text(net.intra),
            str(net.workers_per_node),
            net.description,
        )
    console.print(table)
