"""The transports' own memory passes: bytes per parameter each one's packing and unpacking
moves (the accounting of lionsim.steptime.passes, whose module doc gives the conventions)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from lionsim.transports import PayloadSpec, container_dtype
from lionsim.transports.int8_allreduce import Int8AllReduce
from lionsim.transports.pbit_allreduce import fields_per_word

F32 = 4.0
"""Bytes of a float32 parameter, gradient or state element."""
I8 = 1.0
"""Bytes of an int8 vote, level or sign."""


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


def _hier(spec: PayloadSpec, workers: int, g: int = 1) -> TransportBytes:
    """hier-exact, hier-1bit (lionsim.transports.hier), g workers per node: a worker packs all
    its votes, counts its node chunk (n/g) and packs its summaries, combines its block (n/N)."""
    bits = spec.rule.bits_down(workers)
    s = _sum_bytes(workers)
    # votes -> bits (read 1, write 1/8); the chunk's sums -> summaries (at most a byte each);
    # the block's combined codes (read sums, write codes)
    pack = I8 + 1 / 8 + (s + I8) / g + (s + bits / 8) / workers
    # the node's bits of my chunk (n/8 in all) -> sums; M summaries of my block -> its sum;
    # every block's codes -> the int8 results
    unpack = 1 / 8 + s / g + (I8 + s) / workers + bits / 8 + I8
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


def _packed_sparse(spec: PayloadSpec, workers: int) -> TransportBytes:
    share = spec.k / spec.numel
    bits = (spec.index_bits + spec.value_bits) / 8
    # pack: read int64 offsets and codes, write their bits; unpack: zero a dense float32 buffer and its
    # sender counts, then for each of the N*k gathered pairs read its bits, its table row, and
    # read-modify-write its target and its count (16)
    return TransportBytes(pack=(16 + bits) * share, unpack=2 * F32 + (bits + 8 + 16) * workers * share, aggregate=F32)


def _minifloat(spec: PayloadSpec, workers: int, bits: int) -> TransportBytes:
    code = bits / 8
    # pack: read x for the block maxima, read it again and write codes; the owner reads N slices of
    # codes (n/N each) and writes its float32 sum, reads it twice for the re-rounding and writes
    # codes; unpack reads every slice's codes and writes the float32 mean
    return TransportBytes(pack=2 * F32 + code + (code * workers + 3 * F32 + code) / workers, unpack=code + F32,
                          aggregate=F32)


def _lowrank(spec: PayloadSpec, workers: int) -> TransportBytes:
    if spec.kind == "dense":  # the warm-up steps
        return _fp32(spec, workers)
    # P = M Q reads M; Q = M^T P reads M again; P Q^T writes the average (the factors are r/n of it)
    return TransportBytes(pack=F32, unpack=2 * F32, aggregate=F32)


TRANSPORT_BYTES: dict[str, Callable[[PayloadSpec, int], TransportBytes]] = {
    "fp32-allreduce": _fp32,
    "lowrank-allreduce": _lowrank,
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
    "hier-exact": _hier,
    "hier-1bit": _hier,
    "packed-sparse-allgather": _packed_sparse,
    "fp8-allreduce": lambda spec, workers: _minifloat(spec, workers, 8),
    "fp4-allreduce": lambda spec, workers: _minifloat(spec, workers, 4),
}


HIERARCHICAL_BYTES = frozenset({"hier-exact", "hier-1bit"})
"""Transports whose passes also depend on the workers per node (their callable takes g)."""
