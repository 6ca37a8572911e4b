"""Joining a real process group, and checking that every rank runs the same thing.

Used by the bench's ranks (lionsim.launch.rank), the measured sweep's (lionsim.measure.rank)
and `bench --calibrate`: one rendezvous, one check, one line on failure; and leaving the group
(`leave`), which on gloo pauses before the teardown that otherwise races a peer.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import time

import torch
import torch.distributed as dist

from lionsim.errors import LionsimError
from lionsim.group.env import Rendezvous
from lionsim.group.hosts import IFACE_VARS, use_iface
from lionsim.group.quiet import native_stderr_held


def join(backend: str, rv: Rendezvous, timeout_s: float, iface: str | None = None) -> None:
    """init_process_group with a short timeout on `iface` (--iface: GLOO_SOCKET_IFNAME /
    NCCL_SOCKET_IFNAME); rendezvous problems become one LionsimError line naming the address
    tried and who chose it."""
    use_iface(iface)
    # NCCL is bound to the rank's GPU (its callers set it current): without device_id each barrier
    # warns that it guessed the device, six lines a default bench on one GPU
    bound = {"device_id": torch.device("cuda", torch.cuda.current_device())} if backend == "nccl" else {}
    try:
        with native_stderr_held():
            dist.init_process_group(backend, init_method=f"tcp://{rv.addr}:{rv.port}", rank=rv.rank,
                                    world_size=rv.world_size, timeout=datetime.timedelta(seconds=timeout_s), **bound)
    except (RuntimeError, ValueError, OSError) as e:  # DistNetworkError, DistStoreError are RuntimeErrors
        text = " ".join(str(e).encode("ascii", "ignore").decode().split())
        if "EADDRINUSE" in text or "address already in use" in text.lower():
            raise LionsimError(f"port {rv.port} on {rv.addr} is in use ({rv.source}): choose a free port") from None
        if "connectFullMesh" in text or "Connection refused" in text:  # the store met, the library's sockets did not
            raise LionsimError(
                f"rank {rv.rank} of {rv.world_size} met the rendezvous at {rv.addr}:{rv.port} ({rv.source}) but "
                f"{backend} could not connect its ranks: across hosts name the interface they share with --iface "
                f"NAME (or {IFACE_VARS.get(backend, 'GLOO_SOCKET_IFNAME')}); without it {backend} may resolve this "
                f"host's name to 127.0.0.1: {text[:160]}") from None
        if rv.rank == 0 and "clients joined" in text:  # rank 0 holds the rendezvous: its peers never came
            joined = text[:text.index("clients joined")].split()[-1]
            raise LionsimError(f"rank 0 held the rendezvous at {rv.addr}:{rv.port} ({rv.source}) for {timeout_s:g} s "
                               f"and {joined} clients joined: start the other ranks with this address and port "
                               f"(MASTER_ADDR, MASTER_PORT), world size {rv.world_size}") from None
        raise LionsimError(f"cannot reach the rendezvous at {rv.addr}:{rv.port} within {timeout_s:g} s "
                           f"({rv.source}; rank {rv.rank} of {rv.world_size}): {text[:200]}") from None


GLOO_SETTLE_S = 0.05
"""The pause before a gloo rank tears its group down. Measured on a 2-vCPU cloud VM, 2026-12-01,
docs/library.md's example on 2 ranks: 6 of 28 launches aborted after the script's last line
("terminate called without an active exception", SIGABRT in gloo's teardown) with barrier then
destroy_process_group, 0 of 16 with this pause between them (and 0 of 16 with it before the
barrier): a rank that leaves the last barrier first and closes its sockets races the peer still
finishing it."""


def leave() -> None:
    """destroy_process_group, after GLOO_SETTLE_S on gloo (module doc: the teardown race)."""
    if dist.is_initialized() and dist.get_backend() == "gloo":
        time.sleep(GLOO_SETTLE_S)
    dist.destroy_process_group()


def digest(payload: dict) -> int:
    """A 63-bit digest of a JSON-able dict (what every rank must agree on)."""
    text = json.dumps(payload, sort_keys=True, default=str)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little") >> 1


def check_same(payload: dict, device: torch.device, what: str = "configuration") -> None:
    """Every rank must run the same lionsim and torch and hold the same `payload` (a bench's
    configuration, a sweep's): all-gather the versions and a digest, name the ranks that differ."""
    import lionsim

    mine = {"lionsim": lionsim.__version__, "torch": torch.__version__, "digest": digest(payload)}
    every: list[dict | None] = [None] * dist.get_world_size()
    dist.all_gather_object(every, mine)
    root = every[0]
    for key, name in (("lionsim", "lionsim"), ("torch", "torch")):
        differ = [r for r, e in enumerate(every) if e[key] != root[key]]
        if differ:
            raise LionsimError(f"rank(s) {', '.join(map(str, differ))} run {name} {every[differ[0]][key]} but rank 0 "
                               f"runs {name} {root[key]}: install the same version on every node")
    differ = [r for r, e in enumerate(every) if e["digest"] != root["digest"]]
    if differ:
        raise LionsimError(f"rank(s) {', '.join(map(str, differ))} got a {what} different from rank 0's "
                           f"(hash {every[differ[0]]['digest']:x} vs {root['digest']:x}): every rank must get the "
                           "same options")


def default_ranks(backend: str) -> int:
    """--ranks when not given, for bench and comm alike: 2 on gloo, one per visible GPU on nccl."""
    if backend == "nccl" and torch.cuda.is_available():
        return max(1, torch.cuda.device_count())
    return 1 if backend == "nccl" else 2


def check_backend(backend: str, ranks: int) -> None:
    """Fail before starting anything if this machine cannot run `ranks` ranks of `backend`."""
    if backend == "gloo" and not dist.is_gloo_available():
        raise LionsimError("backend gloo is not available in this torch build; accepted here: sim")
    if backend == "nccl":
        if not (dist.is_nccl_available() and torch.cuda.is_available()):
            raise LionsimError("backend nccl needs CUDA GPUs and a torch build with NCCL; none here: use --backend gloo")
        if torch.cuda.device_count() < ranks:
            raise LionsimError(f"backend nccl runs one rank per GPU: --ranks {ranks} but "
                               f"{torch.cuda.device_count()} GPU(s) visible")
