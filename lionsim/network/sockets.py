"""NCCL's socket-transport settings, and the per-node rate they give the sockets fabric.

A network states them in a profile's `[nccl]` table (profile.py); a network that states none runs
NCCL's generic defaults (a NIC that is neither AWS's nor Google's):

    [nccl]
    nic = "generic"          # "aws" (ENA, PCI vendor 0x1d0f), "gcp" (gVNIC, 0x1ae0), "generic"
    socket_nthreads = 2      # NCCL_SOCKET_NTHREADS: helper threads per connection, 1-16
    nsocks_perthread = 1     # NCCL_NSOCKS_PERTHREAD: sockets per helper thread, >= 1
    min_nchannels = 4        # NCCL_MIN_NCHANNELS: channels at least, 1-64

What NCCL does with them (NVIDIA/nccl src/transport/net_socket.cc, ncclNetSocketGetNsockNthread,
the same rule from NCCL 2.5.6 to 2.29):

- Unset, the thread and socket counts come from the NIC's PCI vendor: AWS 2 threads x 8
  sockets, GCP 4 x 1, any other NIC 0 threads x 1 (NCCL 2.4.8 took 1 x 1 there). At most 16
  threads (MAX_THREADS; NCCL lowers a larger value) and 64 sockets a connection (MAX_SOCKETS;
  NCCL lowers the sockets per thread): lionsim refuses what NCCL would silently change.
- Each connection (one per channel and direction) splits a message into tasks of at least
  64 KiB over its sockets; each helper thread moves its sockets' tasks one after another. With no
  helper thread (0 threads, NCCL's generic default) the proxy thread moves the message over the
  connection's one control socket itself.
- Channels (src/graph/connect.cc, ncclTopoPostset): twice the channels the topology search
  finds, one per NIC for a NIC slower than the GPUs' links (every Ethernet NIC here), so 2 a
  NIC; NCCL_MIN_NCHANNELS raises that by copying channels, never lowers it.

The rule lionsim prices: a node moves at most
    channels x threads per connection x thread_GBps
where a connection with no helper thread counts one (the proxy thread does a helper's work for
it), and the link bounds it as before (fabrics.py). The unit is the helper thread because the
threads are what copy bytes into the kernel (a thread's sockets take turns); the fit sweep ran one
setting (AWS's defaults on g4dn: 2 channels x 2 threads x 8 sockets), so it fixes the rate of
whichever unit is chosen and cannot tell threads from sockets or channels apart. docs/clusters.md
says what the held-out sweeps show against each.
"""

from __future__ import annotations

from dataclasses import dataclass

from lionsim.errors import LionsimError
from lionsim.network.keys import no_unknown

