"""`lionsim networks` (the presets) and `lionsim comm` (collective cost table, nccl-tests style)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from lionsim.cli.app import ConfigOption, app, console
from lionsim.errors import LionsimError
from lionsim.network import AUTO, COLLECTIVE_ALGORITHMS, NETWORKS, TABLE_OPS, Link, comm_table, load_network, parse_sizes
from lionsim.network.link import GB, US
from lionsim.reports.files import check_out_dir, make_dir, write_atomic


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


def _workers(values: list[str]) -> list[int]:
    """Repeatable and/or comma-separated worker counts."""
    out = []
    for item in (part.strip() for value in values for part in value.split(",")):
        try:
            out.append(int(item))
        except ValueError:
            raise LionsimError(f"bad --workers value {item!r}; use integers >= 2, e.g. --workers 2,4,8") from None
    return out


def _human_bytes(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n} B"


@app.command()
def comm(
    sizes: str = typer.Option(
        "1KB:1GB", "--sizes", help="START:END[:xF] (x2 steps by default) and/or a comma list; B, KB/MB/GB = 1e3/1e6/1e9, KiB/MiB/GiB = 2^10/2^20/2^30."
    ),
    collective: list[str] = typer.Option(
        ["all_reduce"], "--collective", help=f"Repeatable: {', '.join(TABLE_OPS)}."
    ),
    workers: list[str] = typer.Option(["8"], "--workers", help="Worker counts (>= 2): repeat the option or give a comma list."),
    network: str = typer.Option("10gbe", "--network", help="A preset (see `lionsim networks`) or a .toml/.json profile."),
    algorithm: str = typer.Option(
        AUTO, "--algorithm", help=f"auto (the cheapest for each size) or one of: {', '.join(COLLECTIVE_ALGORITHMS.names())}."
    ),
    out: Path | None = typer.Option(None, "--out", help="Write DIR/comm.csv."),
    config: Path | None = ConfigOption,
) -> None:
    """Collective cost table, nccl-tests style: time, algbw = S/t and busbw per size (modelled)."""
    net = load_network(network)
    frame = comm_table(collective, parse_sizes(sizes), _workers(workers), net, algorithm)
    if out is not None:
        check_out_dir(out)
    table = Table(title=f"modelled collectives on {net.name} (GB = 1e9 bytes)")
    for column in ("collective", "algorithm", "workers", "size", "time us", "algbw GB/s", "busbw GB/s"):
        left = column in ("collective", "algorithm")
        table.add_column(column, justify="left" if left else "right", no_wrap=left)
    for row in frame.itertuples(index=False):
        table.add_row(
            row.collective,
            row.algorithm,
            str(row.workers),
            _human_bytes(row.bytes),
            f"{row.time_s * 1e6:.1f}",
            f"{row.algbw_GBps:.3f}",
            f"{row.busbw_GBps:.3f}",
        )
    console.print(table)
    if out is not None:
        path = write_atomic(make_dir(out) / "comm.csv", lambda f: frame.to_csv(f, index=False))
        console.print(f"wrote {path}", markup=False, highlight=False)
