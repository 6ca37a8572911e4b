"""`lionsim networks`: the presets, and with --traits the collective libraries' built-in traits
(`lionsim comm` is in comm_cmd.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.table import Table

from lionsim.cli.app import app
from lionsim.cli.lists import list_table
from lionsim.cli.output import Format, emit
from lionsim.network.link import GB, NVLINK_GBPS, US, Link
from lionsim.network.presets import NETWORKS
from lionsim.numbers import binary_bytes_text, rounded

if TYPE_CHECKING:  # annotations only: pandas loads when a frame is built
    import pandas as pd


def _link_text(link: Link | None) -> str:
    if link is None:
        return "-"
    text = f"{link.alpha_s / US:g}us {link.bandwidth_Bps / GB:g}GB/s"
    return text if link.efficiency == 1.0 else f"{text} x {link.efficiency:g}"


def _in(value: float, unit: float = 1.0) -> float:
    """`value` in `unit` as it was set, to 12 significant digits: 720e-6 s is 720 us, where the
    division alone gives 720.0000000000001 (the CSV and JSON print every digit)."""
    return rounded(value / unit, 12)


def networks_frame() -> pd.DataFrame:
    """One row per preset, every value in its unit (the --format csv/json of `lionsim networks`)."""
    import pandas as pd

    rows = []
    for name, net in NETWORKS.items():
        intra = net.intra
        rows.append({"name": name, "alpha_us": _in(net.inter.alpha_s, US), "bandwidth_GBps": _in(net.inter.bandwidth_Bps, GB),
                     "efficiency": net.inter.efficiency, "workers_per_node": net.workers_per_node,
                     "intra_alpha_us": None if intra is None else _in(intra.alpha_s, US),
                     "intra_bandwidth_GBps": None if intra is None else _in(intra.bandwidth_Bps, GB),
                     "intra_efficiency": None if intra is None else intra.efficiency,
                     "library": net.traits.name, "fabric": net.nccl_fabric().name, "description": net.description})
    return pd.DataFrame.from_records(rows)


def _networks_table() -> Table:
    # short headers that never truncate; the description folds in what is left of 80 columns
    # the listings' style; the intra link breaks between its latency and bandwidth and the
    # header "w/node" over two lines, so the description gets about 40 of 80 columns
    table = list_table("network presets (inter link; GB = 1e9 bytes)",
                       "us: per-message latency alpha; GB/s: bandwidth per direction; eff: efficiency (the link carries "
                       "GB/s x eff); w/node: "
                       "workers per node; intra: the link inside a node. In brackets, the collective library bench and "
                       "estimate price a preset with unless --traits (or a real backend) names another: NCCL over a "
                       "transport, or the ideal library (the alpha-beta formulas), and 'NCCL:' the transport NCCL "
                       "crosses nodes on there under --traits nccl (lionsim.network.fabrics)")
    table.add_column("name", no_wrap=True)
    intra = max((len(word) for _, net in NETWORKS.items() for word in _link_text(net.intra).split()), default=5)
    for column in ("us", "GB/s", "eff", "intra", "w/\nnode"):
        table.add_column(column, justify="right", no_wrap=column != "intra",
                         max_width=max(intra, len(column)) if column == "intra" else None)
    table.add_column("description", overflow="fold", ratio=1)
    for name, net in NETWORKS.items():
        table.add_row(name, f"{net.inter.alpha_s / US:g}", f"{net.inter.bandwidth_Bps / GB:g}",
                      f"{net.inter.efficiency:g}", _link_text(net.intra), str(net.workers_per_node),
                      f"{net.description} ({library_text(net)})")
    return table


def library_text(net) -> str:
    """Which library prices the preset by default, and the transport NCCL runs across its nodes, short
    enough for the listing's description column (its caption says the rest): "NCCL over sockets", or
    "ideal library; NCCL: sockets" (NCCL, with --traits nccl, over sockets). Where the fabric's
    per-node cap is below what the link carries (GB/s x eff), the cap is what NCCL moves and the text
    says so beside the link's figure; a flat NVLink preset is one node, no fabric crosses nodes:
    "NCCL: none, one node" (the CSV's fabric column keeps what would price --traits nccl there)."""
    fabric = net.nccl_fabric()
    if net.traits.model == "nccl":
        carried = net.inter.bandwidth_Bps * net.inter.efficiency / GB
        if fabric.cap_GBps < carried:
            return (f"NCCL over {fabric.name}: {fabric.cap_GBps:.3g} GB/s a node, its channels' cap, of "
                    f"the link's {carried:.3g}")
        return f"NCCL over {fabric.name}"
    one_node = net.intra is None and net.inter.bandwidth_Bps >= NVLINK_GBPS * GB
    return f"{net.traits.name} library; NCCL: {'none, one node' if one_node else fabric.name}"


def traits_frame() -> pd.DataFrame:
    """One row per (built-in traits, op): what a library adds to the link (lionsim.network.traits)."""
    import pandas as pd

    from lionsim.network.libraries import TRAITS

    rows = []
    for name, traits in TRAITS.items():
        slow = traits.slow
        for op, t in traits.ops or (("", None),):
            rows.append({"traits": name, "backend": traits.backend, "op": op,
                         "floor_us": None if t is None else _in(t.floor_s, US), "algorithm": None if t is None else t.algorithm,
                         "duplex": None if t is None else _duplex_text(t.duplex), "host_GBps": _in(traits.host_GBps),
                         "slow_probability": slow.probability, "slow_extra_us": _in(slow.extra_s, US),
                         "slow_max_bytes": slow.max_bytes,
                         "staging_GBps": None if traits.staging is None else _in(traits.staging.GBps),
                         "staging_copy_us": None if traits.staging is None else _in(traits.staging.copy_s, US),
                         "description": traits.description})
    return pd.DataFrame.from_records(rows)


def _duplex_text(duplex) -> str:
    last = "larger: " if len(duplex) > 1 else ""

    def size(r) -> str:
        return last if r.max_bytes == float("inf") else f"<= {binary_bytes_text(r.max_bytes)}: "

    return ", ".join(f"{size(r)}{r.share:g}"
                     + ("" if r.floor_s is None else f" (own floor {r.floor_s / US:g})") for r in duplex)


def _traits_table() -> Table:
    from lionsim.network.libraries import TRAITS

    table = list_table("collective library traits (on top of a network's links)",
                  caption="floor: us per call beyond alpha, at every size whose duplex band has no own floor; "
                          "duplex: the share of the link each direction gets, by size, and a band's own floor (us), "
                          "which replaces the op's there; host: a rank's own cap, GB/s; slow: small calls' slow mode; staged: a library on "
                          "host memory's copies. Use one with `--traits "
                          "NAME` on bench, estimate and comm, or write your own as a profile's \\[traits] table.")
    for column in ("traits", "op", "floor", "algorithm", "duplex"):
        table.add_column(column, no_wrap=column != "duplex", overflow="fold")
    for name, traits in TRAITS.items():
        slow = traits.slow
        extra = (f"host {traits.host_GBps:g} GB/s" if traits.host_GBps != float("inf") else "no host cap") + (
            f"; slow: {slow.probability:.0%} of calls <= {binary_bytes_text(slow.max_bytes)} take +{slow.extra_s * 1e3:g} ms"
            if slow.applies(0) else "") + (
            f"; staged: each buffer copied to the host and back at {traits.staging.GBps:g} GB/s, "
            f"{traits.staging.copy_s / US:g} us a copy" if traits.staging is not None else "")
        if not traits.ops:
            chooser = "NCCL's model" if traits.model == "nccl" else "cheapest plan"
            table.add_row(name, "-", "0", chooser, f"1 ({extra})")
        for i, (op, t) in enumerate(traits.ops):
            table.add_row(name if i == 0 else "", op, f"{t.floor_s / US:g}", t.algorithm or "cheapest",
                          _duplex_text(t.duplex) + (f" ({extra})" if i == 0 else ""))
    return table


@app.command()
def networks(
    format: Format = "table",
    traits: bool = typer.Option(False, "--traits", help="List the collective libraries' built-in traits instead "
                                "(ideal, nccl, gloo, mpi: what `--traits NAME` adds to the links)."),
) -> None:
    """List the network presets (per direction; GB = 1e9 bytes), or with --traits the libraries' traits."""
    if traits:
        emit(traits_frame, format, _traits_table)
    else:
        emit(networks_frame, format, _networks_table)
