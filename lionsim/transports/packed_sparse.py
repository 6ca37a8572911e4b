"""sparseloco-allgather: SparseLoCo's exchange (Sarfi et al. 2025) as its authors' code packs
it: every worker all-gathers its top-k pairs with each index written as its offset inside its
chunk in `index_bits` (12 for 64 x 64 tiles, as templar's pack_12bit_indices) and each value as a
`value_bits` code (2 bits: 4 levels), plus one float32 table per tensor (the shift and the
2**value_bits centroids the codes stand for). Each position is the mean over the workers that
sent it (the code's scatter_reduce "mean"), 0 where nobody did.

A worker's message, in bytes: ceil(k (index_bits + value_bits) / 8) + 4 T (2**value_bits + 1),
for k pairs over T tensors; the all-gather hands every worker all N messages.

The payload says where each pair's chunk lies (Payload.extra, made by the strategy):
    offsets [w, k]  int64  the pair's index inside its chunk (< 2**index_bits)
    codes   [w, k]  int64  the value's code (< 2**value_bits)
    tables  [w, T, 2**value_bits + 1] float32  per tensor: shift, then the centroid of each code
    start   [k]     int64  where the pair's chunk begins in `order`
    tensor  [k]     int64  the tensor the pair belongs to
    order   [P]     int64  the flat parameter of each position in chunk order
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.errors import LionsimError
from lionsim.network.calls import CollectiveCall
from lionsim.compute.kernel_ops import SECTOR, Op, stream
from lionsim.packing import pack_codes, pack_codes_passes, unpack_codes, unpack_codes_passes
from lionsim.schedules import AFTER_BACKWARD, PER_BUCKET
from lionsim.timing import Clock
from lionsim.transports.base import F32, TRANSPORTS, Transport, TransportBytes, section, shared_rows
from lionsim.transports.payloads import Payload, PayloadSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class PackedSparseSpec(PayloadSpec):
    """A sparse payload sent as chunk offsets and value codes; `segments` counts its tables."""

    index_bits: int = 12
    """Bits of a pair's offset inside its chunk (enough for the largest chunk)."""
    value_bits: int = 2
    """Bits of a value's code: 2**value_bits levels, each a centroid of its tensor's table."""


def message_bytes(spec: PackedSparseSpec) -> int:
    """What one worker sends: its packed pairs and its float32 tables."""
    return math.ceil(spec.k * (spec.index_bits + spec.value_bits) / 8) + table_bytes(spec)


def table_bytes(spec: PackedSparseSpec) -> int:
    """One worker's tables: per tensor, the shift and 2**value_bits centroids in float32."""
    return 4 * spec.segments * (2 ** spec.value_bits + 1)


def dequantize(tables: Tensor, tensor: Tensor, codes: Tensor) -> Tensor:
    """The values codes [..., k] stand for: centroid + shift of the pair's tensor (tables [..., T, L + 1]).
    The strategy and this transport both call it, so a worker's own values and everyone's agree."""
    rows = tables[..., tensor, :]  # [..., k, L + 1]
    return rows.gather(-1, 1 + codes.unsqueeze(-1)).squeeze(-1) + rows[..., 0]


