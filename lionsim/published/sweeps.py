"""Published nccl-tests all-reduce sweeps across nodes, and lionsim's time for each row.

Each sweep is data: where it was published (the thread, who, when), the configuration as
published (GPUs per node and nodes, the NICs and their rate, NCCL's version and environment
where given), the fabric it ran on (lionsim.network.fabrics), and its rows as printed:
(bytes, out-of-place us, in-place us). A row's published time is the lower of its two columns:
both time the same call, and a stall (a warm-up, another job) only ever lengthens one.

A sweep is "fit" or "held-out". The fabrics' figures (hop latencies, bandwidth share or cap)
are fitted to every row of the fit sweeps (`python -m lionsim.published.sweeps --fit`,
lionsim.network.fabric_fit), never to a held-out sweep, so the held-out errors say how the model
does on sweeps it has not seen. The checked points are each sweep's rows at 8 B, 64 KiB, 1 MiB,
16 MiB, 256 MiB and 4 GiB where it has them (every row of a sweep with fewer), each priced by
one `lionsim comm ... --traits nccl` command per sweep on the sweep's network: a preset or a
profile under examples/clusters/ holding the published line rates and the fabric. The docs
table (docs/clusters.md) is `markdown_table()` of them, checked by a test.

    python -m lionsim.published.sweeps             # the points with lionsim's figures, run now
    python -m lionsim.published.sweeps --markdown  # the docs' Markdown tables (sources, configurations, commands)
    python -m lionsim.published.sweeps --case KEY  # one sweep's full record and its points
    python -m lionsim.published.sweeps --fit       # refit the fabrics on the fit sweeps
"""

from __future__ import annotations

import statistics
import sys
import textwrap
from dataclasses import dataclass

from lionsim.numbers import binary_bytes_text
from lionsim.published import terminal

KiB, MiB, GiB = 2**10, 2**20, 2**30

CHECKED_SIZES = (8, 64 * KiB, 1 * MiB, 16 * MiB, 256 * MiB, 4 * GiB)
"""The sizes checked in every sweep that has them."""
SMALL_MAX = 16 * MiB
"""Small and mid-size calls: up to this many bytes."""
GOAL_SMALL = 0.30
"""Every small or mid-size point within this |error|, unless its sweep says why not."""
GOAL_LARGE = 0.25
"""Every large point (above SMALL_MAX) within this |error|, unless its sweep says why not (the
published-results table's GOAL_WORST, lionsim.published.cases)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Sweep:
    """One published all_reduce_perf sweep across nodes."""

    key: str
    fabric: str
    """The transport it ran over (lionsim.network.fabrics)."""
    role: str
    """"fit": the fabric's figures are fitted to its rows; "held-out": only checked."""
    source: str
    """Who published it, where, when."""
    config: str
    """The configuration as published."""
    network: str
    """The lionsim network that models it: a preset, or a profile path from the repository root."""
    workers: int
    rows: tuple[tuple[int, float, float], ...]
    """(bytes, out-of-place us, in-place us) as printed."""
    checked: tuple[int, ...] = ()
    """Sizes checked; () : CHECKED_SIZES it has, else every row."""
    miss: str = ""
    """Why its points may miss the goals ("" for none): a gap stated, not fitted away."""

    def times_us(self) -> dict[int, float]:
        """Published time per size: the lower of the two columns (module doc)."""
        return {size: min(oop, ip) for size, oop, ip in self.rows}

    def sizes(self) -> tuple[int, ...]:
        if self.checked:
            return self.checked
        standard = tuple(s for s in CHECKED_SIZES if s in self.times_us())
        return standard if len(standard) >= 2 else tuple(sorted(self.times_us()))

    @property
    def command(self) -> tuple[str, ...]:
        return ("comm", "--network", self.network, "--traits", "nccl", "--workers", str(self.workers), "--collective",
                "all_reduce", "--sizes", ",".join(str(s) for s in self.sizes()), "--format", "csv")


def _busbw_row(size: int, busbw_GBps: float, ranks: int) -> tuple[int, float, float]:
    """A row from a published busbw: t = 2(N-1)/N n / busbw (nccl-tests' all-reduce factor)."""
    us = 2 * (ranks - 1) / ranks * size / (busbw_GBps * 1e3)
    return (size, us, us)


