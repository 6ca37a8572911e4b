"""fp32-allreduce and bf16-allreduce: the gradient all-reduce of ordinary data parallelism.

bf16: each worker rounds its gradient to bfloat16 and the sum travels in bfloat16: a ring
adds in bf16 hop by hop, rounding each of the N - 1 partial sums, so the error grows with N.
The simulator computes exactly that (lionsim.backends.ring); on gloo the real collective runs
in bf16 in gloo's own order (so its bits differ from the model's), a rank's local workers
first summed in float32 and rounded once. Its error against the exact mean goes to
steps.csv (aggregate_rel_error) where every worker is in the process (lionsim.transports.error).
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.compute.kernel_ops import Op, stream
from lionsim.network.calls import CollectiveCall
from lionsim.schedules import AFTER_BACKWARD, PER_BUCKET
from lionsim.timing import Clock
from lionsim.transports.base import F32, TRANSPORTS, Transport, TransportBytes, section
from lionsim.transports.error import note_error
from lionsim.transports.payloads import Payload, PayloadSpec


class FloatAllReduce(Transport):
    carries = ("dense",)
    overlap = frozenset({PER_BUCKET, AFTER_BACKWARD})  # DDP all-reduces each bucket (bf16: its bf16_compress_hook)
    dtype: torch.dtype
    bits: int

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        with section(clock, "encode"):
            wire = payload.values.to(self.dtype)
        with section(clock, "collective"):
            total = comm.all_reduce(wire)
        with section(clock, "decode"):
            out = total.float() / comm.world_size
        if self.dtype != torch.float32:  # lossy: how far from the exact mean
            note_error(payload, out, comm)
        return out

    def plan(self, spec: PayloadSpec, workers: int) -> list[CollectiveCall]:
        return [CollectiveCall("all_reduce", spec.numel * self.bits // 8, "gradients",
                               dtype=str(self.dtype).removeprefix("torch."))]

    def bits_per_param(self, spec: PayloadSpec, workers: int) -> tuple[float, float]:
        return float(self.bits), float(self.bits)


@TRANSPORTS.register("fp32-allreduce")
class Fp32AllReduce(FloatAllReduce):
    name = "fp32-allreduce"
    summary = "ring all-reduce of float32 gradients (32 bits up, 32 down)"
    dtype = torch.float32
    bits = 32

    def wire_bytes(self, spec: PayloadSpec, workers: int) -> TransportBytes:
        # ideal: the update divides the sum by N as it reads it; as run: the gradient is all-reduced in
        # place, then total / N is a pass of its own (DDP's allreduce hook divides before instead)
        return TransportBytes(pack=0.0, unpack=0.0, aggregate=F32,
                              unpack_ops=(stream(2 * F32, "the float32 sum / N (read 4, write 4)"),))


@TRANSPORTS.register("bf16-allreduce")
class Bf16AllReduce(FloatAllReduce):
    name = "bf16-allreduce"
    kernels = ("cast", "float-pass")
    rounds = True
    summary = "ring all-reduce of bfloat16 gradients (16 bits up, 16 down)"
    dtype = torch.bfloat16
    bits = 16

    def wire_bytes(self, spec: PayloadSpec, workers: int) -> TransportBytes:
        # ideal: read fp32 g, write bf16; the update reads the bf16 sum. As run: the cast (read 4, write
        # 2), then the bf16 sum widened to float32 (read 2, write 4) and / N (read 4, write 4)
        return TransportBytes(pack=F32 + 2, unpack=0.0, aggregate=2.0,
                              pack_ops=(Op("cast", F32 + 2, "float32 gradient -> bfloat16"),),
                              unpack_ops=(Op("cast", 2 + F32, "bfloat16 sum -> float32"),
                                          stream(2 * F32, "/ N (read 4, write 4)")),
                              decoded=F32)
