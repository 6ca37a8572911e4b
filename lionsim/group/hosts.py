"""Where the ranks of a real group run: hosts, cores, the interface they talk over.

Every rank describes itself (hostname, the kernel's boot id, which tells two machines with
the same hostname apart and two network namespaces of one machine together, usable cores,
torch threads, the interface and its address) and the descriptions are all-gathered once,
untimed, at the start. run.json and fitted profiles record them; `shared_cores` says when
ranks of one host compete for its cores, which makes measured collectives slower than a
dedicated host would see them (a rank's gloo threads wait for a core while its peer works).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import torch
import torch.distributed as dist

from lionsim.errors import LionsimError

IFACE_VARS = {"gloo": "GLOO_SOCKET_IFNAME", "nccl": "NCCL_SOCKET_IFNAME"}
"""The variables each library reads for the interface to use (--iface sets both)."""


def interfaces() -> list[str]:
    """This host's network interfaces, by name."""
    return sorted(name for _, name in socket.if_nameindex())


def use_iface(iface: str | None) -> str | None:
    """--iface NAME: check that this host has it, then point gloo and NCCL at it (before the
    group forms). None leaves the environment alone and returns what it already names."""
    if iface is None:
        # gloo's variable is checked as --iface is (torch's own failure lists no interfaces); NCCL's
        # takes prefixes and exclusions (^docker), which NCCL reads
        var = IFACE_VARS["gloo"]
        unknown = [name for name in (os.environ.get(var) or "").split(",") if name and name not in interfaces()]
        if unknown:
            raise LionsimError(f"unknown {var} {unknown[0]!r} on {socket.gethostname()}; this host has: "
                               f"{', '.join(interfaces())} (or unset it)")
        return os.environ.get(IFACE_VARS["gloo"]) or os.environ.get(IFACE_VARS["nccl"]) or None
    have = interfaces()
    if iface not in have:
        raise LionsimError(f"unknown --iface {iface!r} on {socket.gethostname()}; this host has: {', '.join(have)}")
    for var in IFACE_VARS.values():
        os.environ[var] = iface
    return iface


def _address(iface: str | None) -> str | None:
    """The IPv4 address of `iface`, None if it has none (or no iface was named)."""
    if iface is None:
        return None
    import fcntl
    import struct

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:  # SIOCGIFADDR
            packed = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", iface[:15].encode()))
        except OSError:
            return None
    return socket.inet_ntoa(packed[20:24])


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return socket.gethostname()


def describe(iface: str | None, threads: int | None = None) -> dict:
    """This rank's own description (`threads`: the torch threads it will compute with)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return {"hostname": socket.gethostname(), "boot_id": _boot_id(), "cores": cores,
            "threads": threads or torch.get_num_threads(), "iface": iface, "address": _address(iface)}


def gather_hosts(device: torch.device, iface: str | None = None, threads: int | None = None) -> list[dict]:
    """Every rank's description, in rank order, on every rank (one untimed collective)."""
    mine = describe(iface or use_iface(None), threads)
    every: list[dict | None] = [None] * dist.get_world_size()
    dist.all_gather_object(every, mine)
    for rank, d in enumerate(every):
        d["rank"] = rank
    return every  # type: ignore[return-value]


def by_host(hosts: list[dict]) -> list[dict]:
    """One entry per machine (boot id): its hostname, ranks, cores, interfaces and addresses."""
    out: dict[str, dict] = {}
    for h in hosts:
        entry = out.setdefault(h["boot_id"], {"hostname": h["hostname"], "ranks": [], "cores": h["cores"],
                                              "threads": h["threads"], "ifaces": [], "addresses": []})
        entry["ranks"].append(h["rank"])
        for key, value in (("ifaces", h["iface"]), ("addresses", h["address"])):
            if value and value not in entry[key]:
                entry[key].append(value)
    return list(out.values())


def one_machine_link(hosts: list[dict]) -> str | None:
    """What ranks on one machine crossed where it was not its loopback: the interfaces they were
    bound to ("vA, vB on one machine": network namespaces joined by a veth pair, shaped as a link
    between hosts would be); None on loopback or across machines (link_name's words say those)."""
    machines = by_host(hosts)
    if len(machines) != 1:
        return None
    ifaces = [i for i in machines[0]["ifaces"] if i and i != "lo"]
    return f"{', '.join(ifaces)} on one machine" if ifaces else None


def shared_cores(hosts: list[dict]) -> str | None:
    """A warning when ranks of one machine need more cores than it has: each rank runs its
    torch threads plus the library's own I/O thread. None when every rank has its own."""
    lines = []
    for h in by_host(hosts):
        need = len(h["ranks"]) * (h["threads"] + 1)
        if need > h["cores"]:
            lines.append(f"{len(h['ranks'])} ranks share {h['cores']} cores on {h['hostname']} "
                         f"({len(h['ranks'])} x ({h['threads']} torch thread(s) + 1 I/O thread) = {need})")
    if not lines:
        return None
    return ("; ".join(lines) + ": measured collectives include waits for a core (a dedicated host per rank "
            "would see less)")