NIC_DEFAULTS: dict[str, tuple[int, int]] = {"generic": (0, 1), "aws": (2, 8), "gcp": (4, 1)}
"""NIC -> (NCCL_SOCKET_NTHREADS, NCCL_NSOCKS_PERTHREAD) NCCL takes when unset (module doc)."""
MAX_THREADS = 16
"""net_socket.cc MAX_THREADS: helper threads a connection may have."""
MAX_SOCKETS = 64
"""net_socket.cc MAX_SOCKETS: sockets a connection may have (threads x sockets per thread)."""
MAX_CHANNELS = 64
"""NCCL's MAXCHANNELS (src/include/device.h; 32 before NCCL 2.12)."""
CHANNELS_PER_NIC = 2
"""Channels NCCL runs per Ethernet NIC unless told otherwise (module doc)."""
KEYS = ("nic", "socket_nthreads", "nsocks_perthread", "min_nchannels")
"""Keys of a profile's [nccl] table."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SocketSettings:
    """NCCL's socket-transport settings on one network (module doc); None: NCCL's default."""

    nic: str = "generic"
    """The NIC's kind, which picks NCCL's defaults: aws, gcp or generic."""
    socket_nthreads: int | None = None
    """NCCL_SOCKET_NTHREADS: helper threads per connection."""
    nsocks_perthread: int | None = None
    """NCCL_NSOCKS_PERTHREAD: sockets per helper thread."""
    min_nchannels: int | None = None
    """NCCL_MIN_NCHANNELS: channels at least."""

    def __post_init__(self) -> None:
        if self.nic not in NIC_DEFAULTS:
            raise LionsimError(f"nccl.nic = {self.nic!r} is not a NIC lionsim knows; accepted: "
                               f"{', '.join(NIC_DEFAULTS)}")
        for key, high in (("socket_nthreads", MAX_THREADS), ("nsocks_perthread", MAX_SOCKETS),
                          ("min_nchannels", MAX_CHANNELS)):
            value = getattr(self, key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high):
                raise LionsimError(f"nccl.{key} = {value!r} is not accepted; an integer from 1 to {high} "
                                   f"(NCCL_{key.upper()}; leave it out for NCCL's default)")
        if self.sockets > MAX_SOCKETS:
            raise LionsimError(f"nccl: {self.threads} threads x {self.sockets // self.threads} sockets per thread "
                               f"= {self.sockets} sockets a connection, above NCCL's limit of {MAX_SOCKETS} "
                               f"(MAX_SOCKETS); accepted: socket_nthreads x nsocks_perthread <= {MAX_SOCKETS}")

    @property
    def is_default(self) -> bool:
        """True for NCCL's generic defaults (nothing stated)."""
        return self == SocketSettings()

    @property
    def threads(self) -> int:
        """Helper threads per connection, as NCCL resolves them."""
        return NIC_DEFAULTS[self.nic][0] if self.socket_nthreads is None else self.socket_nthreads

    @property
    def sockets(self) -> int:
        """Data sockets per connection (threads x sockets per thread; 0: the control socket alone)."""
        per_thread = NIC_DEFAULTS[self.nic][1] if self.nsocks_perthread is None else self.nsocks_perthread
        return self.threads * per_thread

    @property
    def channels(self) -> int:
        """Channels through the node's NIC (module doc)."""
        return max(CHANNELS_PER_NIC, self.min_nchannels or 0)

    @property
    def moving_threads(self) -> int:
        """Threads that move one connection's bytes: its helpers, or the proxy thread when it has none."""
        return self.threads if self.sockets > 0 else 1

    def node_GBps(self, thread_GBps: float) -> float:
        """The most one node moves through the socket transport: channels x threads x thread_GBps."""
        return self.channels * self.moving_threads * thread_GBps

    def to_dict(self) -> dict[str, object]:
        """The profile's [nccl] table: the stated keys only."""
        out: dict[str, object] = {} if self.nic == "generic" else {"nic": self.nic}
        for key in KEYS[1:]:
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out

    def describe(self) -> str:
        """One line: what NCCL runs with these settings."""
        return (f"{self.channels} channels x {self.moving_threads} thread(s) a connection"
                f"{'' if self.sockets else ' (the proxy thread, no helpers)'}, {self.sockets or 1} socket(s) each")


GENERIC = SocketSettings()
"""NCCL's generic defaults: what a network that states no [nccl] table runs."""


def settings_from_table(table: object, source: str) -> SocketSettings:
    """A profile's [nccl] table as SocketSettings; every problem one LionsimError naming the file."""
    if not isinstance(table, dict):
        raise LionsimError(f"{source}: 'nccl' must be a table of {', '.join(KEYS)}")
    no_unknown(table, KEYS, "nccl.", source)
    try:
        return SocketSettings(**table)
    except LionsimError as e:
        raise LionsimError(f"{source}: {e}") from None


def node_cap_GBps(thread_GBps: float | None, cap_GBps: float, settings: SocketSettings) -> float:
    """A fabric's per-node cap on a network with `settings`: its fixed cap, or the rule's when the
    fabric prices per thread (thread_GBps not None)."""
    return cap_GBps if thread_GBps is None else min(cap_GBps, settings.node_GBps(thread_GBps))

