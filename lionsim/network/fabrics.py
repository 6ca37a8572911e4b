"""The network transports NCCL runs over, as published nccl-tests sweeps show them.

NCCL's tuning model (nccl.py) ranks algorithms and protocols with one set of network
latencies, its `hwLat` NET row, written for InfiniBand: it chooses with them, it does not
predict with them. Across nodes real calls are slower, and how much depends on the transport
under NCCL. A fabric says, for one transport, what lionsim prices NCCL's chosen algorithm and
protocol with (NCCL still chooses with its own constants):

    hop_us     one inter-node hop of the chosen protocol (LL, LL128, Simple), in place of
               tuning.cc's hwLat NET value; a tree crosses 2 log2(nodes) hops, a ring 2 (nodes - 1)
    share      the part of the inter link's bandwidth the transport moves
    cap_GBps   the most bytes per second one node's transport moves, whatever the link (EFA
               without GPUDirect RDMA copies every byte through host memory: through_host, and
               a network may state its host's own rate, nccl.bounce_GBps in lionsim.network.sockets)
    channel_GBps  the socket transport's rate per channel: a node moves at most channels x
               this, from the network's NCCL socket settings (lionsim.network.sockets)
    protocol_share  each protocol's part of NCCL's modelled bandwidth across nodes
    protocols  the protocols NCCL enables over it: LL128 needs the NIC near the GPUs (up to
               PXB/PXN in tuning.cc), never true of a socket's Ethernet NIC

| fabric  | what it is                                                            | presets            |
|---------|-----------------------------------------------------------------------|--------------------|
| ib      | RDMA verbs (NCCL's IB transport): InfiniBand, RoCE                    | ib-*, dgx-*, a100x8-4hdr |
| efa     | AWS EFA with GPUDirect RDMA (p4d and later), aws-ofi-nccl plug-in     | examples/clusters/p4dn.toml |
| efa-host| EFA without GPUDirect RDMA (g4dn, p3dn): host memory, Simple only     | examples/clusters/g4dn-*-efa.toml |
| sockets | NCCL's socket transport over TCP (NCCL_IB_DISABLE=1, NCCL_NET=Socket) | 1gbe ... 100gbe, h100x8-*gbe |
| tuning  | tuning.cc's own constants, unchanged: a lower bound across nodes      | (name it to compare) |

A network names its fabric (`fabric = "efa"` in a profile); one that does not is sockets when
its inter link's alpha is at least 10 us (TCP's one-way latency is 10-50 us,
RDMA's 1-3 us), else ib.

The sockets fabric prices NCCL's socket settings by rule (lionsim.network.sockets): a node moves
at most channels x channel_GBps, the channels from the network's [nccl] table (NCCL's default
when it has none: 2 a NIC).

The ib, efa and sockets figures are fitted, not chosen: lionsim.network.fabric_fit fits them to
the sweeps marked "fit" in lionsim.published.sweeps (which rows of which published sweep, each
with its source), by least squares on log time over every row of those sweeps, and the sweeps
marked "held-out" check them; tests/published/test_sweeps.py refits and asserts the figures below
are the fit's, rounded as written. docs/clusters.md shows the sweeps and both errors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lionsim.registry import Registry

PROTOCOLS = ("ll", "ll128", "simple")


@dataclass(frozen=True, kw_only=True, slots=True)
class Fabric:
    """One transport under NCCL, as lionsim prices calls across nodes on it (module doc)."""

    name: str
    hop_us: tuple[float, float, float] | None
    """Microseconds of one inter-node hop for LL, LL128, Simple; None: tuning.cc's hwLat NET
    (per algorithm: tree 5.0 / 8.5 / 14, ring 2.7 / 4.0 / 14)."""
    share: float = 1.0
    """Part of the inter link's bandwidth the transport moves, in (0, 1]."""
    cap_GBps: float = math.inf
    """Most bytes a second (1e9) one node's transport moves, whatever the link; inf: none."""
    protocol_share: tuple[float, float, float] = (1.0, 1.0, 1.0)
    """Per protocol (LL, LL128, Simple), the part of NCCL's modelled bandwidth the protocol gets
    across nodes on this fabric (NCCL's refinements for LL and LL128 assume NVLink-like links)."""
    protocols: tuple[str, ...] = PROTOCOLS
    """Protocols NCCL enables over this transport."""
    through_host: bool = False
    """Every byte crosses host memory (no GPUDirect RDMA): cap_GBps is a host's rate, which a network
    may state for its own hosts (nccl.bounce_GBps, lionsim.network.sockets)."""
    channel_GBps: float | None = None
    """Bytes a second (1e9) one socket-transport channel moves; the node's cap is channels x this for
    the network's settings (lionsim.network.sockets); None: cap_GBps alone."""
    description: str = ""
    fitted_on: str = ""
    """Which sweeps (lionsim.published.sweeps keys) the figures were fitted on; "" when not fitted."""


FABRICS: Registry[Fabric] = Registry("fabric")

TUNING = Fabric(name="tuning", hop_us=None,
                description="NCCL's tuning model as it stands (tuning.cc hwLat NET): a lower bound across nodes")

# Fitted by lionsim.network.fabric_fit on the "fit" sweeps of lionsim.published.sweeps
# (`python -m lionsim.published.sweeps --fit` prints these figures); see the module doc.
IB = Fabric(name="ib", hop_us=(3.8, 11.0, 52.0), protocol_share=(1.0, 0.43, 1.0),
            description="RDMA verbs (InfiniBand, RoCE): NCCL's IB transport",
            fitted_on="ib-ndr-h100-2x8, ib-ndr-h100-4x8, ib-ndr-h100-8x8")
EFA = Fabric(name="efa", hop_us=(17.0, 24.0, 65.0), share=0.67, protocol_share=(1.0, 0.43, 1.0),
             description="AWS EFA with GPUDirect RDMA (p4d and later) through the aws-ofi-nccl plug-in",
             fitted_on="efa-p6-b200-2x8, efa-p4dn-2x8")
EFA_HOST = Fabric(name="efa-host", hop_us=(29.0, 29.0, 29.0), cap_GBps=2.9, protocols=("simple",), through_host=True,
                  description="AWS EFA without GPUDirect RDMA (g4dn, p3dn): through host memory, Simple only",
                  fitted_on="efa-g4dn-metal-2x1")
SOCKETS = Fabric(name="sockets", hop_us=(50.0, 50.0, 89.0), channel_GBps=0.98, protocol_share=(0.55, 1.0, 1.0),
                 protocols=("ll", "simple"),
                 description="NCCL's socket transport over TCP",
                 fitted_on="sockets-g4dn-8xl-2x1")

for _fabric in (IB, EFA, EFA_HOST, SOCKETS, TUNING):
    FABRICS.add(_fabric.name, _fabric)

TCP_ALPHA_US = 10.0
"""An inter link whose alpha is at least this is TCP (sockets) when its network names no fabric."""


def infer_fabric(inter_alpha_s: float) -> str:
    """The fabric of a network that names none: sockets for a TCP-like alpha, else ib (module doc)."""
    return "sockets" if inter_alpha_s * 1e6 >= TCP_ALPHA_US else "ib"
