"""pbit-allreduce: vote counts in p-bit fields packed into int32 words, summed by a
standard all-reduce (Lion Cub's "p-bit allreduce").

A worker's field holds 1 where it votes +1. Summed over N workers a field holds the count
of +1 votes, at most N, so p = ceil(log2(N+1)) bits never carry into the next field. Words
are int32 (which gloo and NCCL both sum) with floor(31/p) fields each: the sign bit is left
free so no sum ever wraps. (A prototype with two 4-bit fields per byte is only correct for
N <= 15 and misreads odd N; here S = 2*count - N and the rule decides, ties included.)

A field cannot tell a -1 from an abstention, so on a step where some worker abstains
(lionsim.transports.abstain, one 1-byte flag all-reduce first) a second plane of fields counts
the workers that voted: S = 2*count - voters, twice the words that step.
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
from lionsim.transports.abstain import FLAG_CALL, settle, voted_plane
from lionsim.transports.base import F32, I8, TRANSPORTS, Transport, TransportBytes, ceil_div, section, sum_bytes
from lionsim.transports.int32_fields import pack_words, unpack_words, word_shifts
from lionsim.transports.payloads import Payload, PayloadSpec


def field_bits(workers: int) -> int:
    """p: bits of a field that counts up to N votes."""
    return max(1, math.ceil(math.log2(workers + 1)))


def fields_per_word(workers: int) -> int:
    return 31 // field_bits(workers)


@TRANSPORTS.register("pbit-allreduce")
class PBitAllReduce(Transport):
    name = "pbit-allreduce"
    kernels = ("pack-codes", "unpack-codes")
    carries = ("votes",)
    overlap = frozenset({PER_BUCKET, AFTER_BACKWARD})  # a coordinate's packed count needs only that coordinate
    summary = "all-reduce SUM of vote counts in ceil(log2(N+1))-bit fields of int32 words"

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        workers = comm.world_size
        with section(clock, "collective"):
            abstain = settle(payload, comm)
        spec = payload.spec
        p = field_bits(workers)
        shifts = word_shifts(p, payload.values.device)
        pad = (-spec.numel) % shifts.numel()
        with section(clock, "encode"):
            planes = [payload.values > 0] + ([voted_plane(payload.values)] if abstain else [])
            ones = torch.cat([torch.nn.functional.pad(q.to(torch.int32), (0, pad)) for q in planes], -1)
            words = pack_words(ones, shifts)  # each plane whole words
        with section(clock, "collective"):
            total = comm.all_reduce(words)  # [w, words]
        with section(clock, "decode"):
            counts = unpack_words(total, shifts, p)
            counts = counts.reshape(counts.shape[0], len(planes), -1)[..., : spec.numel]  # [w, planes, n]
            if not abstain:
                return spec.rule.result(2 * counts[:, 0] - workers, workers)
            plus, voters = counts[:, 0], counts[:, 1]
            return spec.rule.result(2 * plus - voters, workers, voted=voters > 0)

    def plan(self, spec: PayloadSpec, workers: int) -> list[CollectiveCall]:
        words = ceil_div(spec.numel, fields_per_word(workers)) * (2 if spec.abstain else 1)
        return [FLAG_CALL, CollectiveCall("all_reduce", 4 * words, "vote counts", dtype="int32")]

    def bits_per_param(self, spec: PayloadSpec, workers: int) -> tuple[float, float]:
        bits = 32.0 / fields_per_word(workers) * (2 if spec.abstain else 1)
        return bits, bits

    def bits_note(self, spec: PayloadSpec, workers: int) -> str:
        p, k = field_bits(workers), fields_per_word(workers)
        bits = f"{self.bits_per_param(spec, workers)[0]:.3g} bits"
        if spec.abstain:  # a second plane counts who voted (module doc)
            bits = f"twice 32/{k}, {bits}, with abstentions"
        else:
            bits = f"32/{k} = {bits}"
        return f"vote counts to {workers} need {p}-bit fields (ceil(log2(N + 1))), {k} to an int32 word: {bits}"

    def check(self, spec: PayloadSpec, workers: int) -> None:
        super().check(spec, workers)
        if field_bits(workers) > 31:
            raise LionsimError(f"{self.name} cannot count {workers} workers in an int32 field")

    def wire_bytes(self, spec: PayloadSpec, workers: int) -> TransportBytes:
        word = F32 / fields_per_word(workers)  # int32 word bytes per parameter
        s = sum_bytes(workers)
        value, value_ops = spec.rule.value_passes(F32)
        # as run (aggregate above), per parameter: votes > 0 (read 1, write 1), to int32 (1, 4), the pad
        # and the cat of the planes (each copies: 4, 4), << the field shifts (4, 4), the sum into
        # words (read 4, write a word's share); back: >> (a word's share, 4), & mask (4, 4), 2 * count
        # and - N (each 4, 4), then the rule's float32 result
        pack_ops = (Op("pack-codes", 2 + 5 + 8 + 8 + 8 + 4 + word, "votes -> int32 fields -> summed into words", 6),)
        unpack_ops = (Op("unpack-codes", word + 4 + 8 + 8 + 8, "words -> each field's count -> 2 x count - N", 4),
                      Op("float-pass", value, "the vote rule's float32 result", value_ops))
        return TransportBytes(pack=I8 + word, unpack=word + s, aggregate=s,  # votes -> fields; words -> counts
                              pack_ops=pack_ops, unpack_ops=unpack_ops, decoded=F32)
