"""int8-allreduce: the paper's "int8 container" (Liu et al. 2024, section 5).

Votes (+/-1) or small levels are cast to a signed integer container and summed by a
standard ring all-reduce; every worker then applies the rule to the exact sum. The
container is int8 while N * max_level <= 127, then widened straight to int32 so that the sum
can never overflow (the paper's int8 trick alone breaks past 127 workers). Never int16:
neither gloo nor NCCL reduces it. The wire bytes and bits per parameter follow the dtype
actually sent (4 bytes per element once widened).
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.network.calls import CollectiveCall
from lionsim.timing import Clock
from lionsim.transports.base import TRANSPORTS, Transport, section
from lionsim.transports.payloads import Payload, PayloadSpec, container_dtype


@TRANSPORTS.register("int8-allreduce")
class Int8AllReduce(Transport):
    name = "int8-allreduce"
    carries = ("votes", "levels")
    summary = "ring all-reduce SUM of votes in an int8 container (int32 past 127 workers)"

    @staticmethod
    def container(spec: PayloadSpec, workers: int) -> torch.dtype:
        return container_dtype(workers * spec.max_level)

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        spec, workers = payload.spec, comm.world_size
        with section(clock, "encode"):
            wire = payload.values.to(self.container(spec, workers))
        with section(clock, "collective"):
            total = comm.all_reduce(wire)
        with section(clock, "decode"):
            if spec.kind == "votes":
                return spec.rule.value(total, workers)
            return total.to(torch.float32)  # levels: the strategy applies its own rule to the sum

    def plan(self, spec: PayloadSpec, workers: int) -> list[CollectiveCall]:
        nbytes = spec.numel * self.container(spec, workers).itemsize
        return [CollectiveCall("all_reduce", nbytes, spec.kind)]

    def bits_per_param(self, spec: PayloadSpec, workers: int) -> tuple[float, float]:
        bits = 8.0 * self.container(spec, workers).itemsize
        return bits, bits
