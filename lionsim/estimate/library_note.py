"""The breakdown caption's lines about the library that priced comm, where what it prices is not
what the user's link or device would suggest:

- `sockets_cap_line`: NCCL over the sockets fabric moves at most its cap a node (channels x a
  channel's rate, lionsim.network.sockets) whatever the link, so a link faster than the cap is
  priced at the cap. The title says only "library: nccl over sockets"; this line says the cap
  binds, which fabric was taken and why (named by the network, or inferred from the inter
  link's alpha: lionsim.network.fabrics.infer_fabric) and what lifts it, in --need's words
  (lionsim.estimate.need.cap_reason).
"""

from __future__ import annotations

from lionsim.network.fabrics import TCP_ALPHA_US
from lionsim.network.link import Network


def sockets_cap_line(network: Network, workers: int) -> str:
    """One line where NCCL's fabric caps a node below this network's inter link (module doc); ""
    where no cap binds (one node, a library other than NCCL, a fabric without a cap, a link at or
    below the cap)."""
    from lionsim.estimate.need import cap_reason

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
    return f"Inter link {rate} a node, priced at the cap ({how}): " + cap_reason(fabric.name, fabric.cap_GBps)