MID_H100 = ("between 1 and 16 MiB NCCL's model moves on these H100 nodes among tree LL128, ring LL128 and NVLS "
            "Tree; ib's fitted LL128 hop and share of NCCL's modelled bandwidth are one compromise over the three "
            "fit sweeps' mid sizes, which prices a tree LL128 on four nodes slow (this sweep's 16 MiB)")
IB_NDR_H100 = ("XE9680 (HGX) nodes of 8 H100 SXM and 8 ConnectX-7 NDR 400 Gb/s InfiniBand NICs; NCCL 2.26.2, "
               "CUDA 12.8; all_reduce_perf_mpi -b 8 -e 16g -f 2 -g 1, NCCL_NET_GDR_LEVEL=1, NCCL_P2P_LEVEL=NVL, "
               "the 8 NICs in NCCL_IB_HCA")
SWEEPS: tuple[Sweep, ...] = (
    Sweep(
        key="ib-ndr-h100-2x8", fabric="ib", role="fit",
        source="NVIDIA/nccl-tests issue 309, the description (qoofyk, May 2025)",
        config=f"2 nodes: {IB_NDR_H100}", network="dgx-h100", workers=16,
        rows=((8, 68.52, 24.70), (16, 24.96, 24.93), (32, 24.93, 25.02), (64, 25.29, 25.21), (128, 25.68, 25.62),
              (256, 94.40, 25.90), (512, 32.35, 26.31), (1024, 29.75, 26.65), (2048, 28.19, 28.22),
              (4096, 30.24, 29.72), (8192, 32.12, 31.67), (16384, 32.74, 32.24), (32768, 34.10, 33.47),
              (65536, 33.84, 33.08), (131072, 38.77, 38.12), (262144, 48.67, 46.79), (524288, 77.69, 70.33),
              (1048576, 71.93, 71.47), (2097152, 76.24, 76.62), (4194304, 94.38, 94.22), (8388608, 132.6, 131.4),
              (16777216, 185.4, 183.8), (33554432, 267.9, 267.7), (67108864, 466.1, 466.3),
              (134217728, 748.3, 749.2), (268435456, 1282.8, 1276.0), (536870912, 2357.6, 2355.1),
              (1073741824, 4484.9, 4470.2), (2147483648, 8729.8, 8717.2), (4294967296, 17262, 17284),
              (8589934592, 34381, 34365), (17179869184, 68652, 68668)),
    ),
    Sweep(
        key="ib-ndr-h100-4x8", fabric="ib", role="fit",
        source="NVIDIA/nccl-tests issue 309, comment of 2025-05-23 (qoofyk)",
        config=f"4 nodes (VMware VMs, NCCL_TOPO_FILE given): {IB_NDR_H100}", network="dgx-h100", workers=32,
        miss=MID_H100,
        rows=((8, 83.42, 34.75), (16, 34.82, 34.45), (32, 34.61, 35.55), (64, 34.77, 34.92), (128, 35.70, 35.04),
              (256, 107.5, 35.82), (512, 56.35, 36.72), (1024, 39.79, 37.10), (2048, 39.59, 40.03),
              (4096, 42.18, 41.42), (8192, 46.84, 45.55), (16384, 48.51, 46.39), (32768, 49.13, 46.79),
              (65536, 50.83, 47.60), (131072, 55.87, 55.06), (262144, 67.82, 66.86), (524288, 72.88, 72.78),
              (1048576, 82.17, 82.21), (2097152, 191.3, 132.2), (4194304, 151.1, 154.0), (8388608, 217.3, 202.4),
              (16777216, 259.6, 258.3), (33554432, 376.0, 370.3), (67108864, 579.1, 574.4),
              (134217728, 990.7, 1013.1), (268435456, 1768.0, 1772.4), (536870912, 3109.0, 3111.7),
              (1073741824, 5808.8, 5802.8), (2147483648, 11508, 11501), (4294967296, 22890, 22874),
              (8589934592, 45606, 45573), (17179869184, 90986, 91081)),
    ),
    Sweep(
        key="ib-ndr-h100-8x8", fabric="ib", role="fit",
        source="NVIDIA/nccl-tests issue 309, comment of 2025-06-18 (gj-aion), the 8-node run",
        config="8 nodes of 8 H100 and 8 NDR 400 Gb/s InfiniBand NICs; all_reduce_perf -b 1M -e 8G -f 2 -g 1, "
               "default environment", network="dgx-h100", workers=64, miss=MID_H100,
        rows=((1048576, 117.0, 115.7), (2097152, 143.4, 143.3), (4194304, 203.8, 203.8), (8388608, 1272.4, 321.4),
              (16777216, 378.1, 373.5), (33554432, 509.6, 508.2), (67108864, 718.1, 709.2),
              (134217728, 1159.1, 1149.5), (268435456, 1955.1, 2028.1), (536870912, 3517.3, 3509.4),
              (1073741824, 7370.5, 7414.5), (2147483648, 13252, 13300), (4294967296, 26438, 26340),
              (8589934592, 52733, 52754)),
    ),
    Sweep(
        key="ib-ndr-h100-2x8-b", fabric="ib", role="held-out",
        source="NVIDIA/nccl-tests issue 309, comment of 2025-06-18 (gj-aion), 2 of the 8 nodes",
        config="2 nodes of 8 H100 and 8 NDR 400 Gb/s InfiniBand NICs (another cluster than the description's); "
               "all_reduce_perf -b 1M -e 8G -f 2 -g 1", network="dgx-h100", workers=16,
        rows=((1048576, 93.25, 82.98), (2097152, 94.22, 93.52), (4194304, 110.9, 111.9), (8388608, 151.6, 150.5),
              (16777216, 201.6, 202.7), (33554432, 274.8, 269.7), (67108864, 477.2, 469.6),
              (134217728, 750.7, 751.2), (268435456, 1296.2, 1290.4), (536870912, 2376.5, 2371.3),
              (1073741824, 4497.4, 4503.5), (2147483648, 8766.9, 8777.6), (4294967296, 17290, 17341),
              (8589934592, 34508, 34514)),
    ),
    Sweep(
        key="ib-ndr-h100-4x8-b", fabric="ib", role="held-out",
        source="NVIDIA/nccl-tests issue 309, comment of 2025-06-18 (gj-aion), 4 of the 8 nodes",
        config="4 nodes of 8 H100 and 8 NDR 400 Gb/s InfiniBand NICs; all_reduce_perf -b 1M -e 8G -f 2 -g 1",
        network="dgx-h100", workers=32,
        rows=((1048576, 317.0, 93.26), (2097152, 226.8, 156.4), (4194304, 231.3, 174.2), (8388608, 239.0, 256.7),
              (16777216, 304.5, 286.3), (33554432, 413.7, 455.5), (67108864, 624.1, 615.5),
              (134217728, 1055.3, 1043.6), (268435456, 2219.3, 2204.7), (536870912, 3600.8, 3617.5),
              (1073741824, 6460.4, 6532.2), (2147483648, 12893, 12840), (4294967296, 25605, 25537),
              (8589934592, 51285, 51350)),
    ),
    Sweep(
        key="ib-hdr-a100-2x1", fabric="ib", role="held-out",
        source="NVIDIA/nccl-tests issue 150, the description (scvance, 2023-06-29)",
        config="2 nodes of 8 A100 80GB on HDR InfiniBand, one GPU per node used (2 ranks); all_reduce_perf "
               "-b 8 -e 128M -f 2 -g 1; the rows the thread shows, 8 to 64 B",
        network="ib-hdr", workers=2,
        rows=((8, 19.90, 18.96), (16, 20.67, 19.10), (32, 19.16, 18.98), (64, 19.36, 19.07)),
    ),
    Sweep(
        key="efa-g4dn-metal-2x1", fabric="efa-host", role="fit",
        source="aws-ia/terraform-aws-eks-blueprints, examples/eks-efa/README.md, the EFA NCCL test's output",
        config="2 g4dn.metal instances, one T4 each, 100 Gbps EFA (no GPUDirect RDMA on g4dn); NCCL 2.12.7, "
               "aws-ofi-nccl 1.5.0aws, which sets NCCL_PROTO=simple there; all_reduce_perf -b 1 -e 1G",
        network="examples/clusters/g4dn-metal-efa.toml", workers=2,
        rows=((8, 64.88, 64.18), (16, 64.33, 65.02), (32, 65.95, 64.78), (64, 65.19, 64.66), (128, 65.30, 64.76),
              (256, 65.30, 64.90), (512, 65.71, 64.75), (1024, 67.15, 66.82), (2048, 68.22, 67.55),
              (4096, 70.65, 71.20), (8192, 76.15, 75.36), (16384, 87.65, 87.87), (32768, 98.94, 98.14),
              (65536, 115.8, 115.7), (131072, 149.3, 148.7), (262144, 195.0, 194.0), (524288, 296.9, 291.1),
              (1048576, 583.4, 579.6), (2097152, 983.3, 973.9), (4194304, 1745.4, 1673.2),
              (8388608, 3116.1, 3092.6), (16777216, 5966.3, 6008.9), (33554432, 11390, 11419),
              (67108864, 21934, 21930), (134217728, 43014, 42619), (268435456, 85119, 85743),
              (536870912, 171351, 171823), (1073741824, 344981, 344454)),
    ),
    Sweep(
        key="efa-p6-b200-2x8", fabric="efa", role="fit",
        source="dstackai/dstack pull request 3961, the description (r4victor, 2026-06-12)",
        config="2 AWS p6-b200 instances: 8 B200 and 8 x 400 Gbps EFA each; all_reduce_perf; the rows the "
               "description shows, 8 to 256 B",
        network="examples/clusters/p6-b200.toml", workers=16,
        rows=((8, 50.58, 54.46), (16, 54.55, 54.52), (32, 54.59, 55.34), (64, 55.60, 55.51), (128, 56.27, 56.26),
              (256, 57.14, 56.54)),
    ),
    Sweep(
        key="efa-p4dn-2x8", fabric="efa", role="fit",
        source="NVIDIA/nccl issue 527, nccl-tests table for 1 to 4 p4dn.24xlarge (taruntandon88, 2022-07-25), row 2",
        config="2 p4dn.24xlarge: 8 A100 40GB and 4 x 100 Gbps EFA each; NCCL 2.9.9; 1 GiB",
        network="examples/clusters/p4dn.toml", workers=16, rows=((1073741824, 35215, 35198),),
    ),
    Sweep(
        key="efa-p4dn-3x8", fabric="efa", role="held-out",
        source="NVIDIA/nccl issue 527, the same table, row 3",
        config="3 p4dn.24xlarge: 8 A100 40GB and 4 x 100 Gbps EFA each; NCCL 2.9.9; 1 GiB",
        network="examples/clusters/p4dn.toml", workers=24, rows=((1073741824, 64782, 64827),),
    ),
    Sweep(
        key="efa-p4dn-4x8", fabric="efa", role="held-out",
        source="NVIDIA/nccl issue 527, the same table, row 4",
        config="4 p4dn.24xlarge: 8 A100 40GB and 4 x 100 Gbps EFA each; NCCL 2.9.9; 1 GiB",
        network="examples/clusters/p4dn.toml", workers=32, rows=((1073741824, 70253, 70207),),
    ),
    Sweep(
        key="efa-g4dn-8xl-2x1", fabric="efa-host", role="held-out",
        source="aws-samples/aws-do-eks, Container-Root/eks/deployment/karpenter/README.md, \"Execute test with EFA "
               "enabled\" sample output",
        config="2 g4dn.8xlarge (the example's provisioner-efa.yaml), one T4 each, 50 Gbps EFA (no GPUDirect RDMA); "
               "all_reduce_perf -b 1 -e 1G",
        network="examples/clusters/g4dn-8xl-efa.toml", workers=2,
        miss="between 256 KiB and 1 MiB this sweep runs at 0.72 GB/s, under half its own rate above and below "
             "(a step the EFA provider takes in that range that lionsim has no term for)",
        rows=((8, 70.54, 70.23), (16, 70.81, 70.82), (32, 69.52, 69.84), (64, 70.07, 70.48), (128, 70.93, 70.21),
              (256, 70.64, 71.08), (512, 70.94, 70.24), (1024, 72.98, 72.76), (2048, 73.31, 73.65),
              (4096, 75.97, 75.54), (8192, 84.36, 85.09), (16384, 91.27, 90.67), (32768, 103.2, 101.8),
              (65536, 127.9, 126.6), (131072, 185.4, 184.6), (262144, 363.2, 362.4), (524288, 719.2, 714.4),
              (1048576, 1433.8, 1421.9), (2097152, 1099.4, 1088.7), (4194304, 1933.6, 1897.6),
              (8388608, 3500.0, 3481.5), (16777216, 6632.0, 6800.9), (33554432, 12997, 12751),
              (67108864, 24521, 24332), (134217728, 48033, 47884), (268435456, 94498, 94708),
              (536870912, 189806, 189397), (1073741824, 378919, 381119)),
    ),
    *(Sweep(
        key=f"efa-p3dn-2019-{nodes}x8", fabric="efa-host", role="fit",
        source="NVIDIA/nccl issue 235, the description (yaroslavvb, 2019-06-21)",
        config=f"{nodes} p3dn.24xlarge: 8 V100 32GB and 100 Gbps EFA each; NCCL 2.4.7ms1, CUDA 10.0, aws-ofi-nccl "
               f"with its June 2019 patch; the 70 MB all-reduce the description times on {nodes * 8} GPUs ({us:,.0f} "
               "us), read as 70e6 bytes (70 MiB would be 5% more); its algorithm not given: lionsim prices today's "
               "choice (a tree on two nodes, a ring on four and eight)",
        network="examples/clusters/p3dn.toml", workers=nodes * 8, rows=((70_000_000, us, us),),
    ) for nodes, us in ((2, 11_000.0), (4, 16_000.0), (8, 18_000.0))),
    Sweep(
        key="efa-p3dn-2x8", fabric="efa-host", role="held-out",
        source="aws/aws-ofi-nccl issue 33, comment of 2020-05-12 (rashikakheria)",
        config="2 p3dn.24xlarge: 8 V100 32GB and 100 Gbps EFA each; EFA installer 1.7.0; the rows the comment "
               "shows, 1 to 4 MiB", network="examples/clusters/p3dn.toml", workers=16,
        miss="its two columns differ by 61% at 1 MiB (1,035 us out of place, 643 in place), and lionsim prices "
             "the bytes at p3dn's host rate fitted on 70 MB calls (nccl.bounce_GBps, examples/clusters/p3dn.toml) "
             "with two of efa-host's Simple hops: a cost per call through host memory that the large calls do not "
             "show, and that no published sweep of this host measures apart",
        rows=((1048576, 1035.3, 643.4), (2097152, 671.4, 671.8), (4194304, 1140.5, 1144.3)),
    ),
    Sweep(
        key="sockets-g4dn-8xl-2x1", fabric="sockets", role="fit",
        source="aws-samples/aws-do-eks, Container-Root/eks/deployment/karpenter/README.md, \"Execute test with EFA "
               "disabled\" sample output (\"Using network Socket\")",
        config="2 g4dn.8xlarge (the example's provisioner-efa.yaml), one T4 each, 50 Gbps Ethernet (ENA), NCCL over "
               "TCP with its defaults there (no NCCL_SOCKET_* set: 2 channels, 2 threads x 8 sockets a connection); "
               "all_reduce_perf -b 1 -e 1G", network="examples/clusters/g4dn-8xl-tcp.toml", workers=2,
        rows=((8, 101.4, 101.8), (16, 105.3, 103.9), (32, 106.3, 106.7), (64, 107.9, 108.8), (128, 109.5, 109.4),
              (256, 110.5, 109.1), (512, 112.9, 115.3), (1024, 109.0, 109.0), (2048, 109.5, 113.1),
              (4096, 106.5, 106.0), (8192, 111.6, 111.6), (16384, 155.8, 152.7), (32768, 194.3, 191.1),
              (65536, 262.7, 259.6), (131072, 290.4, 291.7), (262144, 383.0, 387.5), (524288, 542.4, 537.7),
              (1048576, 806.7, 804.9), (2097152, 1384.5, 1359.4), (4194304, 2440.7, 2400.4),
              (8388608, 4656.9, 4722.8), (16777216, 9082.5, 8985.6), (33554432, 17301, 17754),
              (67108864, 35629, 35327), (134217728, 67134, 70910), (268435456, 133878, 134353),
              (536870912, 263971, 267808), (1073741824, 536774, 541545)),
    ),
    Sweep(
        key="sockets-v100x8-100gbe-4x8", fabric="sockets", role="held-out",
        source="NVIDIA/nccl issue 450, comment of 2021-01-06 (shjwudp)",
        config="4 nodes of 8 V100 32GB on a 100 Gbps TCP network; NCCL_MIN_NCHANNELS=4 NCCL_SOCKET_NTHREADS=2; "
               "8 and 16 MiB (the thread's larger sizes collapse, the problem it reports)",
        network="examples/clusters/v100x8-100gbe.toml", workers=32,
        miss="the rule gives 4 channels x the g4dn-fitted rate a channel, and the ring's 6 inter-node Simple "
             "hops add their latency to every call; the thread's own busbw reached 4-6 GB/s",
        rows=((8388608, 3597.6, 3955.7), (16777216, 6236.9, 6386.4)),
    ),
    Sweep(
        key="sockets-gcp-v100x8-2x8", fabric="sockets", role="held-out",
        source="NVIDIA/nccl issue 209, comment of 2019-06-04 (cswinter), \"GCP Results\" table",
        config="2 Google Cloud VMs of 8 V100, 32 Gbps network each; NCCL 2.4.7; NCCL_NSOCKS_PERTHREAD=1 "
               "NCCL_SOCKET_NTHREADS=4; busbw 14.5-14.9 Gbit/s from 64 MiB up: the middle, 14.8 Gbit/s, at 64 MiB "
               "as a time", network="examples/clusters/gcp-v100x8-32gbe.toml", workers=16,
        miss="NCCL 2.4.7 ran a tree on two nodes of NVLink GPUs at every size (its init.cc doubled a tree's "
             "bandwidth there, and NCCL's maintainer says in the same thread that a tree's busbw on two nodes "
             "reaches twice the network's), as lionsim prices it: n through each NIC a direction, 2 channels a "
             "NIC at the g4dn-fitted rate a channel, after the tree's correction factor, more than the run "
             "moved: 0.99 GB/s (busbw 1.85 GB/s) with one socket a thread, where the 4-node run with 3 "
             "moved 2.8 GB/s a node",
        rows=(_busbw_row(64 * MiB, 14.8 / 8, 16),),
    ),
    Sweep(
        key="sockets-gcp-v100x8-4x8", fabric="sockets", role="held-out",
        source="NVIDIA/nccl issue 209, the same table",
        config="4 Google Cloud VMs of 8 V100, 32 Gbps network each; NCCL 2.4.7; NCCL_NSOCKS_PERTHREAD=3 "
               "NCCL_SOCKET_NTHREADS=4; busbw 22.2-22.9 Gbit/s from 128 MiB up: the middle, 22.4 Gbit/s, at "
               "128 MiB as a time", network="examples/clusters/gcp-v100x8-32gbe.toml", workers=32,
        miss="tuned threads and sockets (NCCL_NSOCKS_PERTHREAD=3, NCCL_SOCKET_NTHREADS=4) moved 2.8 GB/s a "
             "node where lionsim's rule prices 2 channels and no gain from threads (NVIDIA/nccl issue 450 saw "
             "none); NCCL 2.4.7 ran a ring here as today's does (its init.cc put a tree only up to 31 MB on "
             "four nodes), but built its rings by another rule than today's 2 channels a NIC",
        rows=(_busbw_row(128 * MiB, 22.4 / 8, 32),),
    ),
)


