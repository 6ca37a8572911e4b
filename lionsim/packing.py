"""Bit packing for sign votes and small integer codes.

`pack_signs` sets a bit where x > 0, 8 per byte, most significant bit first: the byte order
of numpy.packbits. Everything works on any device and on any leading dimensions (e.g. a
worker dimension [W, n]); only the last dimension is packed.

Unpacking on the CPU is numpy.unpackbits (or a 256-row sign table) on the tensor's own
memory: nothing in torch unpacks as fast (a shift per bit plane ran 10x slower). On the CPU
the codec runs on one thread (`single_threaded`): it is memory-bound, and a
parallel region per 1M-element chunk stalls whenever another process holds a core (on a busy
2-core machine pack_signs of 1e8 floats took 2.5 s with 2 threads against 0.1 s with one).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

import numpy as np
import torch
from torch import Tensor

# Bit weights of one byte, most significant first (numpy.packbits order).
_SHIFTS = torch.arange(7, -1, -1, dtype=torch.uint8)


_F = TypeVar("_F", bound=Callable)

_REFERENCE: ContextVar[bool] = ContextVar("reference_paths", default=False)


@contextmanager
def reference_paths():
    """Inside the block the codecs (and vote counting, lionsim.aggregators.bitslice) run their
    plain torch paths, the ones a GPU runs, with the same results: a modelled device's kernels
    are counted on them (lionsim.training.counting), never on the CPU fast paths (numpy, the
    chunked packer, carry-save adders), so no modelled time depends on how the CPU simulator
    happens to be written."""
    token = _REFERENCE.set(True)
    try:
        yield
    finally:
        _REFERENCE.reset(token)


def use_reference(x: Tensor) -> bool:
    """Whether the plain torch path runs for a tensor (off the CPU, or inside reference_paths)."""
    return x.device.type != "cpu" or _REFERENCE.get()


def single_threaded(fn: _F) -> _F:
    """Run fn with one intra-op thread when its first argument lives on the CPU, restoring the
    caller's thread count after (the codec's ops are memory-bound: threads buy little on an
    idle machine and stall each chunk when a core is busy)."""

    @functools.wraps(fn)
    def wrapper(x, *args, **kwargs):
        threads = torch.get_num_threads()
        if threads == 1 or x.device.type != "cpu":
            return fn(x, *args, **kwargs)
        torch.set_num_threads(1)
        try:
            return fn(x, *args, **kwargs)
        finally:
            torch.set_num_threads(threads)

    return wrapper  # type: ignore[return-value]


def packed_size(numel: int, bits: int = 1) -> int:
    """Bytes needed for `numel` fields of `bits` bits each."""
    return (numel * bits + 7) // 8


@single_threaded
def pack_bools(bits: Tensor) -> Tensor:
    """Pack a bool/0-1 tensor [..., n] into uint8 [..., ceil(n/8)], MSB first."""
    n = bits.shape[-1]
    if n % 8:
        bits = torch.nn.functional.pad(bits.to(torch.uint8), (0, (-n) % 8))
    flat = (bits != 0).reshape(-1)  # rows are whole bytes now, so rows can be packed as one
    return _pack_flat(flat).reshape(*bits.shape[:-1], bits.shape[-1] // 8)


def pack_bools_reference(bits: Tensor) -> Tensor:
    """Plain, slow pack_bools (eight shifted slices OR-ed): the reference for tests."""
    n = bits.shape[-1]
    b = torch.nn.functional.pad(bits.to(torch.uint8), (0, (-n) % 8))
    b = b.reshape(*b.shape[:-1], -1, 8)  # (..., bytes, 8)
    out = b[..., 0] << 7
    for i in range(1, 8):
        out |= b[..., i] << (7 - i)
    return out


# Multiplying the eight 0/1 bytes of a little-endian int64 by this constant moves byte i's
# bit to bit 63 - i; every partial product lands on its own bit, so nothing carries and the
# top byte is the packed byte (MSB first).
_GATHER_BITS = 0x8040201008040201 - (1 << 64)  # as a signed int64
_CHUNK = 1 << 20  # CPU: 1M elements at a time keeps temporaries in cache and off the page-fault path


def _pack_flat(flat: Tensor, compare: bool = False) -> Tensor:
    """bool [8m] (or, with compare, any tensor tested for > 0) -> uint8 [m]."""
    n = flat.numel()
    if sys.byteorder != "little" or use_reference(flat):
        bits = flat > 0 if compare else flat
        if sys.byteorder != "little":  # pragma: no cover - the byte trick assumes little-endian
            return pack_bools_reference(bits)
        return ((bits.view(torch.uint8).view(torch.int64) * _GATHER_BITS) >> 56).to(torch.uint8)
    out = torch.empty(n // 8, dtype=torch.uint8)
    mask = torch.empty(min(n, _CHUNK), dtype=torch.bool) if compare else None
    words = torch.empty(min(n, _CHUNK) // 8, dtype=torch.int64)
    for start in range(0, n, _CHUNK):
        stop = min(n, start + _CHUNK)
        bits = torch.gt(flat[start:stop], 0, out=mask[: stop - start]) if compare else flat[start:stop]
        w = words[: (stop - start) // 8]
        torch.mul(bits.view(torch.uint8).view(torch.int64), _GATHER_BITS, out=w)
        out[start // 8 : stop // 8].copy_(w.bitwise_right_shift_(56))  # uint8 cast keeps the low byte
    return out


@single_threaded
def unpack_bools(packed: Tensor, numel: int) -> Tensor:
    """Inverse of pack_bools: uint8 [..., m] -> bool [..., numel]."""
    _check_packed(packed, numel)
    if use_reference(packed):
        return unpack_bools_reference(packed, numel)
    # numpy.unpackbits, on the tensor's own memory: memory speed
    return torch.from_numpy(np.unpackbits(packed.numpy(), axis=-1, count=numel)).view(torch.bool)


def unpack_bools_reference(packed: Tensor, numel: int) -> Tensor:
    """Plain unpack_bools (shift each byte by 7..0): the reference for tests, and the CUDA path."""
    _check_packed(packed, numel)
    shifts = _SHIFTS.to(packed.device)
    bits = (packed.unsqueeze(-1) >> shifts) & 1  # (..., m, 8)
    return bits.reshape(*packed.shape[:-1], packed.shape[-1] * 8)[..., :numel].bool()


def _check_packed(packed: Tensor, numel: int) -> None:
    if packed.dtype != torch.uint8:
        raise TypeError(f"packed bits must be uint8, got {packed.dtype}")
    if numel > packed.shape[-1] * 8:
        raise ValueError(f"numel {numel} exceeds {packed.shape[-1] * 8} packed bits")


@single_threaded
def pack_signs(x: Tensor) -> Tensor:
    """Signs of x [..., n] as bits (set where x > 0) in uint8 [..., ceil(n/8)]."""
    if not use_reference(x) and _sign_table(x.dtype) is not None:  # a dtype numpy has
        # numpy.packbits(x > 0) on the tensor's own memory: 2x the torch packer below (10^7 floats:
        # 4.5 ms against 9.3 ms on one idle thread)
        return torch.from_numpy(np.packbits(x.detach().numpy() > 0, axis=-1))
    if x.shape[-1] % 8 == 0:
        # Compare chunk by chunk inside the packer: a full-size bool temporary costs more
        # than the packing itself.
        return _pack_flat(x.reshape(-1), compare=True).reshape(*x.shape[:-1], -1)
    return pack_bools(x > 0)


@single_threaded
def unpack_signs(packed: Tensor, numel: int, dtype: torch.dtype = torch.float32) -> Tensor:
    """+1/-1 values [..., numel] from pack_signs output (a clear bit is -1)."""
    table = None if use_reference(packed) else _sign_table(dtype)
    if table is None:
        return unpack_bools(packed, numel).to(dtype) * 2 - 1
    _check_packed(packed, numel)
    # one pass: each byte picks its row of 8 signs (3x numpy's own unpackbits -> astype -> *2-1)
    signs = np.take(table, packed.numpy(), axis=0).reshape(*packed.shape[:-1], -1)
    out = torch.from_numpy(signs)[..., :numel]
    return out if out.is_contiguous() else out.contiguous()


@functools.cache
def _sign_table(dtype: torch.dtype) -> np.ndarray | None:
    """[256, 8]: byte b's eight bits as +1/-1, MSB first, in `dtype` (None: numpy lacks it)."""
    try:
        np_dtype = torch.empty(0, dtype=dtype).numpy().dtype
    except TypeError:  # bfloat16 and other dtypes numpy does not have
        return None
    bits = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1)
    return (bits.astype(np.int64) * 2 - 1).astype(np_dtype)


