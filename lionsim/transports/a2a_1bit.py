"""a2a-1bit: the two-phase 1-bit all-reduce of Lion Cub (and of DeepSpeed 1-bit Adam's
compressed all-reduce, without error feedback).

    1. pack signs 8 per byte and split them into N chunks; all-to-all, so worker i holds
       chunk i of every worker's votes;
    2. worker i sums its chunk's votes and applies the rule (vote or mean);
    3. re-pack the chunk's result in ceil(log2 levels) bits (1 bit for MaVo with odd N,
       2 with even N to keep ties, log2(N+1) for the mean) and all-gather it.

Traffic per worker about 2(N-1)/N * n/8 bytes for MaVo with odd N: flat in N. Chunks are
padded to whole bytes: n is rounded up to a multiple of 8N.
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.network.calls import CollectiveCall
from lionsim.packing import pack_codes, pack_signs, packed_size, unpack_codes, unpack_signs
from lionsim.timing import Clock
from lionsim.transports.base import TRANSPORTS, Transport, ceil_div, section
from lionsim.transports.payloads import Payload, PayloadSpec


def chunk_params(numel: int, workers: int) -> int:
    """Parameters per chunk: n split N ways, rounded up to whole bytes."""
    return 8 * ceil_div(numel, 8 * workers)


@TRANSPORTS.register("a2a-1bit")
class AllToAll1Bit(Transport):
    name = "a2a-1bit"
    carries = ("votes",)
    summary = "two-phase 1-bit all-reduce: all-to-all of packed votes, vote per chunk, all-gather"

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        spec, workers, rule = payload.spec, comm.world_size, payload.spec.rule
        chunk = chunk_params(spec.numel, workers)
        bits = rule.bits_down(workers)
        with section(clock, "encode"):
            votes = payload.values
            pad = chunk * workers - spec.numel
            if pad:
                votes = torch.nn.functional.pad(votes, (0, pad), value=1)
            packed = pack_signs(votes).reshape(votes.shape[0], workers, chunk // 8)  # [w, W, c/8]
        with section(clock, "collective"):
            mine = comm.all_to_all(packed)  # [w, W, c/8]: my chunk from every worker
        with section(clock, "decode"):
            vote_sum = unpack_signs(mine, chunk, torch.int8).sum(1, dtype=torch.int32)  # [w, c]
        with section(clock, "encode"):
            codes = pack_codes(rule.encode(vote_sum, workers), bits)  # [w, c*bits/8]
        with section(clock, "collective"):
            everyone = comm.all_gather(codes)  # [w, W, c*bits/8]
        with section(clock, "decode"):
            result = rule.decode(unpack_codes(everyone, chunk, bits), workers)  # [w, W, c]
            return result.reshape(result.shape[0], -1)[:, : spec.numel]

    def plan(self, spec: PayloadSpec, workers: int) -> list[CollectiveCall]:
        chunk = chunk_params(spec.numel, workers)
        bits = spec.rule.bits_down(workers)
        return [
            CollectiveCall("all_to_all", workers * chunk // 8, "votes"),
            CollectiveCall("all_gather", workers * packed_size(chunk, bits), "voted"),
        ]

    def bits_per_param(self, spec: PayloadSpec, workers: int) -> tuple[float, float]:
        return 1.0, float(spec.rule.bits_down(workers))
