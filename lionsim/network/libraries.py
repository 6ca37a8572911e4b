"""Built-in traits of the collective libraries (`--traits NAME`; lionsim.network.traits).

| name  | what it is                                                                          |
|-------|-------------------------------------------------------------------------------------|
| ideal | the alpha-beta formulas alone, the cheapest plan for each call (a hierarchical one  |
|       | on a two-level network): what the flat presets (1gbe ... ib-ndr, nvlink*) assume    |
| nccl  | NCCL's own tuning model (lionsim.network.nccl): the algorithm and protocol NCCL     |
|       | picks for each call, a ring, tree or NVLS Tree, priced on the network's fabric      |
|       | (lionsim.network.fabrics: sockets, ib, efa, fitted to published sweeps); what the   |
|       | GPU-cluster presets (dgx-*, a100x8-4hdr, h100x8-*) and, in estimate, profiles       |
|       | without traits assume. No host cap, no slow mode; `lionsim comm --backend nccl      |
|       | --fit` on two GPUs measures a cluster's own                                         |
| gloo  | gloo, torch 2.13, measured on this project's machine (2 vCPUs): two emulated hosts  |
|       | over a shaped 1 Gbit link (tools/emulated-link.sh) and loopback; see GLOO below     |
| mpi   | MPI on host memory over the network's links: the cheapest plan for each call (Open  |
|       | MPI's tuned module picks among the same algorithm families by size; on nodes of     |
|       | several GPUs the cheapest may be a two-level plan Open MPI's default does not run,  |
|       | a lower bound there), at most one core's rate a rank, every call's                  |
|       | GPU buffers staged through the host (Horovod built without GPU operations, so       |
|       | TensorFlow copies each tensor to a CPU op and back; DeepSpeed's first 1-bit Adam    |
|       | with cuda_aware off, cupy.asnumpy before and cupy.asarray after each MPI call)      |

A run on a real backend is priced with that backend's traits unless its profile carries
its own ([traits] in the file, which `lionsim comm --fit` writes); a preset's built-in
library gives way to the backend's (a gloo run on dgx-h100 is priced as gloo).
gloo runs every op it has over all ranks at once (its ring all-reduce is flat over every
rank, several ranks per host included): the pinned "ring" below prices a flat ring on a
two-level network, never the hierarchical plan.
"""

from __future__ import annotations

import math

from lionsim.network.nccl import RUNS
from lionsim.network.traits import IDEAL, OpTraits, SlowMode, Staging, Traits
from lionsim.registry import Registry

TRAITS: Registry[Traits] = Registry("traits")

NCCL = Traits(name="nccl", backend="nccl", model="nccl", runs=RUNS,
              description="NCCL's tuning model (src/graph/tuning.cc): its algorithm and protocol for each call")

MiB = 2**20

KiB = 2**10

GLOO = Traits(
    name="gloo",
    backend="gloo",
    # From `lionsim comm --backend gloo --fit` across two emulated hosts (tools/emulated-link.sh)
    # over a shaped 1 Gbit link, 2 ranks on 2 vCPUs, normal priority, torch 2.13, 2026-11-25
    # (python -m lionsim.perf fidelity, run A; the 100 Mbit fit agrees on floors and the slow
    # mode). Rounded; shares capped at 1 where tbf's 64 KB burst let small calls beat the rate.
    # floors: beyond the 1gbe preset's alpha terms, per size regime where the fit cut one
    ops=(
        ("all_reduce", OpTraits(floor_s=580e-6, algorithm="ring",
                                duplex=((23 * KiB, 1.0), (181 * KiB, 1.0, 880e-6), (math.inf, 0.76, 0.0)))),
        ("all_gather", OpTraits(floor_s=720e-6, algorithm="ring",
                                duplex=((181 * KiB, 1.0), (724 * KiB, 1.0, 3.7e-3), (math.inf, 0.6, 620e-6)))),
        ("all_to_all", OpTraits(floor_s=600e-6, algorithm="pairwise",
                                duplex=((45 * KiB, 1.0), (math.inf, 0.58, 210e-6)))),
        ("broadcast", OpTraits(floor_s=330e-6, algorithm="ring", duplex=((45 * KiB, 1.0), (math.inf, 1.0, 60e-6)))),
        ("ps_push", OpTraits(floor_s=330e-6, algorithm="param_server")),
        ("ps_pull", OpTraits(floor_s=330e-6, algorithm="param_server")),
    ),
    host_GBps=1.0,
    # jitter: the median of six fits of the same link, 2026-11-26, under other jobs' load (0.19-0.27)
    slow=SlowMode(probability=0.23, extra_s=3.2e-3, max_bytes=256 * KiB, jitter=0.24),
    description="gloo (torch 2.13) fitted on 2 ranks, 2 vCPUs, across an emulated 1 Gbit link",
)

PCIE3_X16_GBPS = 15.75
"""PCIe 3.0 x16, one direction: 8 GT/s x 16 lanes x 128/130 encoding / 8 bits (the PCI-SIG
figure; the V100-era hosts that ran host-staged MPI: Horovod 0.21, DeepSpeed 2020)."""
STAGING_SHARE = 0.8
"""Share of the line rate a copy reaches: the memory_efficiency lionsim takes for every
streamed pass (lionsim.compute.devices); assumed, not measured: no such host was lent."""
STAGING_COPY_S = 10e-6
"""Seconds one staged copy costs beyond its bytes: an enqueued copy and the wait for it, taken
as the per-kernel floor of eager PyTorch (lionsim.compute.devices.KERNEL_S)."""

HOST_CORE_GBPS = 1.07
"""Bytes a second (1e9) a collective library on host memory moves per rank when one core drives
it (its TCP sockets and, in a reduction, the sums): gloo reached 1.07 GB/s on 40 GbE with one
core (a published figure lionsim has not traced to its primary source). Open MPI's TCP transport progresses in the calling thread, so
lionsim takes the same cap for it; assumed, not measured here."""

MPI = Traits(
    name="mpi",
    backend="any",
    host_GBps=HOST_CORE_GBPS,
    staging=Staging(GBps=PCIE3_X16_GBPS * STAGING_SHARE, copy_s=STAGING_COPY_S),
    description="MPI on host memory (Open MPI's TCP transport): the cheapest plan per call, one core's 1.07 GB/s "
                "a rank, every GPU buffer copied to the host and back over PCIe 3.0 x16",
)

TRAITS.add("ideal", IDEAL)
TRAITS.add("nccl", NCCL)
TRAITS.add("gloo", GLOO)
TRAITS.add("mpi", MPI)


def backend_traits(backend: str) -> Traits:
    """What a run on `backend` is priced with when its profile has no traits: sim is ideal."""
    return TRAITS.get(backend) if backend in ("gloo", "nccl") else IDEAL
