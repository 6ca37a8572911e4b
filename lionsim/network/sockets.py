"""NCCL's settings on one network: its socket transport, with the per-node rate it gives the
sockets fabric, and its version.

A network states them in a profile's `[nccl]` table (profile.py); a network that states none runs
today's NCCL with its defaults:

    [nccl]
    min_nchannels = 4        # NCCL_MIN_NCHANNELS: channels at least, 1-64
    version = "2.4.7"        # the NCCL it runs, 2.4.0 on (lionsim.network.ncclversion)
    bounce_GBps = 8.6        # what one node moves through host memory, on a fabric that copies
                             # every byte there (efa-host); absent: the fabric's fitted cap

`min_nchannels` acts only on the sockets fabric (the one priced per channel), `bounce_GBps` only on
a fabric that bounces through host memory (Fabric.through_host: efa-host): a profile whose fabric,
stated or inferred, is another is refused (profile.py); `version` acts on every fabric. The table
acts only where NCCL prices the network (traits nccl, or --traits nccl).

Why a host's own rate: without GPUDirect RDMA each byte crosses the host's memory and PCIe, so
what a node moves is its host's, not the NIC's. efa-host's cap is fitted on one GPU of a g4dn
(2.9 GB/s); a p3dn's eight V100s moved 70 MB all-reduces about three times as fast as that cap
allows (NVIDIA/nccl issue 235), so examples/clusters/p3dn.toml states its own, fitted on those
(lionsim.network.fabric_fit). It is a node's, through NCCL's transport: not a [traits] table's
host_GBps, which caps one rank of a library measured by `comm --fit` (lionsim.network.traits).

The version matters for two rules of NCCL's choice, the two-node tree rule and which NVLink SHARP
algorithms exist (ncclversion.py); the rest of this doc is the socket transport.

What NCCL does (NVIDIA/nccl src/graph/connect.cc, ncclTopoPostset; src/transport/net_socket.cc):
each channel is one connection per direction through the node's NIC; NCCL runs twice the channels
its topology search finds, one per NIC for a NIC slower than the GPUs' links (every Ethernet NIC
here), so 2 a NIC, and NCCL_MIN_NCHANNELS raises that by copying channels, never lowers it. Each
connection splits a message into tasks of at least 64 KiB over its sockets, moved by helper
threads (NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD: AWS's ENA 2 x 8, GCP's gVNIC 4 x 1, any
other NIC none, the proxy thread on the control socket).

The rule lionsim prices: a node moves at most

    channels x channel_GBps

and the link bounds it as before (fabrics.py). The unit is the channel, because the one published
account of tuning the threads and the channels apart says so: on 4 nodes of 8 V100 over 100 Gbps
TCP (NVIDIA/nccl issue 450) NCCL_MIN_NCHANNELS=4 reached 4-6 GB/s busbw with one thread and one
socket, and more threads or sockets per thread did not raise it. The fit sweep (AWS's defaults on
g4dn: 2 channels x 2 threads x 8 sockets) fixes channel_GBps. Thread and socket counts are
therefore not priced, and a profile that states them is refused (one line saying why) rather
than silently ignored. NVIDIA/nccl issue 209's GCP runs (NCCL 2.4.7, 4 threads x 3 sockets)
moved 2.8 GB/s a node, more than 2 channels give: that held-out sweep misses, and docs/clusters.md
says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from lionsim.errors import LionsimError
from lionsim.network.keys import integer, no_unknown, ranged
from lionsim.network.ncclversion import Release, parse
from lionsim.ranges import BANDWIDTH_GBPS, Range

MAX_CHANNELS = 64
"""NCCL's MAXCHANNELS (src/include/device.h; 32 before NCCL 2.12)."""
CHANNELS = Range(1, MAX_CHANNELS, whole=True, why="NCCL_MIN_NCHANNELS up to NCCL's MAXCHANNELS; leave it out for "
                 "NCCL's default")
