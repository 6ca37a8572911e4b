"""Built-in traits of the collective libraries (`--traits NAME`; lionsim.network.traits).

| name  | what it is                                                                          |
|-------|-------------------------------------------------------------------------------------|
| ideal | the alpha-beta formulas alone: what every network preset assumes                    |
| nccl  | NCCL as the presets model it: full duplex, no floor beyond the link's alpha, no     |
|       | host cap, no slow mode. Not measured in this project (no GPU was lent to it):      |
|       | `lionsim comm --backend nccl --fit` on two GPUs measures the real ones              |
| gloo  | gloo, torch 2.13, measured on this project's machine (2 vCPUs): two emulated hosts  |
|       | over a shaped 1 Gbit link (tools/emulated-link.sh) and loopback; see GLOO below     |

A run on a real backend is priced with that backend's traits unless its profile carries
its own ([traits] in the file, which `lionsim comm --fit` writes).
"""

from __future__ import annotations

import math

from lionsim.network.traits import IDEAL, OpTraits, SlowMode, Traits
from lionsim.registry import Registry

TRAITS: Registry[Traits] = Registry("traits")

NCCL = Traits(name="nccl", backend="nccl",
              description="NCCL as the presets assume it (full duplex, no floor beyond alpha): not measured here")

MiB = 2**20

GLOO = Traits(
    name="gloo",
    backend="gloo",
    # floors: the fast mode of 1 B - 64 KiB calls at 2 ranks, less the 1gbe preset's 2 x 50 us
    # (ring all-reduce), 50 us (all-to-all, all-gather) and 50 us (broadcast, gather) alpha terms
    ops=(
        ("all_reduce", OpTraits(floor_s=150e-6, algorithm="ring")),
        ("all_gather", OpTraits(floor_s=180e-6, algorithm="ring", duplex=((2 * MiB, 1.0), (math.inf, 0.62)))),
        ("all_to_all", OpTraits(floor_s=110e-6, algorithm="pairwise", duplex=((2 * MiB, 1.0), (math.inf, 0.6)))),
        ("broadcast", OpTraits(floor_s=250e-6, algorithm="ring")),
        ("ps_push", OpTraits(floor_s=250e-6, algorithm="param_server")),
        ("ps_pull", OpTraits(floor_s=250e-6, algorithm="param_server")),
    ),
    host_GBps=1.0,
    slow=SlowMode(probability=0.2, extra_s=3.5e-3, max_bytes=64 * 1024),
    description="gloo (torch 2.13) measured on 2 ranks, 2 vCPUs: emulated 1 Gbit link and loopback",
)

TRAITS.add("ideal", IDEAL)
TRAITS.add("nccl", NCCL)
TRAITS.add("gloo", GLOO)


def backend_traits(backend: str) -> Traits:
    """What a run on `backend` is priced with when its profile has no traits: sim is ideal."""
    return TRAITS.get(backend) if backend in ("gloo", "nccl") else IDEAL
