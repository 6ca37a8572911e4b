"""Network presets: realistic goodput, not line rate (each figure derived in the table).

| preset        | bandwidth GB/s | eff. | alpha us | where the figures come from |
|---------------|----------------|------|----------|-----------------------------|
| loopback      | 10             | 1.0  | 10       | one host's loopback: a memory copy (about 10 GB/s on a server core), a syscall's latency; a library's own host cap (gloo: about 1 GB/s here, lionsim.network.libraries) binds first |
| 100mbe        | 0.0117         | 1.0  | 50       | 100 Mbit Ethernet: 0.0125 GB/s line rate x 0.94 TCP/IP framing; alpha as 1gbe |
| 1gbe          | 0.117          | 1.0  | 50       | 0.125 GB/s line rate x 0.94 TCP/IP framing (1448 payload / 1538 wire bytes at MTU 1500); alpha top of the 10-50 us TCP range |
| 10gbe         | 1.17           | 1.0  | 25       | 1.25 GB/s x 0.94; alpha mid-range of 10-50 us |
| 25gbe         | 2.9            | 1.0  | 25       | 3.125 GB/s x 0.94 (rounded down); alpha mid-range |
| 100gbe        | 11.7           | 0.43 | 20       | 12.5 GB/s x 0.94 TCP goodput; NCCL's socket transport reached 4-6 GB/s busbw over 100 GbE tuned (NCCL_MIN_NCHANNELS=4, NVIDIA/nccl issue 450), so efficiency 0.43 gives 5 GB/s; alpha mid-range of 10-30 us. NCCL with its generic socket defaults moves 1.96 GB/s a node (the sockets fabric's rule, lionsim.network.sockets) |
| ib-hdr        | 24             | 1.0  | 2        | HDR 200 Gb/s = 25 GB/s, about 24 GB/s achieved (RDMA); alpha 1-3 us |
| ib-ndr        | 48             | 1.0  | 2        | NDR 400 Gb/s = 50 GB/s, about 48 GB/s achieved; alpha 1-3 us |
| nvlink4       | 380            | 1.0  | 1        | H100 NVLink4 450 GB/s per direction, 360-400 GB/s achieved |
| nvlink3       | 250            | 1.0  | 1        | A100 NVLink3 300 GB/s per direction (12 links x 25 GB/s); nvlink4's achieved share (380/450 = 0.84) gives 253, rounded down |
| dgx-h100      | 384 / node     | 1.0  | 2        | 8 GPUs per node on nvlink4 and NVSwitch gen3, which has NVLink SHARP (nvls = "hopper": NCCL's NVLS / NVLS Tree, lionsim.network.nccl); 8 ConnectX-7 NDR NICs per node: 8 x ib-ndr |
| dgx-a100      | 192 / node     | 1.0  | 2        | 8 GPUs per node on nvlink3; 8 HDR NICs per node (DGX A100): 8 x ib-hdr |
| a100x8-4hdr   | 96 / node      | 1.0  | 2        | 8 GPUs per node on nvlink3; 4 HDR NICs per node (one per two GPUs): 4 x ib-hdr |
| h100x8-10gbe  | 1.17 / node    | 1.0  | 25       | 8 GPUs per node on nvlink4, one 10gbe NIC per node (the slow-Ethernet regime of Lion Cub) |
| h100x8-100gbe | 11.7 / node    | 0.43 | 20       | 8 GPUs per node on nvlink4, one 100gbe NIC per node, NCCL over TCP sockets: the link as 100gbe; NCCL's default 2 channels move at most 1.96 GB/s a node (the sockets fabric's rule) |

Library: the GPU-cluster presets (dgx-h100, dgx-a100, a100x8-4hdr, h100x8-10gbe,
h100x8-100gbe) are run by NCCL's tuning model (traits "nccl", lionsim.network.nccl: a flat ring
or tree over every GPU, or NVLS Tree on dgx-h100's NVLink SHARP, as NCCL picks per call); the flat presets by the ideal library (the
alpha-beta formulas alone; estimate and comm price NCCL where --gpus-per-node gives them nodes of
several GPUs). `--traits NAME` runs any network by another library (`ideal`:
the cheapest plan, hierarchical on two levels; `gloo`: gloo's flat ring).

Device: the GPU-cluster presets state their GPUs (dgx-h100, h100x8-*: h100; dgx-a100, a100x8-4hdr:
a100-40gb, the part of the original DGX A100 and of Distributed Lion's timing table), which `lionsim
estimate` runs on where --device is not given; nvlink3 and nvlink4 are links (an intra link, or
all workers on one fabric), not clusters, and state none.

Fabric: the transport NCCL runs over across nodes, which prices its calls (fabrics.py, fitted
to published nccl-tests sweeps): sockets for the Ethernet presets (100mbe ... 100gbe,
h100x8-*gbe), ib for the InfiniBand ones (ib-*, dgx-*, a100x8-4hdr). Under `--traits nccl` a
flat preset's calls cross the network at every step, each worker its own node. A preset states no
NCCL socket settings, so it runs NCCL's default 2 channels a NIC (lionsim.network.sockets),
which move at most 1.96 GB/s a node: below the link from 25gbe up (10gbe and slower are
link-bound). A profile's [nccl] table states other settings.

Figures are per direction. The Ethernet alphas are one-way TCP message latencies; the
figure ranges are published rules of thumb lionsim has not measured: use a profile file (or
`lionsim comm --fit`, later) to match your own cluster.
"""

