"""allgather-1bit: every worker all-gathers everyone's packed sign bits and votes locally.

One bit per parameter up; each worker receives the other N-1 workers' bits, so the traffic
per worker, (N-1)/N * N * n/8 bytes, grows with N (REFERENCE.md 5). Also carries
EF-signSGD's scaled signs: the per-tensor float32 scales travel in a second, small all-gather.
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.network.calls import CollectiveCall
from lionsim.packing import pack_signs, packed_size, unpack_signs
from lionsim.timing import Clock
from lionsim.transports.base import TRANSPORTS, Transport, section
from lionsim.transports.payloads import Payload, PayloadSpec


@TRANSPORTS.register("allgather-1bit")
class AllGather1Bit(Transport):
    name = "allgather-1bit"
    carries = ("votes", "scaled-signs")
    summary = "all-gather of packed 1-bit signs, vote locally (traffic grows with N)"

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        spec, workers = payload.spec, comm.world_size
        with section(clock, "encode"):
            packed = pack_signs(payload.values)  # [w, n/8]
        with section(clock, "collective"):
            gathered = comm.all_gather(packed)  # [w, W, n/8]
            scales = comm.all_gather(payload.scales) if spec.kind == "scaled-signs" else None
        with section(clock, "decode"):
            if spec.kind == "votes":
                signs = unpack_signs(gathered, spec.numel, torch.int8)  # [w, W, n]
                return spec.rule.value(signs.sum(1, dtype=torch.int32), workers)
            signs = unpack_signs(gathered, spec.numel)  # [w, W, n]
            per_param = scales[..., payload.segment_ids]  # [w, W, n]
            return (signs * per_param).sum(1) / workers

    def plan(self, spec: PayloadSpec, workers: int) -> list[CollectiveCall]:
        calls = [CollectiveCall("all_gather", workers * packed_size(spec.numel), "signs")]
        if spec.kind == "scaled-signs":
            calls.append(CollectiveCall("all_gather", workers * spec.segments * 4, "scales"))
        return calls

    def bits_per_param(self, spec: PayloadSpec, workers: int) -> tuple[float, float]:
        extra = 32.0 * spec.segments / spec.numel if spec.kind == "scaled-signs" else 0.0
        return 1.0 + extra, (workers - 1) * (1.0 + extra)
