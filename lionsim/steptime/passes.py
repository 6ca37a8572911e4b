"""Encode, decode and update as memory-bound passes: bytes each moves per parameter.

On an accelerator these elementwise kernels are limited by memory bandwidth, not FLOPs: a
pass that reads and writes B bytes per parameter over P parameters takes
`compute.memory_pass_time(B * P, device)`. lionsim counts every input read once and every
output written once (one ideal fused kernel per pass), and keeps the three passes apart as
the step template runs them (lionsim.engine):

    encode = the strategy's local rule (reads the gradient and its state, writes its state
             and the payload) + the transport's packing into the wire format
    decode = the transport's unpacking of what arrived into the aggregate the update reads
    update = the strategy's update (reads the replica and its state, writes them) + one read
             of the aggregate; a vote rule (sign, mean) is applied as the update reads it

What each strategy's own rule and update move is in strategy_bytes.py. Parameters, gradients
and optimizer state are float32 (4 bytes); votes, levels and signs are int8 (1 byte); sums of votes are the narrowest integer that holds them (int8 up to 127
workers). Terms below 1/n per parameter (per-tensor scales, chunk padding) are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from lionsim.errors import LionsimError
from lionsim.steptime.strategy_bytes import F32, I8, LOCAL_STEP_BYTES, STRATEGY_BYTES, StrategyBytes
from lionsim.transports import PayloadSpec, container_dtype
from lionsim.transports.int8_allreduce import Int8AllReduce
from lionsim.transports.pbit_allreduce import fields_per_word

__all__ = ["F32", "I8", "LOCAL_STEP_BYTES", "NO_SYNC", "STRATEGY_BYTES", "TRANSPORT_BYTES", "PassBytes", "StrategyBytes",
           "SyncCopy", "TransportBytes", "pass_bytes", "payload_bytes", "sync_copy"]


def payload_bytes(spec: PayloadSpec) -> float:
    """Bytes per parameter the local rule writes as the payload (a dense gradient is sent in place)."""
    if spec.kind == "dense":
        return 0.0
    if spec.kind == "sparse":
        return (8 + F32) * spec.k / spec.numel  # int64 index + float32 value per pair
    return I8  # votes, levels, scaled signs


@dataclass(frozen=True, slots=True)
class TransportBytes:
    """What a transport's own kernels move per parameter."""

    pack: float
    """Encode side: payload -> wire format (0 when the payload already is it)."""
    unpack: float
    """Decode side: what arrived -> the aggregate the update reads (0 when it already is it)."""
    aggregate: float
    """Bytes per parameter of that aggregate (the update reads it once)."""


def _sum_bytes(workers: int) -> float:
    """A sum of N votes: int8 up to 127 workers, then int32 (the transports' containers)."""
    return float(container_dtype(workers).itemsize)


def _fp32(spec: PayloadSpec, workers: int) -> TransportBytes:
    return TransportBytes(pack=0.0, unpack=0.0, aggregate=F32)  # the update divides the sum by N as it reads it


def _bf16(spec: PayloadSpec, workers: int) -> TransportBytes:
    return TransportBytes(pack=F32 + 2, unpack=0.0, aggregate=2.0)  # read fp32 g, write bf16; update reads the bf16 sum


def _int8(spec: PayloadSpec, workers: int) -> TransportBytes:
    c = float(Int8AllReduce.container(spec, workers).itemsize)
    pack = 0.0 if c == I8 else I8 + c  # int8 votes are already the container; wider ones are a cast
    return TransportBytes(pack=pack, unpack=0.0, aggregate=c)


def _pbit(spec: PayloadSpec, workers: int) -> TransportBytes:
    word = F32 / fields_per_word(workers)  # int32 word bytes per parameter
    s = _sum_bytes(workers)
    return TransportBytes(pack=I8 + word, unpack=word + s, aggregate=s)  # votes -> fields; words -> counts


def _a2a(spec: PayloadSpec, workers: int) -> TransportBytes:
    bits = spec.rule.bits_down(workers)
    s = _sum_bytes(workers)
    # phase 1 packs all votes (read 1, write 1/8); phase 2 packs my chunk's n/N sums into codes
    pack = I8 + 1 / 8 + (s + bits / 8) / workers
    # phase 1 reads N workers' bits of my chunk (n/8 in all) and writes its sums; phase 2 reads
    # every chunk's codes and writes the int8 results
    unpack = 1 / 8 + s / workers + bits / 8 + I8
    return TransportBytes(pack=pack, unpack=unpack, aggregate=I8)


def _allgather(spec: PayloadSpec, workers: int) -> TransportBytes:
    if spec.kind == "scaled-signs":  # sum of sign * scale in float32
        return TransportBytes(pack=I8 + 1 / 8, unpack=workers / 8 + F32, aggregate=F32)
    s = _sum_bytes(workers)
    return TransportBytes(pack=I8 + 1 / 8, unpack=workers / 8 + s, aggregate=s)  # read N workers' bits, write the sum


def _param_server(spec: PayloadSpec, workers: int) -> TransportBytes:
    code = spec.rule.bits_down(workers) / 8
    # the server reads N pushes and writes codes; then the worker reads codes, writes int8 results
    return TransportBytes(pack=I8 + 1 / 8, unpack=workers / 8 + code + code + I8, aggregate=I8)