@single_threaded
def pack_codes(codes: Tensor, bits: int) -> Tensor:
    """Pack non-negative integer codes [..., n] (each < 2**bits) into uint8, MSB first.

    Field i occupies bits [i*bits, (i+1)*bits) of the bit stream, its own most significant
    bit first; with bits=1 this is pack_bools.
    """
    _check_bits(bits)
    if use_reference(codes) or bits > 8:
        return pack_codes_reference(codes, bits)
    # numpy on one byte per bit: the codes' bit planes side by side are the bit stream
    small = codes.numpy().astype(np.uint8)
    planes = np.stack([(small >> shift) & 1 for shift in range(bits - 1, -1, -1)], axis=-1)  # [..., n, bits]
    return torch.from_numpy(np.packbits(planes.reshape(*codes.shape[:-1], codes.shape[-1] * bits), axis=-1))


@single_threaded
def unpack_codes(packed: Tensor, numel: int, bits: int) -> Tensor:
    """Inverse of pack_codes: uint8 [..., m] -> int64 codes [..., numel]."""
    _check_bits(bits)
    _check_packed(packed, numel * bits)
    if use_reference(packed) or bits > 8:
        return unpack_codes_reference(packed, numel, bits)
    stream = np.unpackbits(packed.numpy(), axis=-1, count=numel * bits)
    fields = stream.reshape(*packed.shape[:-1], numel, bits)
    out = np.zeros(fields.shape[:-1], dtype=np.int64)
    for plane in range(bits):  # most significant plane first
        out <<= 1
        out |= fields[..., plane]
    return torch.from_numpy(out)