def lionsim_times_us(sweep: Sweep) -> dict[int, float]:
    """lionsim's time per checked size of `sweep`: what its command prints (`lionsim comm` on sim
    prices comm_rows on network_for(--network, --traits nccl)), computed in this process."""
    from lionsim.network import comm_rows, network_for
    from lionsim.published.cases import in_checkout

    (network,) = in_checkout((sweep.network,))
    rows = comm_rows(["all_reduce"], list(sweep.sizes()), [sweep.workers], network_for(network, traits="nccl"))
    return {int(r["bytes"]): float(r["time_s"]) * 1e6 for r in rows}


def results(sweeps: tuple[Sweep, ...] = SWEEPS):
    """One row per checked point: sweep, fabric, role, bytes, published, lionsim, error (lionsim / published - 1)."""
    import pandas as pd

    rows = []
    for sweep in sweeps:
        ours, published = lionsim_times_us(sweep), sweep.times_us()
        for size in sweep.sizes():
            rows.append({"sweep": sweep.key, "fabric": sweep.fabric, "role": sweep.role, "bytes": size,
                         "published": published[size], "lionsim": ours[size],
                         "error": ours[size] / published[size] - 1.0})
    return pd.DataFrame(rows)


def goal(nbytes: int) -> float:
    """The |error| a point of this size is held to."""
    return GOAL_SMALL if nbytes <= SMALL_MAX else GOAL_LARGE


