"""The breakdown caption's lines about the library that priced comm, where what it prices is not
what the user's link or device would suggest:

- `sockets_cap_line`: NCCL over the sockets fabric moves at most its cap a node (channels x a
  channel's rate, lionsim.network.sockets) whatever the link, so a link faster than the cap is
  priced at the cap. The title says only "library: nccl over sockets"; this line says the cap
  binds, which fabric was taken and why (named by the network, or inferred from the inter
  link's alpha: lionsim.network.fabrics.infer_fabric) and what lifts it, in --need's words
  (cap_reason, below).
- `gloo_traits_line`: a profile whose traits were fitted on gloo ranks (lionsim comm --backend
  gloo --fit) prices a GPU device's comm with gloo's floors and its CPU sums. estimate keeps a
  profile's traits as they are, as bench on the sim backend does (lionsim.network.network_for:
  only a real run on another backend refuses them, since there the measured library is not the
  one running); a modelled run keeps what the profile says, so the user can price a gloo
  cluster. Every estimate device is a GPU, which reduces on the device under NCCL: the line says
  the traits are gloo's and how to price NCCL instead.
- `unmeasured_ops_line`: a run issues an op the profile's library never measured (a fit with
  some --collective left out): it is priced by a stand-in, or with no floor at all, and the
  line says which ops, which runs and how (lionsim.network.unmeasured).
"""

from __future__ import annotations

import os

from lionsim.network.fabrics import FABRICS, TCP_ALPHA_US
from lionsim.network.link import Network
from lionsim.network.sockets import CHANNELS_PER_NIC


def sockets_cap_line(network: Network, workers: int) -> str:
    """One line where NCCL's fabric caps a node below this network's inter link (module doc); ""
    where no cap binds (one node, a library other than NCCL, a fabric without a cap, a link at or
    below the cap)."""
    if network.traits.model != "nccl" or network.nodes(workers) <= 1:
        return ""
    fabric = network.nccl_fabric()
    link = network.inter_link()
    link_GBps = link.bandwidth_Bps * link.efficiency / 1e9 * fabric.share  # what NCCL's model moves uncapped
    if not link_GBps > fabric.cap_GBps:
        return ""
    stated = link.bandwidth_Bps / 1e9
    rate = f"{stated:.3g} GB/s" + ("" if link_GBps == stated else f" ({link_GBps:.3g} GB/s moved at efficiency "
                                                                  f"{link.efficiency:g})")
    alpha_us = network.inter.alpha_s * 1e6
    if network.fabric:
        how = f"fabric {fabric.name}, named by {network.name}"
    else:
        rule = f">= {TCP_ALPHA_US:g} -> sockets" if fabric.name == "sockets" else f"< {TCP_ALPHA_US:g} -> ib"
        how = f"fabric {fabric.name}, inferred: {network.name} names none and its inter alpha_us {alpha_us:g} {rule}"
    return (f"Inter link {rate} a node, but priced at NCCL's lower cap of {fabric.cap_GBps:.3g} GB/s ({how}): "
            + cap_reason(fabric.name, fabric.cap_GBps))


def gloo_traits_line(network: Network, spec: str | os.PathLike[str], traits_option: str | None) -> str:
    """One line where comm was priced by a profile's traits measured on gloo (module doc); "" where
    the traits are another backend's or were picked by --traits."""
    traits = network.traits
    if traits_option is not None or traits.backend != "gloo":
        return ""
    source = profile_source(network, spec)
    sums = ", ".join(f"{rate:.3g} GB/s for {dtype}" for dtype, rate in traits.reduce_GBps)
    ranks = network.measured.get("ranks")
    on = f"{ranks} gloo ranks" if isinstance(ranks, int) else "gloo ranks"
    return (f"{source}'s library ({traits.name}) was measured on {on}" + (f" (CPU sums at {sums})" if sums else "")
            + "; GPUs reduce on the device: --traits nccl prices NCCL on this link.")


def unmeasured_ops_line(r, spec: str | os.PathLike[str]) -> str:
    """One line where a run of `r` (a resolved estimate) issues an op its profile's library never
    measured (lionsim.network.unmeasured: a fit with some --collective left out, or a hand-written
    [traits.ops] without it), naming the op, the runs and how it is priced; "" otherwise."""
    from lionsim.network.unmeasured import line, unmeasured

    if not unmeasured(r.network):  # a preset, a built-in library, a fit of every op: nothing to probe
        return ""
    from lionsim.estimate.probe import issued_by_run

    issued = {label: {op for op, _ in calls} for label, calls in issued_by_run(r).items()}
    return line(r.network, profile_source(r.network, spec), issued)


def profile_source(network: Network, spec: str | os.PathLike[str]) -> str:
    """The profile as a line names it: its file's name, else the network's."""
    return os.path.basename(os.fspath(spec)) if os.path.exists(os.fspath(spec)) else network.name


def cap_reason(fabric_name: str, cap_GBps: float) -> str:
    """Why a node on a capped fabric stops at `cap_GBps` whatever the link (the cap named first), and
    what to change: more channels where the fabric prices per channel (a profile's [nccl]
    min_nchannels), an RDMA fabric (a profile's, or an InfiniBand preset), or --traits ideal (the
    link alone, no library's cap). The same for every run on one network: --need's table prints it once
    (lionsim.estimate.need.shared_reason), the breakdown's caption in sockets_cap_line."""
    fabric = FABRICS.get(fabric_name)
    channel = fabric.channel_GBps
    channels = "" if channel is None else (
        f"a profile's [nccl] min_nchannels (NCCL_MIN_NCHANNELS: {channel:g} GB/s a channel, {CHANNELS_PER_NIC} a "
        f"NIC by default; docs/clusters.md, \"NCCL's socket settings\"), ")
    stated = fabric.through_host and cap_GBps != fabric.cap_GBps  # the profile's nccl.bounce_GBps set it
    whose = " (the host's rate its profile states, [nccl] bounce_GBps)" if stated else ""
    host = "" if not fabric.through_host else (
        f"a profile's [nccl] bounce_GBps (what its hosts move through memory; {fabric.cap_GBps:g} GB/s is one "
        "g4dn GPU's; docs/clusters.md), ")
    return (f"NCCL's {fabric_name} transport moves at most {cap_GBps:g} GB/s a node{whose} whatever the link. "
            f"What lifts it: {channels}{host}an RDMA fabric (fabric = \"ib\" in a profile, or an InfiniBand preset: "
            "--network dgx-h100, a100x8-4hdr), or --traits ideal (the link alone, no library's cap).")