def pack_codes_reference(codes: Tensor, bits: int) -> Tensor:
    """Plain pack_codes (a bit plane per field bit): the reference for tests, and the CUDA path."""
    _check_bits(bits)
    shifts = torch.arange(bits - 1, -1, -1, device=codes.device, dtype=torch.int64)
    planes = ((codes.to(torch.int64).unsqueeze(-1) >> shifts) & 1).to(torch.uint8)  # (..., n, bits)
    return pack_bools(planes.reshape(*codes.shape[:-1], codes.shape[-1] * bits))


def unpack_codes_reference(packed: Tensor, numel: int, bits: int) -> Tensor:
    """Plain unpack_codes: the reference for tests, and the CUDA path."""
    planes = unpack_bools_reference(packed, numel * bits).to(torch.int64)
    planes = planes.reshape(*packed.shape[:-1], numel, bits)
    weights = 1 << torch.arange(bits - 1, -1, -1, device=packed.device, dtype=torch.int64)
    return (planes * weights).sum(-1)


def _check_bits(bits: int) -> None:
    if not 1 <= bits <= 32:
        raise ValueError(f"bits must be in 1..32, got {bits}")


# What the GPU paths above move, per element, counted op by op (reads of every distinct input,
# writes of every output; lionsim.perf.bytecount counts the same ops to check them). Transports
# declare their kernels with these (Transport.wire_bytes): (bytes per element, ops).


def pack_signs_passes(in_bytes: float = 1.0) -> tuple[float, int]:
    """pack_signs of `in_bytes`-wide values, per value: x > 0 (read in_bytes, write a bool), the
    bools viewed as int64 words times the bit-gathering constant (read 1, write 1), >> 56 (1, 1),
    to uint8 (read 1, write 1/8)."""
    return in_bytes + 1 + 2 + 2 + 1 + 1 / 8, 4


def unpack_bools_passes() -> tuple[float, int]:
    """unpack_bools, per value: byte >> 7..0 (read 1/8, write 1), & 1 (1, 1), to bool (1, 1)."""
    return 1 / 8 + 1 + 2 + 2, 3


def unpack_signs_passes(out_bytes: float = 4.0) -> tuple[float, int]:
    """unpack_signs to `out_bytes`-wide values, per value: unpack_bools, to the dtype (read 1, write
    out_bytes), * 2 and - 1 (each reads and writes out_bytes)."""
    unpack, ops = unpack_bools_passes()
    return unpack + 1 + out_bytes + 4 * out_bytes, ops + 3


def pack_codes_passes(bits: int, in_bytes: float = 1.0) -> tuple[float, int]:
    """pack_codes of `in_bytes`-wide integer codes in `bits`-bit fields, per code: to int64 (read
    in_bytes, write 8; none for int64 codes), >> the planes (read 8, write 8 a plane), & 1 (8, 8 a
    plane), to uint8 (8, 1 a plane), then pack_bools of `bits` bytes (!= 0, the int64 gather and
    >> 56 each read and write 1; to uint8 reads 1, writes 1/8), and the plane shifts' arange (no
    bytes per code; a one-element arange is no kernel)."""
    cast, cast_ops = (0.0, 0) if in_bytes == 8 else (in_bytes + 8, 1)
    planes = 8 + (8 + 16 + 9) * bits
    return cast + planes + (2 + 2 + 2 + 1 + 1 / 8) * bits, cast_ops + (8 if bits > 1 else 7)


def unpack_codes_passes(bits: int) -> tuple[float, int]:
    """unpack_codes to int64 codes, per code: unpack_bools of `bits` bits, to int64 (read 1, write 8
    a bit), times the plane weights (read 8, write 8 a bit), sum over the planes (read 8 a bit, write
    8), and the weights' arange and shift (no bytes per code)."""
    unpack, ops = unpack_bools_passes()
    return unpack * bits + 9 * bits + 16 * bits + 8 * bits + 8, ops + (5 if bits > 1 else 3)