def summary(frame, role: str) -> dict:
    """For one role: the small/mid and the large points' median and worst |error|, and the points
    beyond their goal."""
    part = frame[frame["role"] == role]
    out = {"points": len(part)}
    for name, rows in (("small", part[part["bytes"] <= SMALL_MAX]), ("large", part[part["bytes"] > SMALL_MAX])):
        errors = rows["error"].abs()
        out[f"{name}_median"] = statistics.median(errors) if len(rows) else float("nan")
        out[f"{name}_worst"] = float(errors.max()) if len(rows) else float("nan")
        out[f"{name}_beyond"] = [f"{s} {binary_bytes_text(b)}" for s, b, e in zip(rows["sweep"], rows["bytes"], errors)
                                 if e > goal(b)]
    return out


def _beyond(row) -> bool:
    """Whether a point is beyond its goal."""
    return abs(row.error) > goal(row.bytes)


def _error(row, misses: dict[str, str]) -> str:
    return f"{row.error:+.1%}" + (" (see below)" if misses[row.sweep] and _beyond(row) else "")


def _goal_lines(frame) -> list[str]:
    texts = []
    for role in ("fit", "held-out"):
        s = summary(frame, role)
        texts.append(f"{role.capitalize()} sweeps ({s['points']} points): small and mid-size (8 B to 16 MiB) median "
                     f"|error| {s['small_median']:.1%}, worst {s['small_worst']:.1%} (goal: each within "
                     f"{GOAL_SMALL:.0%}; beyond: {', '.join(s['small_beyond']) or 'none'}); large median "
                     f"{s['large_median']:.1%}, worst {s['large_worst']:.1%} (goal: each within {GOAL_LARGE:.0%}; "
                     f"beyond: {', '.join(s['large_beyond']) or 'none'}).")
    return texts


