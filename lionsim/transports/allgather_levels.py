"""allgather-levels: every worker all-gathers everyone's fixed-width levels and per-tensor
scales, and averages the decoded values locally (QSGD's exchange; Alistarh et al. 2017).

Each level |l| <= s travels as the code l + s in b = ceil(log2(s + 1)) + 1 bits (the width
of magnitude plus sign; the offset code needs no more), packed MSB first; the float32 scales
(one per tensor) travel in a second, small all-gather. Like allgather-1bit the traffic per
worker grows with N.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.network.calls import CollectiveCall
from lionsim.compute.kernel_ops import Op
from lionsim.packing import pack_codes, pack_codes_passes, packed_size, unpack_codes, unpack_codes_passes
from lionsim.schedules import AFTER_BACKWARD, PER_BUCKET
from lionsim.timing import Clock
from lionsim.transports.base import F32, I8, TRANSPORTS, Transport, TransportBytes, section, shared_rows
from lionsim.transports.payloads import Payload, PayloadSpec


def level_bits(max_level: int) -> int:
    """b: bits of one level, magnitude up to s plus a sign."""
    return math.ceil(math.log2(max_level + 1)) + 1


@TRANSPORTS.register("allgather-levels")
class AllGatherLevels(Transport):
    name = "allgather-levels"
    kernels = ("pack-codes", "unpack-codes")
    carries = ("scaled-levels",)
    overlap = frozenset({PER_BUCKET, AFTER_BACKWARD})  # per-tensor norms: a bucket holds whole tensors
    summary = "all-gather of fixed-width levels (ceil(log2(s+1))+1 bits) and fp32 per-tensor scales, averaged"

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        spec, workers = payload.spec, comm.world_size
        bits = level_bits(spec.max_level)
        with section(clock, "encode"):
            packed = pack_codes(payload.values.to(torch.int64) + spec.max_level, bits)  # [w, n*b/8]
        with section(clock, "collective"):
            gathered = comm.all_gather(packed)  # [w, W, n*b/8]
            scales = comm.all_gather(payload.scales)  # [w, W, T]
        with section(clock, "decode"):
            gathered, local = shared_rows(gathered)  # the simulator's shared view: decode once
            levels = unpack_codes(gathered, spec.numel, bits) - spec.max_level  # [w, W, n]
            out = (levels * scales[: levels.shape[0]][..., payload.segment_ids]).sum(1).float() / workers
            return out if local is None else out.expand(local, -1)

    def plan(self, spec: PayloadSpec, workers: int) -> list[CollectiveCall]:
        return [CollectiveCall("all_gather", workers * packed_size(spec.numel, level_bits(spec.max_level)), "levels",
                               dtype="uint8"),
                CollectiveCall("all_gather", workers * spec.segments * 4, "scales")]

    def bits_per_param(self, spec: PayloadSpec, workers: int) -> tuple[float, float]:
        up = level_bits(spec.max_level) + 32.0 * spec.segments / spec.numel
        return up, (workers - 1) * up

    def wire_bytes(self, spec: PayloadSpec, workers: int) -> TransportBytes:
        bits = level_bits(spec.max_level)
        code, n = bits / 8, workers
        codes, codes_ops = pack_codes_passes(bits, in_bytes=8)
        unpacked, unpack_ops = unpack_codes_passes(bits)
        # as run (aggregate above): levels to int64 (read 1, write 8), + L (8, 8), packed; back, per
        # worker's row: unpacked to int64, - L (8, 8), its tensor's scale gathered per parameter (int64
        # ids read, 4 written), level x scale (read 12, write 4); the sum over the N rows (read 4N,
        # write 4) and / N (4, 4)
        pack_ops = (Op("pack-codes", 9 + 16 + codes, "levels -> offset int64 codes -> bits", 2 + codes_ops),)
        unpack_ops = (Op("unpack-codes", n * (unpacked + 16), "N workers' bits -> int64 levels", unpack_ops + 1),
                      Op("float-pass", 8 + 4 * n + 16 * n + 4 * n + 4 + 8,
                         "each row's tensor scales per parameter, level x scale, sum over the rows, / N", 4))
        return TransportBytes(pack=I8 + code, unpack=workers * code + F32, aggregate=F32,  # N workers' codes -> mean
                              pack_ops=pack_ops, unpack_ops=unpack_ops)