def _sparse(spec: PayloadSpec, workers: int) -> TransportBytes:
    share = spec.k / spec.numel
    # pack: int64 indices -> int32; unpack: zero a dense float32 buffer, then for each of the
    # N*k gathered pairs read it (8) and read-modify-write its target (8)
    return TransportBytes(pack=12 * share, unpack=F32 + 16 * workers * share, aggregate=F32)


def _packed(spec: PayloadSpec, workers: int) -> TransportBytes:
    from lionsim.transports.packed_allreduce import field_bits

    word = F32 / (31 // field_bits(spec.max_level, workers))  # int32 word bytes per parameter
    s = float(container_dtype(workers * spec.max_level).itemsize)
    return TransportBytes(pack=I8 + word, unpack=word + s, aggregate=s)  # levels -> fields; words -> sums


def _allgather_levels(spec: PayloadSpec, workers: int) -> TransportBytes:
    from lionsim.transports.allgather_levels import level_bits

    code = level_bits(spec.max_level) / 8
    return TransportBytes(pack=I8 + code, unpack=workers * code + F32, aggregate=F32)  # N workers' codes -> mean


def _compressed(spec: PayloadSpec, workers: int) -> TransportBytes:
    if spec.kind == "dense":  # the warm-up steps
        return _fp32(spec, workers)
    # phase 1 packs all signs; the server packs its chunk's signs (reads y, writes n/8N)
    pack = I8 + 1 / 8 + (F32 + 1 / 8) / workers
    # the server reads N workers' bits of its chunk (n/8 in all), reads and writes y and its error;
    # phase 2 reads every chunk's bits and writes the float32 momentum
    unpack = 1 / 8 + 3 * F32 / workers + 1 / 8 + F32
    return TransportBytes(pack=pack, unpack=unpack, aggregate=F32)


def _lowrank(spec: PayloadSpec, workers: int) -> TransportBytes:
    if spec.kind == "dense":  # the warm-up steps
        return _fp32(spec, workers)
    # P = M Q reads M; Q = M^T P reads M again; P Q^T writes the average (the factors are r/n of it)
    return TransportBytes(pack=F32, unpack=2 * F32, aggregate=F32)


TRANSPORT_BYTES: dict[str, Callable[[PayloadSpec, int], TransportBytes]] = {
    "fp32-allreduce": _fp32,
    "bf16-allreduce": _bf16,
    "int8-allreduce": _int8,
    "pbit-allreduce": _pbit,
    "a2a-1bit": _a2a,
    "allgather-1bit": _allgather,
    "param-server": _param_server,
    "sparse-allgather": _sparse,
    "packed-allreduce": _packed,
    "allgather-levels": _allgather_levels,
    "compressed-allreduce": _compressed,
    "lowrank-allreduce": _lowrank,
}


@dataclass(frozen=True, slots=True)
class PassBytes:
    """Bytes per parameter of one step's three memory-bound passes."""

    encode: float
    decode: float
    update: float


@dataclass(frozen=True, slots=True)
class SyncCopy:
    """One worker's copy of a momentum sync (lionsim.strategies.base.MomentumSyncing): a pass of
    its own, since it runs after the sync's all-reduce and no other pass can fuse with it."""

    nbytes: float
    """Bytes read and written in all (not per parameter: only the synced tensors are copied)."""
    kernels: int


NO_SYNC = SyncCopy(0.0, 0)


def sync_copy(synced: int, params: int) -> SyncCopy:
    """The copy of a momentum sync of `synced` of a model's `params` parameters.

    Every tensor synced: the all-reduce runs in place on the flat momentum, then one kernel
    divides it by N (reads m, writes m). A selection is gathered into a flat send buffer (reads
    m, writes the buffer), then scattered back divided by N (reads the buffer, writes m).
    """
    if synced == 0:
        return NO_SYNC
    if synced == params:
        return SyncCopy(2 * F32 * synced, 1)
    return SyncCopy(4 * F32 * synced, 2)


def pass_bytes(strategy: str, transport: str, spec: PayloadSpec, workers: int, local: bool = False) -> PassBytes:
    """Bytes per parameter that `strategy` over `transport` moves in each pass (see the module doc).

    A lone worker sends nothing: its own payload is the aggregate, so no pack or unpack. A
    local step (`local`: local SGD or DiLoCo between syncs) runs the inner step alone.
    """
    if local:
        if strategy not in LOCAL_STEP_BYTES:
            raise LionsimError(f"no memory-pass accounting for local steps of {strategy!r}; known: {', '.join(LOCAL_STEP_BYTES)}")
        return PassBytes(encode=LOCAL_STEP_BYTES[strategy], decode=0.0, update=0.0)
    if strategy not in STRATEGY_BYTES:
        raise LionsimError(f"no memory-pass accounting for strategy {strategy!r}; known: {', '.join(STRATEGY_BYTES)}")
    if transport not in TRANSPORT_BYTES:
        raise LionsimError(f"no memory-pass accounting for transport {transport!r}; known: {', '.join(TRANSPORT_BYTES)}")
    own = STRATEGY_BYTES[strategy]
    if workers == 1:
        aggregate = F32 if spec.kind in ("dense", "sparse", "scaled-signs") else I8
        return PassBytes(encode=own.rule + payload_bytes(spec), decode=0.0, update=own.update + aggregate)
    t = TRANSPORT_BYTES[transport](spec, workers)
    return PassBytes(encode=own.rule + payload_bytes(spec) + t.pack, decode=t.unpack, update=own.update + t.aggregate)