def explained(frame, sweeps: tuple[Sweep, ...] = SWEEPS) -> list[str]:
    """The "Why ... may miss" paragraphs: a sweep's only where one of its points is beyond its goal
    (the points marked "(see below)"), the sweeps sharing a text named in one paragraph."""
    flagged = {row.sweep for row in frame.itertuples(index=False) if _beyond(row)}
    keys: dict[str, list[str]] = {}
    for sweep in sweeps:
        if sweep.miss and sweep.key in flagged:
            keys.setdefault(sweep.miss, []).append(sweep.key)
    return [f"Why {', '.join(k)} may miss: {text}." for text, k in keys.items()]


def markdown_table(frame) -> str:
    """The docs tables: the sweeps (source, configuration, fabric, role, command), the points, the
    goal lines and the explanations (`explained`)."""
    lines = ["| sweep | fabric | role | source | configuration | command |", "|---|---|---|---|---|---|"]
    for sweep in SWEEPS:
        lines.append(f"| {sweep.key} | {sweep.fabric} | {sweep.role} | {sweep.source} | {sweep.config} | "
                     f"`lionsim {' '.join(sweep.command)}` |")
    lines += ["", "| sweep | size | published us | lionsim us | error |", "|---|---|---|---|---|"]
    misses = {s.key: s.miss for s in SWEEPS}
    for row in frame.itertuples(index=False):
        lines.append(f"| {row.sweep} | {binary_bytes_text(row.bytes)} | {row.published:,.1f} | {row.lionsim:,.1f} | "
                     f"{_error(row, misses)} |")
    for text in (*_goal_lines(frame), *explained(frame)):
        lines += ["", *textwrap.wrap(text, 100)]
    return "\n".join(lines)