from __future__ import annotations

from lionsim.network.libraries import NCCL
from lionsim.network.link import Link, Network
from lionsim.registry import Registry

NETWORKS: Registry[Network] = Registry("network")

LOOPBACK = Link.from_units(alpha_us=10.0, bandwidth_GBps=10.0)
ETH_100M = Link.from_units(alpha_us=50.0, bandwidth_GBps=0.0117)
ETH_1G = Link.from_units(alpha_us=50.0, bandwidth_GBps=0.117)
ETH_10G = Link.from_units(alpha_us=25.0, bandwidth_GBps=1.17)
ETH_25G = Link.from_units(alpha_us=25.0, bandwidth_GBps=2.9)
ETH_100G = Link.from_units(alpha_us=20.0, bandwidth_GBps=11.7, efficiency=0.43)
IB_HDR = Link.from_units(alpha_us=2.0, bandwidth_GBps=24.0)
IB_NDR = Link.from_units(alpha_us=2.0, bandwidth_GBps=48.0)
NVLINK4 = Link.from_units(alpha_us=1.0, bandwidth_GBps=380.0)
NVLINK3 = Link.from_units(alpha_us=1.0, bandwidth_GBps=250.0)


def _add(network: Network) -> None:
    NETWORKS.add(network.name, network)


_add(Network(name="100mbe", fabric="sockets", inter=ETH_100M, description="100 Mbit Ethernet, TCP goodput"))
_add(Network(name="1gbe", fabric="sockets", inter=ETH_1G, description="1 GbE, TCP goodput"))
_add(Network(name="10gbe", fabric="sockets", inter=ETH_10G, description="10 GbE, TCP goodput"))
_add(Network(name="25gbe", fabric="sockets", inter=ETH_25G, description="25 GbE, TCP goodput"))
_add(Network(name="100gbe", fabric="sockets", inter=ETH_100G, description="100 GbE TCP at 5 GB/s, what NCCL reached tuned"))
_add(Network(name="ib-hdr", fabric="ib", inter=IB_HDR, description="InfiniBand HDR 200 Gb/s, RDMA"))
_add(Network(name="ib-ndr", fabric="ib", inter=IB_NDR, description="InfiniBand NDR 400 Gb/s, RDMA"))
_add(Network(name="nvlink4", inter=NVLINK4, description="H100 NVLink4, all workers on one fabric"))
_add(Network(name="nvlink3", inter=NVLINK3, description="A100 NVLink3, all workers on one fabric"))
_add(
    Network(
        name="dgx-h100",
        device="h100",
        traits=NCCL,
        fabric="ib",
        inter=Link.from_units(alpha_us=2.0, bandwidth_GBps=8 * 48.0),
        intra=NVLINK4,
        workers_per_node=8,
        nvls="hopper",
        description="DGX H100: 8 GPUs on NVLink4 and NVSwitch gen3 (NVLink SHARP), 8 NDR NICs per node",
    )
)
_add(
    Network(
        name="dgx-a100",
        device="a100-40gb",
        traits=NCCL,
        fabric="ib",
        inter=Link.from_units(alpha_us=2.0, bandwidth_GBps=8 * 24.0),
        intra=NVLINK3,
        workers_per_node=8,
        description="DGX A100: 8 GPUs on NVLink3, 8 HDR NICs per node",
    )
)
_add(
    Network(
        name="a100x8-4hdr",
        device="a100-40gb",
        traits=NCCL,
        fabric="ib",
        inter=Link.from_units(alpha_us=2.0, bandwidth_GBps=4 * 24.0),
        intra=NVLINK3,
        workers_per_node=8,
        description="8 A100 on NVLink3 per node, 4 HDR NICs per node, one per two GPUs",
    )
)
_add(
    Network(
        name="h100x8-10gbe",
        device="h100",
        traits=NCCL,
        fabric="sockets",
        inter=ETH_10G,
        intra=NVLINK4,
        workers_per_node=8,
        description="8 GPUs on NVLink4 per node, one 10 GbE NIC per node",
    )
)
_add(
    Network(
        name="h100x8-100gbe",
        device="h100",
        traits=NCCL,
        fabric="sockets",
        inter=ETH_100G,
        intra=NVLINK4,
        workers_per_node=8,
        description="8 GPUs on NVLink4 per node, one 100 GbE NIC per node",  # the listing adds NCCL sockets' cap
    )
)
_add(Network(name="loopback", inter=LOOPBACK, description="one host's loopback: ranks on one machine"))
