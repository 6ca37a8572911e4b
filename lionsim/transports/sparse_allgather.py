"""sparse-allgather: every worker all-gathers everyone's top-k (index, value) pairs and
adds them into a dense vector (DGC's exchange; Lin et al. 2018), divided by N, or, for a payload
that asks (DeMo), by the number of workers that sent each index. int32 indices and float32
values: 8 bytes per pair, k pairs per worker.
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.compute.kernel_ops import SECTOR, Op, stream
from lionsim.network.calls import CollectiveCall
from lionsim.schedules import AFTER_BACKWARD, PER_BUCKET
from lionsim.timing import Clock
from lionsim.transports.base import F32, TRANSPORTS, Transport, TransportBytes, section
from lionsim.transports.payloads import Payload, PayloadSpec


@TRANSPORTS.register("sparse-allgather")
class SparseAllGather(Transport):
    name = "sparse-allgather"
    kernels = ("cast", "scatter-add")
    carries = ("sparse",)
    overlap = frozenset({PER_BUCKET, AFTER_BACKWARD})  # a bucket's pairs index into that bucket
    summary = "all-gather of top-k (int32 index, float32 value) pairs, summed densely"

    def gathered(self, payload: Payload, comm: Comm, clock: Clock | None) -> tuple[Tensor, Tensor]:
        """Every worker's (int32 indices, values), each [w, W, k]: the exchange alone."""
        with section(clock, "encode"):
            indices = payload.indices.to(torch.int32)
        with section(clock, "collective"):
            return comm.all_gather(indices), comm.all_gather(payload.values)

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        spec, workers = payload.spec, comm.world_size
        all_idx, all_val = self.gathered(payload, comm, clock)
        with section(clock, "decode"):
            w = all_idx.shape[0]
            dense = torch.zeros(w, spec.numel, dtype=torch.float32, device=all_val.device)
            where = all_idx.reshape(w, -1).long()
            dense.scatter_add_(1, where, all_val.reshape(w, -1).float())
            if not spec.over_senders:
                return dense / workers
            senders = torch.zeros_like(dense).scatter_add_(1, where, torch.ones_like(dense[:, :1]).expand_as(where))
            return dense / senders.clamp_min(1)  # the mean over the workers that sent each index

    def plan(self, spec: PayloadSpec, workers: int) -> list[CollectiveCall]:
        return [
            CollectiveCall("all_gather", workers * spec.k * 4, "indices", dtype="int32"),
            CollectiveCall("all_gather", workers * spec.k * 4, "values"),
        ]

    def bits_per_param(self, spec: PayloadSpec, workers: int) -> tuple[float, float]:
        up = 64.0 * spec.k / spec.numel
        return up, (workers - 1) * up

    def wire_bytes(self, spec: PayloadSpec, workers: int) -> TransportBytes:
        share = spec.k / spec.numel
        # pack: int64 indices -> int32; unpack: zero a dense float32 buffer, then for each of the
        # N*k gathered pairs read it (8) and read-modify-write its target (8)
        n = workers
        # as run (aggregate above): the cast; zeros; the N k gathered int32 indices to int64 (read 4,
        # write 8); scatter_add_ (each pair's index and value read, its target's 32-byte sector read and
        # written); the sum / N (read 4, write 4). Over senders (DeMo) a second count buffer: zeros,
        # scatter_add_ of ones, clamp (4, 4), and / counts (read 8, write 4) in place of / N.
        unpack = [stream(F32, "zero the dense float32 buffer (write 4)"),
                  Op("cast", 12 * n, "the N workers' int32 indices -> int64", per="pair"),
                  Op("scatter-add", (8 + 4 + 2 * SECTOR) * n, "N k pairs added into the dense buffer", per="pair")]
        if spec.over_senders:
            unpack += [stream(F32, "zero the sender counts (write 4)"),
                       Op("scatter-add", (8 + 2 * SECTOR) * n, "a 1 added per pair into the counts", per="pair"),
                       stream(8 + 12, "counts clamped to 1, the sum / counts", 2)]
        else:
            unpack.append(stream(2 * F32, "the sum / N (read 4, write 4)"))
        return TransportBytes(pack=12 * share, unpack=F32 + 16 * workers * share, aggregate=F32,
                              pack_ops=(Op("cast", 12, "int64 indices -> int32 (read 8, write 4)", per="pair"),),
                              unpack_ops=tuple(unpack))