def _points(frame, columns: int) -> list[str]:
    misses = {s.key: s.miss for s in SWEEPS}
    rows = [(row.sweep, row.role, binary_bytes_text(row.bytes), f"{row.published:,.1f}", f"{row.lionsim:,.1f}",
             _error(row, misses))
            for row in frame.itertuples(index=False)]
    return terminal.table(("sweep", "role", "size", "published us", "lionsim us", "error"), rows, columns,
                          right=(False, False, True, True, True, False))


def compact(frame, columns: int = 100) -> str:
    """The terminal's form: the points (sweep, role, size, published, lionsim, error), the goal lines
    and the explanations, within `columns` (lionsim.published.terminal)."""
    lines = _points(frame, columns)
    for text in (*_goal_lines(frame), *explained(frame),
                 "Each sweep's source, configuration and command: --case KEY, or --markdown for the docs' tables."):
        lines += ["", *terminal.prose(text, columns)]
    return "\n".join(lines)


def record(sweep: Sweep, columns: int = 100) -> str:
    """One sweep's full record and its points, lionsim's run now, within `columns` (the command on one
    line: terminal.field)."""
    frame = results((sweep,))
    lines = []
    for name, value in (("sweep", sweep.key), ("fabric", sweep.fabric), ("role", sweep.role), ("source", sweep.source),
                        ("configuration", sweep.config), ("command", "lionsim " + " ".join(sweep.command)),
                        ("why it may miss", sweep.miss)):
        if value:
            lines += terminal.field(name, value, columns)
    return "\n".join([*lines, "", *_points(frame, columns)])


