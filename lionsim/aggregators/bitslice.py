"""Votes counted straight on packed sign words: bit-sliced carry-save adders.

The workers' packed votes [..., W, m] (uint8, MSB first as `lionsim.packing.pack_signs`) are
viewed as int64 words, 64 coordinates per word, and added with bitwise full adders (the
Harley-Seal scheme run "vertically"): three planes of weight 2^j become one of weight 2^j
(their XOR) and one of weight 2^(j+1) (their majority). After all W rows, plane j holds bit j
of every coordinate's count of set bits, and ceil(log2(W + 1)) planes are unpacked once.

Cost: about one full adder (5 word ops) per worker row per 64 coordinates, against 8+ byte
ops per coordinate per worker for unpack -> sum. Memory: at most two planes per weight level
(O(n/8 log W) bytes) plus the int32 counts, never an unpacked [W, n] (let alone [W, W, n]).
The counts equal the plain unpack-sum reference exactly.

Which one runs (count_set): the plain unpack -> sum while W * n bits fit in cache (at most
PLAIN_MAX_BITS) or W <= 2, where its few memory-speed passes beat the adders' 5 W small ops
(measured, one thread, the machine shared: n = 75K, W = 8: plain 0.58 ms, bit-sliced 0.82 ms;
W = 32: 3.5 ms against 1.9 ms; n = 1e6, W = 32: 144 ms against 12 ms); the adders beyond.
Under `lionsim.packing.reference_paths()` (a modelled device's kernels being counted) the plain
path runs while its unpacked [.., W, n] fits REFERENCE_MAX_BYTES: a GPU counts votes in a few
kernels, and no modelled time may depend on the adders' W-fold small CPU ops.
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.packing import unpack_bools, use_reference


PLAIN_MAX_BITS = 1 << 21
"""Up to this many bits in all (every row of every leading index) the plain unpack -> sum is
faster on the CPU."""
REFERENCE_MAX_BYTES = 1 << 28
"""The plain path's unpacked bools, at most, when it runs for its kernel count (N = 1000 workers
of allgather-1bit would unpack [W, W, n]: the adders run there, and their kernels are counted)."""


def _words(packed: Tensor) -> Tensor:
    """uint8 [..., m] -> int64 [..., ceil(m/8)]: zero-padded bytes viewed 8 at a time."""
    m = packed.shape[-1]
    if m % 8 or not packed.is_contiguous():
        packed = torch.nn.functional.pad(packed, (0, (-m) % 8)).contiguous()
    return packed.view(torch.int64)


def _planes(words: Tensor, mask: Tensor | None) -> list[Tensor]:
    """Bit-sliced count over dimension -2 of int64 words [..., W, k] (AND-ed with mask's
    words where given): plane j [..., k] holds bit j of every coordinate's count."""
    levels: list[list[Tensor]] = []

    def add(j: int, x: Tensor) -> None:
        while True:
            if j == len(levels):
                levels.append([])
            pending = levels[j]
            if len(pending) < 2:
                pending.append(x)
                return
            a, b = pending
            t = a ^ b
            carry = (a & b) | (t & x)  # majority of a, b, x
            t ^= x
            levels[j] = [t]
            j, x = j + 1, carry

    for i in range(words.shape[-2]):
        row = words[..., i, :]
        add(0, row & mask[..., i, :] if mask is not None else row)
    planes: list[Tensor] = []
    j = 0
    while j < len(levels):  # resolve the pairs left at each level with half adders
        pending = levels[j]
        if len(pending) == 2:
            a, b = pending
            levels[j] = [a ^ b]
            add(j + 1, a & b)
        planes.append(levels[j][0])
        j += 1
    return planes


def count_set(packed: Tensor, numel: int, mask: Tensor | None = None, method: str = "auto") -> Tensor:
    """int32 [..., numel]: how many of the W rows (dimension -2) of packed [..., W, m] uint8
    have bit i set (AND-ed with the same-shaped packed `mask` where given), by `method`:
    "bitslice" (the adders), "plain" (unpack -> sum), or "auto" (the faster for the size).

    Equals `unpack_bools(packed, numel).sum(-2)` (of `& unpack_bools(mask, numel)`) exactly.
    """
    if packed.dtype != torch.uint8:
        raise TypeError(f"packed bits must be uint8, got {packed.dtype}")
    if packed.dim() < 2:
        raise ValueError(f"packed votes need a worker dimension [..., W, m], got {tuple(packed.shape)}")
    if numel > packed.shape[-1] * 8:
        raise ValueError(f"numel {numel} exceeds {packed.shape[-1] * 8} packed bits")
    if mask is not None and mask.shape != packed.shape:
        raise ValueError(f"mask shape {tuple(mask.shape)} != packed shape {tuple(packed.shape)}")
    m = packed.shape[-1]
    out_shape = (*packed.shape[:-2], numel)
    if packed.shape[-2] == 0:
        return torch.zeros(out_shape, dtype=torch.int32, device=packed.device)
    if method == "auto":
        unpacked = packed.numel() // m * numel if m else 0  # bools the plain path unpacks
        plain = (use_reference(packed) and unpacked <= REFERENCE_MAX_BYTES) or packed.shape[-2] <= 2 \
            or unpacked <= PLAIN_MAX_BITS
        method = "plain" if plain else "bitslice"
    if method == "plain":
        return count_set_plain(packed, numel, mask)
    planes = _planes(_words(packed), None if mask is None else _words(mask))
    count = torch.zeros(out_shape, dtype=torch.int32, device=packed.device)
    for j, plane in enumerate(planes):
        bits = unpack_bools(plane.view(torch.uint8)[..., :m], numel)
        count.add_(bits.to(torch.int32), alpha=1 << j)
    return count


def count_set_plain(packed: Tensor, numel: int, mask: Tensor | None = None) -> Tensor:
    """count_set by unpacking every row and summing: the reference, and the small-size path."""
    bits = unpack_bools(packed, numel)
    if mask is not None:
        bits = bits & unpack_bools(mask, numel)
    return bits.sum(-2, dtype=torch.int32)


def vote_sum_packed(signs: Tensor, numel: int, workers: int | None = None,
                    voted: Tensor | None = None, method: str = "auto") -> tuple[Tensor, Tensor | None]:
    """S [..., numel] (int32) from packed signs [..., W, m] (a set bit is +1, a clear one -1),
    and, with the packed `voted` bitmap (a clear bit abstains), where anyone voted.

    Without `voted` every row votes: S = 2 P - W. With it, S = 2 P - V over the votes cast
    (P: set sign bits among them, V: votes cast) and the second result is V > 0; else None.
    Equals summing `unpack_signs(signs) [* unpack_bools(voted)]` over dimension -2; `method`
    as count_set's.
    """
    w = signs.shape[-2] if workers is None else workers
    plus = count_set(signs, numel, voted, method)
    if voted is None:
        return plus.mul_(2).sub_(w), None
    cast = count_set(voted, numel, method=method)
    return plus.mul_(2).sub_(cast), cast > 0
