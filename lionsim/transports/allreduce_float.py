"""fp32-allreduce and bf16-allreduce: the gradient all-reduce of ordinary data parallelism.

bf16: each worker rounds its gradient to bfloat16 and the sum travels in bfloat16. The
simulator sums the rounded values in float32 and rounds the sum once; a real ring adds in
bf16 hop by hop, so real results differ from the simulator's by bf16 rounding of partial sums.
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.network.calls import CollectiveCall
from lionsim.timing import Clock
from lionsim.transports.base import F32, TRANSPORTS, Transport, TransportBytes, section
from lionsim.transports.payloads import Payload, PayloadSpec


class FloatAllReduce(Transport):
    carries = ("dense",)
    dtype: torch.dtype
    bits: int

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        with section(clock, "encode"):
            wire = payload.values.to(self.dtype)
        with section(clock, "collective"):
            total = comm.all_reduce(wire)
        with section(clock, "decode"):
            return total.float() / comm.world_size

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
        return TransportBytes(pack=0.0, unpack=0.0, aggregate=F32)  # the update divides the sum by N as it reads it


@TRANSPORTS.register("bf16-allreduce")
class Bf16AllReduce(FloatAllReduce):
    name = "bf16-allreduce"
    summary = "ring all-reduce of bfloat16 gradients (16 bits up, 16 down)"
    dtype = torch.bfloat16
    bits = 16

    def wire_bytes(self, spec: PayloadSpec, workers: int) -> TransportBytes:
        return TransportBytes(pack=F32 + 2, unpack=0.0, aggregate=2.0)  # read fp32 g, write bf16; update reads the bf16 sum
