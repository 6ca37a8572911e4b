"""pbit-allreduce: vote counts in p-bit fields packed into int32 words, summed by a
standard all-reduce (Lion Cub's "p-bit allreduce").

A worker's field holds 1 where it votes +1. Summed over N workers a field holds the count
of +1 votes, at most N, so p = ceil(log2(N+1)) bits never carry into the next field. Words
are int32 (which gloo and NCCL both sum) with floor(31/p) fields each: the sign bit is left
free so no sum ever wraps. (A prototype with two 4-bit fields per byte is only correct for
N <= 15 and misreads odd N; here S = 2*count - N and the rule decides, ties included.)
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.errors import LionsimError
from lionsim.network.calls import CollectiveCall
from lionsim.timing import Clock
from lionsim.transports.base import TRANSPORTS, Transport, ceil_div, section
from lionsim.transports.payloads import Payload, PayloadSpec


def field_bits(workers: int) -> int:
    """p: bits of a field that counts up to N votes."""
    return max(1, math.ceil(math.log2(workers + 1)))


def fields_per_word(workers: int) -> int:
    return 31 // field_bits(workers)


@TRANSPORTS.register("pbit-allreduce")
class PBitAllReduce(Transport):
    name = "pbit-allreduce"
    carries = ("votes",)
    summary = "all-reduce SUM of vote counts in ceil(log2(N+1))-bit fields of int32 words"

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        spec, workers = payload.spec, comm.world_size
        p, k = field_bits(workers), fields_per_word(workers)
        shifts = torch.arange(k, dtype=torch.int32, device=payload.values.device) * p
        with section(clock, "encode"):
            ones = (payload.values > 0).to(torch.int32)
            ones = torch.nn.functional.pad(ones, (0, (-spec.numel) % k))
            fields = ones.reshape(ones.shape[0], -1, k)  # [w, words, k]
            words = (fields << shifts).sum(-1, dtype=torch.int32)  # fields do not overlap
        with section(clock, "collective"):
            total = comm.all_reduce(words)  # [w, words]
        with section(clock, "decode"):
            counts = (total.unsqueeze(-1) >> shifts) & ((1 << p) - 1)  # [w, words, k]
            counts = counts.reshape(counts.shape[0], -1)[:, : spec.numel]
            return spec.rule.value(2 * counts - workers, workers)

    def plan(self, spec: PayloadSpec, workers: int) -> list[CollectiveCall]:
        words = ceil_div(spec.numel, fields_per_word(workers))
        return [CollectiveCall("all_reduce", 4 * words, "vote counts")]

    def bits_per_param(self, spec: PayloadSpec, workers: int) -> tuple[float, float]:
        bits = 32.0 / fields_per_word(workers)
        return bits, bits

    def check(self, spec: PayloadSpec, workers: int) -> None:
        super().check(spec, workers)
        if field_bits(workers) > 31:
            raise LionsimError(f"{self.name} cannot count {workers} workers in an int32 field")
