"""allgather-1bit: every worker all-gathers everyone's packed sign bits and votes locally.

One bit per parameter up; each worker receives the other N-1 workers' bits, so the traffic
per worker, (N-1)/N * N * n/8 bytes, grows with N (the ring all-gather's Hockney cost:
lionsim.network.link). On a step where some worker abstains (lionsim.transports.abstain)
each worker also sends its "voted" bitmap in the same all-gather: 2 bits per parameter. Also carries
EF-signSGD's scaled signs: the per-tensor float32 scales travel in a second, small all-gather;
a zero sign (sign(0) = 0, a coordinate with nothing to send) travels as a vote's abstention does.
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.aggregators.bitslice import vote_sum_packed
from lionsim.backends import Comm
from lionsim.network.calls import CollectiveCall
from lionsim.compute.kernel_ops import Op
from lionsim.packing import (pack_bools, pack_signs, pack_signs_passes, packed_size, unpack_bools, unpack_bools_passes,
                             unpack_signs, unpack_signs_passes)
from lionsim.schedules import AFTER_BACKWARD, PER_BUCKET
from lionsim.timing import Clock
from lionsim.transports.abstain import FLAG_CALL, settle, voted_plane
from lionsim.transports.base import F32, I8, TRANSPORTS, Transport, TransportBytes, section, shared_rows, sum_bytes
from lionsim.transports.payloads import Payload, PayloadSpec


@TRANSPORTS.register("allgather-1bit")
class AllGather1Bit(Transport):
    name = "allgather-1bit"
    kernels = ("pack-signs", "unpack-signs")
    carries = ("votes", "scaled-signs")
    overlap = frozenset({PER_BUCKET, AFTER_BACKWARD})  # a bucket's signs, and the per-tensor scales of the whole tensors it holds
    summary = "all-gather of packed 1-bit signs, vote locally (traffic grows with N)"

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        votes, workers = payload.spec.kind == "votes", comm.world_size
        with section(clock, "collective"):
            abstain = settle(payload, comm)
        spec, m = payload.spec, packed_size(payload.spec.numel)
        with section(clock, "encode"):
            packed = pack_signs(payload.values)  # [w, n/8]
            if abstain:  # signs, then where this worker voted
                packed = torch.cat([packed, pack_bools(voted_plane(payload.values))], -1)  # [w, 2n/8]
        with section(clock, "collective"):
            gathered = comm.all_gather(packed)  # [w, W, n/8]
            scales = comm.all_gather(payload.scales) if spec.kind == "scaled-signs" else None
        with section(clock, "decode"):
            # The simulator's all-gather is one view shared by every worker (stride 0): decode
            # it once and share the result the same way, never a [W, W, n] unpack.
            gathered, local = shared_rows(gathered)
            if votes:  # counted on the packed words (lionsim.aggregators.bitslice)
                voted = gathered[..., m:] if abstain else None
                vote_sum, voted_any = vote_sum_packed(gathered[..., :m], spec.numel, workers, voted)  # [w, n]
                out = spec.rule.result(vote_sum, workers, voted=voted_any)
            else:
                signs = unpack_signs(gathered[..., :m], spec.numel)  # [w, W, n]
                if abstain:  # a zero sign sends nothing
                    signs = signs * unpack_bools(gathered[..., m:], spec.numel)
                per_param = scales[: signs.shape[0]][..., payload.segment_ids]  # [w, W, n]
                out = (signs * per_param).sum(1) / workers
            return out if local is None else out.expand(local, -1)

    def plan(self, spec: PayloadSpec, workers: int) -> list[CollectiveCall]:
        planes = 2 if spec.abstain else 1
        if spec.kind == "votes":
            return [FLAG_CALL, CollectiveCall("all_gather", workers * planes * packed_size(spec.numel), "votes",
                                               dtype="uint8")]
        return [FLAG_CALL, CollectiveCall("all_gather", workers * planes * packed_size(spec.numel), "signs",
                                          dtype="uint8"),
                CollectiveCall("all_gather", workers * spec.segments * 4, "scales")]

    def bits_per_param(self, spec: PayloadSpec, workers: int) -> tuple[float, float]:
        # the voted bitmap on abstention steps (the flag byte is per step)
        planes = 2.0 if spec.abstain else 1.0
        extra = 32.0 * spec.segments / spec.numel if spec.kind == "scaled-signs" else 0.0
        return planes + extra, (workers - 1) * (planes + extra)

    def wire_bytes(self, spec: PayloadSpec, workers: int) -> TransportBytes:
        n = workers
        signs, sign_ops = pack_signs_passes(I8)
        pack = (Op("pack-signs", signs, "int8 signs -> bits: > 0, int64 gather, >> 56, to uint8", sign_ops),)
        if spec.kind == "scaled-signs":  # sum of sign * scale in float32
            unpacked, unpack_ops = unpack_signs_passes(F32)
            unpack = (Op("unpack-signs", n * unpacked, "N workers' bits -> +-1 float32", unpack_ops),
                      Op("float-pass", 8 + 4 * n, "each worker's tensor scale gathered per parameter (int64 ids "
                         "read, N float32 written)"),
                      Op("float-pass", 12 * n + 4 * n + 4 + 8, "signs x scales (read 8N, write 4N), sum over the "
                         "workers (read 4N, write 4), / N", 3))
            return TransportBytes(pack=I8 + 1 / 8, unpack=workers / 8 + F32, aggregate=F32, pack_ops=pack,
                                  unpack_ops=unpack)
        s = sum_bytes(workers)
        unpacked, unpack_ops = unpack_bools_passes()
        value, value_ops = spec.rule.value_passes(4.0)
        unpack = (Op("unpack-signs", n * unpacked + n + 4 + 16,
                     "N workers' bits -> bools, summed to int32 (read N, write 4), x 2 - N (each read 4, write 4)",
                     unpack_ops + 3),
                  Op("float-pass", value, "the vote rule's float32 result from the int32 sum", value_ops))
        # ideal: read N workers' bits, write the sum
        return TransportBytes(pack=I8 + 1 / 8, unpack=workers / 8 + s, aggregate=s, pack_ops=pack, unpack_ops=unpack,
                              decoded=F32)