"""What nccl.min_nchannels accepts."""
CHANNELS_PER_NIC = 2
"""Channels NCCL runs per Ethernet NIC unless told otherwise (module doc)."""
KEYS = ("min_nchannels", "version", "bounce_GBps")
"""Keys of a profile's [nccl] table."""
UNPRICED = ("socket_nthreads", "nsocks_perthread", "nic")
"""NCCL settings lionsim does not price (module doc): refused with the reason, not ignored."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SocketSettings:
    """NCCL's settings on one network (module doc); None: NCCL's default."""

    min_nchannels: int | None = None
    """NCCL_MIN_NCHANNELS: channels at least."""
    version: str | None = None
    """The NCCL version it runs, "MAJOR.MINOR.PATCH" (ncclversion.py); None: today's."""
    bounce_GBps: float | None = None
    """Bytes a second (1e9) one node moves through host memory on a fabric that bounces there
    (module doc); None: the fabric's cap."""

    def __post_init__(self) -> None:
        value = self.min_nchannels
        if value is not None and (not isinstance(value, int) or not CHANNELS(value)):  # a file's: keys.integer
            raise LionsimError(f"'nccl.min_nchannels' = {value!r} is out of range; accepted: {CHANNELS.words}")
        if self.version is not None:
            parse(self.version)
        host = self.bounce_GBps
        if host is not None and not (isinstance(host, (int, float)) and BANDWIDTH_GBPS(host)):  # a file's: keys.ranged
            raise LionsimError(f"'nccl.bounce_GBps' = {host!r} is out of range; accepted: {BANDWIDTH_GBPS.words}")

    @property
    def is_default(self) -> bool:
        """True for NCCL's defaults (nothing stated)."""
        return self == SocketSettings()

    @property
    def release(self) -> Release | None:
        """The stated version as (major, minor, patch); None: today's NCCL."""
        return None if self.version is None else parse(self.version)

    @property
    def channels(self) -> int:
        """Channels through the node's NIC (module doc)."""
        return max(CHANNELS_PER_NIC, self.min_nchannels or 0)

    def node_GBps(self, channel_GBps: float) -> float:
        """The most one node moves through the socket transport: channels x channel_GBps."""
        return self.channels * channel_GBps

    def to_dict(self) -> dict[str, object]:
        """The profile's [nccl] table: the stated keys only."""
        return {key: getattr(self, key) for key in KEYS if getattr(self, key) is not None}

    def describe(self) -> str:
        """One line: what NCCL runs with these settings."""
        return (f"{self.channels} channels a NIC" + ("" if self.version is None else f", NCCL {self.version}")
                + ("" if self.bounce_GBps is None else f", {self.bounce_GBps:g} GB/s through the host"))


GENERIC = SocketSettings()
"""Today's NCCL with its defaults: what a network that states no [nccl] table runs."""


def settings_from_table(table: object, source: str) -> SocketSettings:
    """A profile's [nccl] table as SocketSettings; every problem one LionsimError naming the file."""
    if not isinstance(table, dict):
        raise LionsimError(f"{source}: 'nccl' must be a table of {', '.join(KEYS)}")
    for key in UNPRICED:
        if key in table:
            raise LionsimError(f"{source}: nccl.{key} is not priced: lionsim prices NCCL's socket transport per "
                               f"channel (NVIDIA/nccl issue 450: threads and sockets did not raise the rate; "
                               f"docs/clusters.md); accepted: {', '.join('nccl.' + k for k in KEYS)}")
    no_unknown(table, KEYS, "nccl.", source)
    if "min_nchannels" in table:  # the range in every command's words, the file and key named
        table = {**table, "min_nchannels": integer(table, "min_nchannels", source, CHANNELS, default=0, prefix="nccl")}
    if "bounce_GBps" in table:
        table = {**table, "bounce_GBps": ranged(table, "bounce_GBps", source, BANDWIDTH_GBPS, prefix="nccl")}
    try:
        return SocketSettings(**table)
    except LionsimError as e:
        raise LionsimError(f"{source}: {e}") from None


def node_cap_GBps(channel_GBps: float | None, cap_GBps: float, settings: SocketSettings,
                  through_host: bool = False) -> float:
    """A fabric's per-node cap on a network with `settings`: its fixed cap, the rule's when the
    fabric prices per channel (channel_GBps not None), or the host's stated rate when the fabric
    bounces through host memory (`through_host`) and the network states one."""
    if through_host and settings.bounce_GBps is not None:
        return settings.bounce_GBps
    return cap_GBps if channel_GBps is None else min(cap_GBps, settings.node_GBps(channel_GBps))
