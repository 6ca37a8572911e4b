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
from lionsim.packing import pack_codes, packed_size, unpack_codes
from lionsim.timing import Clock
from lionsim.transports.base import (
    AFTER_BACKWARD, F32, I8, PER_BUCKET, TRANSPORTS, Transport, TransportBytes, section, shared_rows
)
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
        code = level_bits(spec.max_level) / 8
        return TransportBytes(pack=I8 + code, unpack=workers * code + F32, aggregate=F32)  # N workers' codes -> mean
