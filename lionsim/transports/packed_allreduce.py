"""packed-allreduce: small signed levels in unsigned p-bit fields of int32 words, summed by a
standard all-reduce (Lion Cub's ternary "4-bit" all-reduce).

A worker's field holds level + L in [0, 2L] (L = max_level); summed over N workers a field
holds at most 2NL, so p = ceil(log2(2NL + 1)) bits never carry into the next field, and the
decoded sum is field - NL. For ternary levels (L = 1) that is 4 bits while 2N <= 15, i.e.
N <= 7 (the authors' 4-bit format, which maps -1 -> 0 and 0, 1 -> 1 and so loses the zeros);
past N = 7 the fields widen (5 bits to N = 15, 6 to N = 31, ...), never overflow. p is at
least 4: the Lion Cub format. Words are int32 (gloo and NCCL both sum it) with floor(31/p)
fields: the sign bit stays free so no sum wraps, 7 fields a word at p = 4 (4.57 bits per
parameter). Exact: the same sums as int8-allreduce.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.compute.kernel_ops import Op
from lionsim.errors import LionsimError
from lionsim.network.calls import CollectiveCall
from lionsim.schedules import AFTER_BACKWARD, PER_BUCKET
from lionsim.timing import Clock
from lionsim.transports.base import F32, I8, TRANSPORTS, Transport, TransportBytes, ceil_div, section
from lionsim.transports.int32_fields import pack_words, unpack_words, word_shifts
from lionsim.transports.payloads import Payload, PayloadSpec, container_dtype


def field_bits(max_level: int, workers: int) -> int:
    """p: bits of a field that holds the sum of N offset levels, 2NL at most (4 at least)."""
    return max(4, math.ceil(math.log2(2 * workers * max_level + 1)))


@TRANSPORTS.register("packed-allreduce")
class PackedAllReduce(Transport):
    name = "packed-allreduce"
    kernels = ("pack-codes", "unpack-codes")
    carries = ("levels",)
    overlap = frozenset({PER_BUCKET, AFTER_BACKWARD})  # a coordinate's packed levels sum on their own
    summary = "all-reduce SUM of offset levels in p-bit fields of int32 words (4-bit ternary to N = 7, wider past)"

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        spec, workers = payload.spec, comm.world_size
        self.check(spec, workers)
        p = field_bits(spec.max_level, workers)
        shifts = word_shifts(p, payload.values.device)
        with section(clock, "encode"):
            offset = payload.values.to(torch.int32) + spec.max_level  # [w, n] in [0, 2L]
            offset = torch.nn.functional.pad(offset, (0, (-spec.numel) % shifts.numel()))
            words = pack_words(offset, shifts)
        with section(clock, "collective"):
            total = comm.all_reduce(words)  # [w, words]
        with section(clock, "decode"):
            fields = unpack_words(total, shifts, p)[:, : spec.numel]
            return (fields - workers * spec.max_level).to(torch.float32)

    def plan(self, spec: PayloadSpec, workers: int) -> list[CollectiveCall]:
        words = ceil_div(spec.numel, 31 // field_bits(spec.max_level, workers))
        return [CollectiveCall("all_reduce", 4 * words, "packed levels", dtype="int32")]

    def bits_per_param(self, spec: PayloadSpec, workers: int) -> tuple[float, float]:
        bits = 32.0 / (31 // field_bits(spec.max_level, workers))
        return bits, bits

    def bits_note(self, spec: PayloadSpec, workers: int) -> str:
        p = field_bits(spec.max_level, workers)
        return (f"levels to {spec.max_level} summed over {workers} workers need {p}-bit fields "
                f"(ceil(log2(2NL + 1)), 4 at least), {31 // p} to an int32 word: 32/{31 // p} = "
                f"{self.bits_per_param(spec, workers)[0]:.3g} bits")

    def check(self, spec: PayloadSpec, workers: int) -> None:
        super().check(spec, workers)
        if field_bits(spec.max_level, workers) > 31:
            raise LionsimError(f"{self.name} cannot hold {workers} workers' levels up to {spec.max_level} "
                               f"in an int32 field; use int8-allreduce")

    def wire_bytes(self, spec: PayloadSpec, workers: int) -> TransportBytes:
        word = F32 / (31 // field_bits(spec.max_level, workers))  # int32 word bytes per parameter
        s = float(container_dtype(workers * spec.max_level).itemsize)
        # as run (aggregate above), per parameter: to int32 (read 1, write 4), + L, the pad, << the
        # field shifts (each 4, 4), the sum into words (read 4, write a word's share); back: >> (a
        # word's share, 4), & mask, - N L, to float32 (each 4, 4)
        pack_ops = (Op("pack-codes", 5 + 8 + 8 + 8 + 4 + word, "levels -> offset int32 fields -> summed into words", 5),)
        unpack_ops = (Op("unpack-codes", word + 4 + 8 + 8 + 8, "words -> each field's sum -> float32", 4),)
        return TransportBytes(pack=I8 + word, unpack=word + s, aggregate=s,  # levels -> fields; words -> sums
                              pack_ops=pack_ops, unpack_ops=unpack_ops, decoded=F32)
