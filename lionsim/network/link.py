"""Links and networks: the alpha-beta-gamma parameters a collective is priced with.

Hockney's model (Hockney, Parallel Computing 1994; Thakur, Rabenseifner & Gropp 2005
for the collectives): sending n bytes over a link costs
alpha + n * beta; combining n bytes costs n * gamma. Units are SI throughout: seconds,
bytes, bytes per second; GB means 1e9 bytes.

Topology (what `workers_per_node` means for the two links):

- `inter` is the link between nodes, counted per node: the bandwidth a node has into the
  network, all its NICs together. The node's workers share it, so when all of them talk
  across nodes at once (the inter-node phase of a hierarchical collective) each gets
  1/workers_per_node of it. With workers_per_node = 1 every worker is its own node and
  `inter` is simply the link each worker has.
- `intra` is the link inside a node, counted per worker (NVLink: each GPU's own links).
- `oversubscription` divides the inter-node bandwidth (a switch fabric with less
  bisection bandwidth than its ports); `efficiency` multiplies a link's bandwidth.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from lionsim.errors import LionsimError
from lionsim.network.checks import check_number
from lionsim.network.fabrics import FABRICS, Fabric, infer_fabric
from lionsim.network.sockets import GENERIC, SocketSettings, node_cap_GBps
from lionsim.network.traits import IDEAL, Traits
from lionsim.ranges import BANDWIDTH_GBPS, Range
from lionsim.whole import MAX_WORKERS
from lionsim.whole_nodes import check_workers, node_count

COUNT = Range(1, MAX_WORKERS, whole=True, why="the most workers lionsim takes")
"""A network's workers_per_node and ps_servers: a count, at most lionsim's workers."""

GB = 1e9
"""Bytes in a GB (SPEC: GB means 1e9 bytes everywhere)."""
US = 1e-6
"""Seconds in a microsecond."""
NVLINK_GBPS = 100.0
"""An intra link at least this fast (GB/s per GPU) is NVLink (NCCL's hop latencies, lionsim.network.nccl);
slower is PCIe, unless the link states its hardware (Link.hardware: a measured rate of older NVLink
nodes can fall below this, and no PCIe link reaches it)."""
HARDWARE = ("nvlink", "pcie")
"""What a profile's [intra] link may state it is (`hardware`)."""
NVLS_GENERATIONS = ("hopper", "blackwell")
"""GPU generations with NVLink SHARP (NVSwitch gen3 and later): tuning.cc's nvlsEfficiency is 0 before Hopper."""


def check_hardware(value: object) -> None:
    """A link's `hardware` is "" (inferred) or one of HARDWARE; else one LionsimError."""
    if value not in ("", *HARDWARE):
        raise LionsimError(f"hardware = {value!r} is not accepted; one of {', '.join(HARDWARE)} (what carries "
                           "the intra link), or leave it out to infer it from the rate")


@dataclass(frozen=True, kw_only=True, slots=True)
class Link:
    """One link of the alpha-beta-gamma model."""

    alpha_s: float
    """Per-message latency, seconds."""
    bandwidth_Bps: float
    """Achieved bandwidth per direction, bytes per second (before `efficiency`)."""
    efficiency: float = 1.0
    """Fraction of `bandwidth_Bps` that collectives achieve, in (0, 1]."""
    gamma_s_per_byte: float = 0.0
    """Cost of combining (e.g. summing) one byte in a reduction, seconds per byte."""
    hardware: str = ""
    """What carries an intra link, where its profile states it: "nvlink" or "pcie" (NCCL's hop
    latencies and NCCL 2.4's two-node rule differ: lionsim.network.nccl); "": inferred from the
    rate (NVLINK_GBPS)."""

    def __post_init__(self) -> None:
        check_hardware(self.hardware)
        check_number("alpha_s", self.alpha_s, low=0.0, low_open=False)
        check_number("bandwidth_Bps", self.bandwidth_Bps, low=0.0, low_open=True)
        check_number("efficiency", self.efficiency, low=0.0, low_open=True, high=1.0)
        check_number("gamma_s_per_byte", self.gamma_s_per_byte, low=0.0, low_open=False)

    @property
    def nvlink(self) -> bool:
        """Whether this (intra) link is NVLink: as stated, else at least NVLINK_GBPS."""
        if self.hardware:
            return self.hardware == "nvlink"
        return self.bandwidth_Bps * self.efficiency / GB >= NVLINK_GBPS

    @property
    def beta(self) -> float:
        """Seconds per byte: 1 / (bandwidth * efficiency)."""
        return 1.0 / (self.bandwidth_Bps * self.efficiency)

    @classmethod
    def from_units(
        cls,
        *,
        alpha_us: float,
        bandwidth_GBps: float,
        efficiency: float = 1.0,
        reduce_GBps: float | None = None,
        hardware: str = "",
    ) -> Link:
        """Build a link from the units of profile files (us, GB/s; reduce_GBps: bytes combined per s),
        each rate within ranges.BANDWIDTH_GBPS."""
        check_number("alpha_us", alpha_us, low=0.0, low_open=False)
        for name, rate in (("bandwidth_GBps", bandwidth_GBps), ("reduce_GBps", reduce_GBps)):
            if rate is not None and not BANDWIDTH_GBPS(rate):
                raise LionsimError(f"{name} = {rate!r} is out of range; accepted: {BANDWIDTH_GBPS.words}")
        gamma = 0.0 if reduce_GBps is None else 1.0 / (reduce_GBps * GB)
        return cls(
            alpha_s=alpha_us * US,
            bandwidth_Bps=bandwidth_GBps * GB,
            efficiency=efficiency,
            gamma_s_per_byte=gamma,
            hardware=hardware,
        )

    def scaled(self, bandwidth_divisor: float) -> Link:
        """The link as one of `bandwidth_divisor` equal sharers sees it."""
        return dataclasses.replace(self, bandwidth_Bps=self.bandwidth_Bps / bandwidth_divisor)

    def to_dict(self) -> dict[str, float]:
        """The profile-file form of this link (`reduce_GBps` only when gamma > 0)."""
        out = {
            "alpha_us": self.alpha_s / US,
            "bandwidth_GBps": self.bandwidth_Bps / GB,
            "efficiency": self.efficiency,
        }
        if self.gamma_s_per_byte > 0:
            out["reduce_GBps"] = 1.0 / (self.gamma_s_per_byte * GB)
        if self.hardware:
            out["hardware"] = self.hardware
        return out


@dataclass(frozen=True, kw_only=True, slots=True)
class Network:
    """Links plus topology: what a collective among N workers runs over."""

    name: str
    """Preset name or the profile file's name."""
    inter: Link
    """The link between nodes, per node (shared by the node's workers); see the module doc."""
    intra: Link | None = None
    """The link inside a node, per worker; required when workers_per_node > 1."""
    workers_per_node: int = 1
    """Workers in one node; 1 means a flat network where every worker is a node."""
    oversubscription: float = 1.0
    """Factor (>= 1) dividing the inter-node bandwidth, e.g. 2 for a 2:1 oversubscribed fabric."""
    ps_servers: int = 1
    """Parameter servers for ps_push / ps_pull (each with its own inter link)."""
    description: str = ""
    """Where the figures come from (one line)."""
    traits: Traits = IDEAL
    """The collective library's traits on top of the links (traits.py): NCCL's in the GPU-cluster
    presets, ideal in the others (presets.py)."""
    fabric: str = ""
    """The transport NCCL runs over across nodes (fabrics.py: ib, efa, sockets, tuning), which prices
    NCCL's choices; "": inferred from the inter link's alpha (`nccl_fabric`)."""
    sockets: SocketSettings = GENERIC
    """NCCL's socket-transport settings (sockets.py: the channels a NIC), which set the sockets
    fabric's per-node cap; GENERIC: NCCL's defaults (2 channels a NIC)."""
    nvls: str = ""
    """The GPUs' NVLink SHARP generation, "hopper" or "blackwell" (NVSwitch gen3 and later: DGX/HGX
    H100, H200, B200 nodes), on which NCCL runs NVLS in one node and NVLS Tree across nodes
    (lionsim.network.nccl); "": none (PCIe GPUs, NVLink without NVSwitch, A100 and older, or not stated)."""
    device: str = ""
    """The accelerator every worker is, a lionsim device name (lionsim.compute.DEVICES: "a100-40gb",
    "h100"): `lionsim estimate`'s --device where none is given; "": not stated (estimate's h100).
    bench's --compute does not follow it (docs/clusters.md says why)."""
    measured: dict[str, Any] = field(default_factory=dict, compare=False)
    """Where a fitted profile was measured (hosts, ranks per host, backend, interface,
    versions, date); empty for presets and hand-written profiles."""
    library_named: bool = field(default=False, compare=False)
    """Whether its profile file named the collective library (a `traits` key): the user's choice,
    which network_for keeps and estimate's hint leaves alone; False for a preset (its library is its
    own default) and a network built in code. Read from the one parse of the file (profile.py)."""

    def __post_init__(self) -> None:
        if not self.name:
            raise LionsimError("a network needs a non-empty name")
        for name in ("workers_per_node", "ps_servers"):  # a profile file's are checked with its name (keys.py)
            value = getattr(self, name)
            if not isinstance(value, int) or not COUNT(value):
                raise LionsimError(f"{name} = {value!r} is out of range; accepted: {COUNT.words}")
        check_number("oversubscription", self.oversubscription, low=1.0, low_open=False)
        if self.fabric:
            object.__setattr__(self, "fabric", FABRICS.canonical(self.fabric))  # unknown -> the list
        if self.workers_per_node > 1 and self.intra is None:
            raise LionsimError(
                f"network {self.name!r}: workers_per_node = {self.workers_per_node} needs an intra link"
            )
        if self.nvls:
            self._check_nvls()

    def _check_nvls(self) -> None:
        """NVLink SHARP is NVSwitch hardware inside a node: refuse it where it means nothing."""
        if self.nvls not in NVLS_GENERATIONS:
            raise LionsimError(f"nvls = {self.nvls!r} is not accepted; the GPUs' NVLink SHARP generation, one of "
                               f"{', '.join(NVLS_GENERATIONS)} (NVSwitch gen3 on: NCCL's nvlsEfficiency is 0 before "
                               "Hopper); leave it out for none")
        intra_GBps = 0.0 if self.intra is None else self.intra.bandwidth_Bps * self.intra.efficiency / 1e9
        if self.workers_per_node < 2 or self.intra is None or not self.intra.nvlink:
            stated = f", stated hardware = {self.intra.hardware!r}" if self.intra is not None and self.intra.hardware else ""
            raise LionsimError(f"network {self.name!r}: nvls = {self.nvls!r} needs NVSwitch nodes: workers_per_node "
                               f">= 2 and an NVLink intra link (stated, or at least {NVLINK_GBPS:g} GB/s); this one "
                               f"has workers_per_node = {self.workers_per_node} and intra {intra_GBps:g} GB/s{stated}")

    def nccl_fabric(self) -> Fabric:
        """The fabric NCCL's choices are priced on: the named one, else inferred (fabrics.py), its
        per-node cap set by this network's socket settings where it prices per channel."""
        return self.on_fabric(FABRICS.get(self.fabric or infer_fabric(self.inter.alpha_s)))

    def library_text(self) -> str:
        """The library pricing this network's collectives, as titles name it: "nccl over sockets"
        (NCCL with the fabric it runs over; estimate.csv's library and fabric), "ideal", "gloo"."""
        return f"{self.traits.name} over {self.nccl_fabric().name}" if self.traits.model == "nccl" else self.traits.name

    def on_fabric(self, fabric: Fabric) -> Fabric:
        """`fabric` as this network runs it: a per-channel fabric's cap for its socket settings, a
        host-bounce fabric's for its host's stated rate."""
        cap = node_cap_GBps(fabric.channel_GBps, fabric.cap_GBps, self.sockets, fabric.through_host)
        return fabric if cap == fabric.cap_GBps else dataclasses.replace(fabric, cap_GBps=cap)

    def with_traits(self, traits: Traits) -> Network:
        """The same links and topology run by a library with `traits`."""
        return dataclasses.replace(self, traits=traits)

    def nodes(self, workers: int, option: str = "--workers", value: object = None) -> int:
        """Nodes that `workers` workers occupy; fails unless they fill whole nodes (or one node:
        lionsim.whole_nodes), naming where the count came from: `option` (as typed, `value`), --workers
        unless the caller says otherwise."""
        check_workers(workers, self.workers_per_node, self.name, option, value)
        return node_count(workers, self.workers_per_node)

    def inter_link(self, sharers: int = 1) -> Link:
        """The inter-node link as one of `sharers` concurrent streams of a node sees it."""
        return self.inter.scaled(self.oversubscription * sharers)

    def to_dict(self) -> dict[str, Any]:
        """The profile-file form (SPEC "Network profile files"); `load_network` reads it back."""
        out: dict[str, Any] = {
            "name": self.name,
            "workers_per_node": self.workers_per_node,
            "oversubscription": self.oversubscription,
            "ps_servers": self.ps_servers,
            "inter": self.inter.to_dict(),
        }
        if self.intra is not None:
            out["intra"] = self.intra.to_dict()
        if self.description:
            out["description"] = self.description
        if self.fabric:
            out["fabric"] = self.fabric
        if self.nvls:
            out["nvls"] = self.nvls
        if self.device:
            out["device"] = self.device
        if not self.sockets.is_default:
            out["nccl"] = self.sockets.to_dict()
        if not self.traits.ideal or self.traits.backend != "any":  # a fit keeps its backend even if ideal
            out["traits"] = self.traits.to_dict()
        if self.measured:
            out["measured"] = dict(self.measured)
        return out