def fitted_fabrics() -> dict:
    """The fabrics refitted on the fit sweeps (lionsim.network.fabric_fit), by name."""
    from dataclasses import replace

    from lionsim.network.fabric_fit import fit_all
    from lionsim.published.cases import in_checkout

    return fit_all(tuple(replace(s, network=in_checkout((s.network,))[0]) for s in SWEEPS))


def fitted_hosts(fabrics: dict | None = None) -> dict[str, float]:
    """Each network that states its own host rate (nccl.bounce_GBps), by its path as the sweeps give
    it: that rate refitted on its fit sweeps (lionsim.network.fabric_fit.fit_hosts), beside
    `fabrics` (default: refitted too)."""
    from dataclasses import replace

    from lionsim.network.fabric_fit import fit_hosts
    from lionsim.published.cases import in_checkout

    path = {in_checkout((s.network,))[0]: s.network for s in SWEEPS}
    fitted = fit_hosts(tuple(replace(s, network=in_checkout((s.network,))[0]) for s in SWEEPS),
                       fabrics or fitted_fabrics())
    return {path[network]: rate for network, rate in fitted.items()}


@terminal.entry
def main(argv: list[str]) -> int:
    given = terminal.parse(argv, __doc__, ("--fit", "--markdown"), ("--case KEY",),
                           exclusive=[("--fit", "--markdown", "--case")])
    if given.get("fit"):
        fabrics = fitted_fabrics()
        for name, fabric in fabrics.items():
            channel = "" if fabric.channel_GBps is None else f" channel_GBps={fabric.channel_GBps:g}"
            print(f"{name}: hop_us={fabric.hop_us} share={fabric.share:g} cap_GBps={fabric.cap_GBps:g}{channel} "
                  f"protocol_share={fabric.protocol_share} protocols={fabric.protocols} (fitted on {fabric.fitted_on})")
        for network, rate in fitted_hosts(fabrics).items():
            print(f"{network}: nccl.bounce_GBps={rate:g}")
    elif "case" in given:
        print(record(terminal.find(str(given["case"]), SWEEPS, "sweep"), terminal.width()))
    elif given.get("markdown"):
        print(markdown_table(results()))
    else:
        print(compact(results(), terminal.width()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
