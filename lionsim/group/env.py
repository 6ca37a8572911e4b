"""Who started this process: torchrun (its environment variables) or lionsim itself."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass

from lionsim.errors import LionsimError


@dataclass(frozen=True, slots=True)
class Rendezvous:
    """Where the ranks meet and who this process is among them."""

    rank: int
    world_size: int
    local_rank: int
    addr: str
    port: int
    source: str = "MASTER_ADDR/MASTER_PORT from the launcher"
    """Who chose addr and port, for a rendezvous error to name."""


def launcher_env() -> Rendezvous | None:
    """torchrun's (or any launcher's) RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT; None if absent."""
    names = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
    if not all(n in os.environ for n in names):
        return None
    try:
        rank, world, port = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ["MASTER_PORT"])
        local = int(os.environ.get("LOCAL_RANK", rank))
    except ValueError:
        raise LionsimError("bad launcher environment: RANK, WORLD_SIZE, LOCAL_RANK and MASTER_PORT must be "
                           f"integers (got RANK={os.environ['RANK']!r}, WORLD_SIZE={os.environ['WORLD_SIZE']!r}, "
                           f"MASTER_PORT={os.environ['MASTER_PORT']!r})") from None
    if not 0 <= rank < world:
        raise LionsimError(f"bad launcher environment: RANK={rank} with WORLD_SIZE={world}")
    return Rendezvous(rank=rank, world_size=world, local_rank=local, addr=os.environ["MASTER_ADDR"], port=port,
                      source=f"MASTER_ADDR={os.environ['MASTER_ADDR']}, MASTER_PORT={port} from the launcher")


def free_port(host: str = "127.0.0.1") -> int:
    """A port the OS has just found free on `host` (chosen in the parent, passed to every rank)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def check_iface(iface: str | None, launched: Rendezvous | None) -> None:
    """--iface picks the interface between hosts, which only a launcher's ranks cross: the ranks
    lionsim starts itself all live on this host (bench and comm refuse it alike)."""
    if iface is not None and launched is None:
        raise LionsimError(f"--iface {iface} picks the interface between hosts: run under a launcher (torchrun); "
                           "lionsim's own ranks talk over this host's loopback")