@TRANSPORTS.register("sparseloco-allgather")
class PackedSparseAllGather(Transport):
    name = "sparseloco-allgather"
    carries = ("sparse",)
    overlap = frozenset({PER_BUCKET, AFTER_BACKWARD})  # chunks and value tables are per tensor: a bucket holds whole tensors
    summary = "all-gather of top-k pairs packed as in-chunk offsets and value codes, with per-tensor tables (SparseLoCo)"

    @classmethod
    def accepts(cls, strategy: type) -> bool:
        """Only a strategy that sends chunk offsets and coded values (its payload's extra)."""
        return getattr(strategy, "packs_pairs", False)

    def check(self, spec: PayloadSpec, workers: int) -> None:
        super().check(spec, workers)
        if not isinstance(spec, PackedSparseSpec):
            raise LionsimError(f"{self.name} carries chunk offsets and coded values (sparseloco), not plain pairs")

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        spec, extra = payload.spec, payload.extra
        with section(clock, "encode"):
            packed = torch.cat([pack_codes(extra["offsets"], spec.index_bits),
                                pack_codes(extra["codes"], spec.value_bits)], dim=-1)  # [w, bytes]
        with section(clock, "collective"):
            all_packed = comm.all_gather(packed)  # [w, W, bytes]
            all_tables = comm.all_gather(extra["tables"])  # [w, W, T, L + 1]
        with section(clock, "decode"):
            rows, local = shared_rows(all_packed)
            tables, _ = shared_rows(all_tables)
            split = math.ceil(spec.k * spec.index_bits / 8)
            offsets = unpack_codes(rows[..., :split].contiguous(), spec.k, spec.index_bits)  # [r, W, k]
            codes = unpack_codes(rows[..., split:].contiguous(), spec.k, spec.value_bits)
            values = dequantize(tables, extra["tensor"], codes)  # [r, W, k]
            where = extra["order"][extra["start"] + offsets].reshape(rows.shape[0], -1)
            dense = torch.zeros(rows.shape[0], spec.numel, dtype=torch.float32, device=values.device)
            dense.scatter_add_(1, where, values.reshape(rows.shape[0], -1))
            senders = torch.zeros_like(dense).scatter_add_(1, where, torch.ones_like(dense[:, :1]).expand_as(where))
            dense = dense / senders.clamp_min(1)  # the mean over the workers that sent each index
            return dense.expand(local, -1) if local is not None else dense

    def plan(self, spec: PayloadSpec, workers: int) -> list[CollectiveCall]:
        tables = table_bytes(spec)
        return [
            CollectiveCall("all_gather", workers * (message_bytes(spec) - tables), "pairs", dtype="uint8"),
            CollectiveCall("all_gather", workers * tables, "tables"),
        ]

    def bits_per_param(self, spec: PayloadSpec, workers: int) -> tuple[float, float]:
        up = 8.0 * message_bytes(spec) / spec.numel
        return up, (workers - 1) * up

    def wire_bytes(self, spec: PayloadSpec, workers: int) -> TransportBytes:
        share = spec.k / spec.numel
        bits = (spec.index_bits + spec.value_bits) / 8
        # pack: read int64 offsets and codes, write their bits; unpack: zero a dense float32 buffer and
        # its sender counts, then for each of the N*k gathered pairs read its bits and its table row
        # (8) and read-modify-write its target and its count (16)
        # as run (aggregate above), per pair: offsets and codes packed (lionsim.packing's bit planes from
        # int64) and concatenated; back, per gathered pair (N k): both unpacked to int64, the value looked
        # up in its tensor's table (tensor id and code read, 4 written, + the shift), its position
        # looked up (int64 order), then as sparse-allgather's mean over senders
        n = workers
        offsets, offsets_ops = pack_codes_passes(spec.index_bits, in_bytes=8)
        codes, codes_ops = pack_codes_passes(spec.value_bits, in_bytes=8)
        unoffsets, unoffsets_ops = unpack_codes_passes(spec.index_bits)
        uncodes, uncodes_ops = unpack_codes_passes(spec.value_bits)
        pack_ops = (Op("pack-codes", offsets + codes + 2 * bits, "offsets and codes -> bit fields, concatenated",
                       offsets_ops + codes_ops + 1, per="pair"),)
        unpack_ops = (Op("unpack-codes", (unoffsets + uncodes) * n, "N workers' offsets and codes -> int64",
                         unoffsets_ops + uncodes_ops, per="pair"),
                      Op("float-pass", (8 + 8 + 4 + 4 + 8 + 8 + 8 + 8 + 8) * n, "each pair's value from its table "
                         "row and its position from the chunk order", 5, per="pair"),
                      stream(2 * F32, "zero the sum and the sender counts (write 4 each)", 2),
                      Op("scatter-add", (8 + 4 + 2 * SECTOR + 8 + 2 * SECTOR) * n, "N k pairs and a 1 each added "
                         "into the sum and the counts", 2, per="pair"),
                      stream(8 + 12, "counts clamped to 1, the sum / counts", 2))
        return TransportBytes(pack=(16 + bits) * share, unpack=2 * F32 + (bits + 8 + 16) * workers * share,
                              aggregate=F32, pack_ops=pack_ops, unpack_ops=unpack_ops)
