"""int8-allreduce: the paper's "int8 container" (Liu et al. 2024, section 5).

Votes (+/-1) or small levels are cast to a signed integer container and summed by a
standard ring all-reduce; every worker then applies the rule to the exact sum. The
container is int8 while N * max_level <= 127, then widened straight to int32 so that the sum
can never overflow (the paper's int8 trick alone breaks past 127 workers). Never int16:
neither gloo nor NCCL reduces it. The wire bytes and bits per parameter follow the dtype
actually sent (4 bytes per element once widened).

A zero vote (an abstention) sums as 0, so sign(0) = 0 and the mean need nothing more. A tie rule
that moves ties must tell a tie from "nobody voted": then the step starts with the 1-byte flag
all-reduce (lionsim.transports.abstain) and, on flagged steps, a second plane in the same
all-reduce counts the voters.
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.compute.kernel_ops import Op
from lionsim.network.calls import CollectiveCall
from lionsim.schedules import AFTER_BACKWARD, PER_BUCKET
from lionsim.timing import Clock
from lionsim.transports.abstain import FLAG_CALL, settle, voted_plane
from lionsim.transports.base import I8, TRANSPORTS, Transport, TransportBytes, section
from lionsim.transports.payloads import Payload, PayloadSpec, container_dtype


@TRANSPORTS.register("int8-allreduce")
class Int8AllReduce(Transport):
    name = "int8-allreduce"
    kernels = ("cast", "float-pass")
    carries = ("votes", "levels")
    overlap = frozenset({PER_BUCKET, AFTER_BACKWARD})  # a coordinate's sum needs only that coordinate
    summary = "ring all-reduce SUM of votes in an int8 container (int32 past 127 workers)"

    @staticmethod
    def container(spec: PayloadSpec, workers: int) -> torch.dtype:
        return container_dtype(workers * spec.max_level)

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        workers = comm.world_size
        abstain = False
        if self.flags(payload.spec):
            with section(clock, "collective"):
                abstain = settle(payload, comm)
        spec = payload.spec
        with section(clock, "encode"):
            wire = payload.values.to(self.container(spec, workers))
            if abstain:  # votes, then where each worker voted: the sum counts the voters
                wire = torch.cat([wire, voted_plane(payload.values).to(wire.dtype)], -1)  # [w, 2n]
        with section(clock, "collective"):
            total = comm.all_reduce(wire)
        with section(clock, "decode"):
            if spec.kind == "levels":
                return total.to(torch.float32)  # the strategy applies its own rule to the sum
            if abstain:
                return spec.rule.result(total[:, : spec.numel], workers, voted=total[:, spec.numel :] > 0)
            return spec.rule.result(total, workers)

    @staticmethod
    def flags(spec: PayloadSpec) -> bool:
        """Whether this payload needs the abstention flag (votes under a tie-moving rule)."""
        return spec.kind == "votes" and spec.rule.needs_voted

    def plan(self, spec: PayloadSpec, workers: int) -> list[CollectiveCall]:
        planes = 2 if spec.abstain else 1
        nbytes = planes * spec.numel * self.container(spec, workers).itemsize
        return ([FLAG_CALL] if self.flags(spec) else []) + [CollectiveCall("all_reduce", nbytes, spec.kind, dtype=str(self.container(spec, workers)).removeprefix("torch."))]

    def bits_per_param(self, spec: PayloadSpec, workers: int) -> tuple[float, float]:
        bits = 8.0 * self.container(spec, workers).itemsize * (2 if spec.abstain else 1)
        return bits, bits

    def footnote(self, spec: PayloadSpec, workers: int, workers_per_node: int = 1) -> str:
        """Past 127 / max_level workers the sums no longer fit int8 and the container is int32. The
        line names no payload kind: votes and levels widen alike, so runs of both share one line."""
        dtype = self.container(spec, workers)
        if workers < 2 or dtype == torch.int8:
            return ""
        widens = torch.iinfo(torch.int8).max // spec.max_level + 1
        bits = self.bits_per_param(spec, workers)[0]
        return (f"{self.name} sends {str(dtype).removeprefix('torch.')} ({bits:g} bits per parameter) from "
                f"{widens} workers on: a sum of {widens} workers' values (each of size at most {spec.max_level}) "
                "overflows int8, and neither NCCL nor gloo reduces int16.")

    def wire_bytes(self, spec: PayloadSpec, workers: int) -> TransportBytes:
        c = float(self.container(spec, workers).itemsize)
        pack = 0.0 if c == I8 else I8 + c  # int8 votes are already the container; wider ones are a cast
        # as run: the cast where the container is wider (int8 to int8 launches nothing); after the sum,
        # levels become float32 (read c, write 4) and votes the rule's float32 result (sign, mean)
        pack_ops = () if c == I8 else (Op("cast", I8 + c, f"int8 -> the {int(c)}-byte container"),)
        if spec.kind == "levels":
            unpack_ops = (Op("cast", c + 4, "the summed levels -> float32"),)
        else:
            value, ops = spec.rule.value_passes(c)
            unpack_ops = (Op("float-pass", value, "the vote rule's float32 result from the sum", ops),)
        return TransportBytes(pack=pack, unpack=0.0, aggregate=c, pack_ops=pack_ops, unpack_ops=unpack_ops, decoded=4.0)
