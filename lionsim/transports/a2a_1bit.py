"""a2a-1bit: the two-phase 1-bit all-reduce of Lion Cub (and of DeepSpeed 1-bit Adam's
compressed all-reduce, without error feedback).

    1. pack signs 8 per byte and split them into N chunks; all-to-all, so worker i holds
       chunk i of every worker's votes;
    2. worker i sums its chunk's votes and applies the rule (vote or mean, ties included);
    3. re-pack the chunk's result in ceil(log2 levels) bits (MaVo: 1 bit for odd N or under a
       tie rule that moves ties, 2 with sign(0) = 0 at even N; log2(N+1) for the mean) and
       all-gather it.

On a step where some worker abstains (lionsim.transports.abstain, one 1-byte flag all-reduce
first) phase 1 also carries each worker's "voted" bitmap (2 bits per parameter) and phase 3
the rule's levels with abstentions (MaVo 2 bits, the mean ceil(log2(2N+1))).

Traffic per worker about 2(N-1)/N * n/8 bytes for MaVo with 1 bit down: flat in N. Chunks are
padded to whole bytes: n is rounded up to a multiple of 8N.
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.aggregators.bitslice import vote_sum_packed
from lionsim.backends import Comm
from lionsim.network.calls import CollectiveCall
from lionsim.compute.kernel_ops import Op
from lionsim.packing import (pack_bools, pack_codes, pack_codes_passes, pack_signs, pack_signs_passes, packed_size,
                             unpack_bools_passes, unpack_codes, unpack_codes_passes)
from lionsim.schedules import AFTER_BACKWARD, PER_BUCKET
from lionsim.timing import Clock
from lionsim.transports.abstain import FLAG_CALL, settle, voted_plane
from lionsim.transports.base import I8, TRANSPORTS, Transport, TransportBytes, ceil_div, section, sum_bytes
from lionsim.transports.payloads import Payload, PayloadSpec


def chunk_params(numel: int, workers: int) -> int:
    """Parameters per chunk: n split N ways, rounded up to whole bytes."""
    return 8 * ceil_div(numel, 8 * workers)


@TRANSPORTS.register("a2a-1bit")
class AllToAll1Bit(Transport):
    name = "a2a-1bit"
    kernels = ("pack-signs", "unpack-signs")
    carries = ("votes",)
    overlap = frozenset({PER_BUCKET, AFTER_BACKWARD})  # the vote is per coordinate: a bucket's two phases give that bucket's votes
    summary = "two-phase 1-bit all-reduce: all-to-all of packed votes, vote per chunk, all-gather"

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        workers, rule = comm.world_size, payload.spec.rule
        with section(clock, "collective"):
            abstain = settle(payload, comm)
        spec = payload.spec
        chunk = chunk_params(spec.numel, workers)
        bits = rule.bits_down(workers, abstain)
        with section(clock, "encode"):
            votes = payload.values
            pad = chunk * workers - spec.numel
            if pad:  # padding votes +1, so it never abstains; it is cut off at the end
                votes = torch.nn.functional.pad(votes, (0, pad), value=1)
            packed = pack_signs(votes).reshape(votes.shape[0], workers, chunk // 8)  # [w, W, c/8]
            if abstain:  # each chunk's signs, then where this worker voted in it
                voted = pack_bools(voted_plane(votes)).reshape(votes.shape[0], workers, chunk // 8)
                packed = torch.cat([packed, voted], -1)  # [w, W, c/4]
        with section(clock, "collective"):
            mine = comm.all_to_all(packed)  # [w, W, c/8 or c/4]: my chunk from every worker
        with section(clock, "decode"):
            # counted on the packed words (lionsim.aggregators.bitslice): no [w, W, c] unpack
            voted = mine[..., chunk // 8 :] if abstain else None
            vote_sum, voted_any = vote_sum_packed(mine[..., : chunk // 8], chunk, workers, voted)  # [w, c]
            owner = comm.first_worker + torch.arange(vote_sum.shape[0], device=vote_sum.device)
            index = owner[:, None] * chunk + torch.arange(chunk, device=vote_sum.device)  # [w, c]
        with section(clock, "encode"):
            codes = rule.encode(vote_sum, workers, voted=voted_any, index=index, abstain=abstain)
            codes = pack_codes(codes, bits)  # [w, c*bits/8]
        with section(clock, "collective"):
            everyone = comm.all_gather(codes)  # [w, W, c*bits/8]
        with section(clock, "decode"):
            result = rule.decode(unpack_codes(everyone, chunk, bits), workers, abstain)  # [w, W, c]
            return result.reshape(result.shape[0], -1)[:, : spec.numel]

    def plan(self, spec: PayloadSpec, workers: int) -> list[CollectiveCall]:
        chunk = chunk_params(spec.numel, workers)
        bits = spec.rule.bits_down(workers, spec.abstain)
        planes = 2 if spec.abstain else 1
        return [
            FLAG_CALL,
            CollectiveCall("all_to_all", planes * workers * chunk // 8, "votes", dtype="uint8"),
            CollectiveCall("all_gather", workers * packed_size(chunk, bits), "result codes", dtype="uint8"),
        ]

    def bits_per_param(self, spec: PayloadSpec, workers: int) -> tuple[float, float]:
        # the flag byte is per step, not per parameter: wire_bytes and comm_s count it
        return (2.0 if spec.abstain else 1.0), float(spec.rule.bits_down(workers, spec.abstain))

    def wire_bytes(self, spec: PayloadSpec, workers: int) -> TransportBytes:
        bits = spec.rule.bits_down(workers)
        s = sum_bytes(workers)
        # phase 1 packs all votes (read 1, write 1/8); phase 2 packs my chunk's n/N sums into codes
        pack = I8 + 1 / 8 + (s + bits / 8) / workers
        # phase 1 reads N workers' bits of my chunk (n/8 in all) and writes its sums; phase 2 reads
        # every chunk's codes and writes the int8 results
        unpack = 1 / 8 + s / workers + bits / 8 + I8
        return TransportBytes(pack=pack, unpack=unpack, aggregate=I8, **self.kernel_ops(spec, workers))

    @staticmethod
    def kernel_ops(spec: PayloadSpec, workers: int) -> dict:
        """The GPU path's kernels (aggregate above, lionsim.packing's reference paths), per parameter
        of one worker; phase 2 works on a chunk of n/N, so its terms are / N."""
        rule, bits, n = spec.rule, spec.rule.bits_down(workers), workers
        signs, sign_ops = pack_signs_passes(I8)
        codes, codes_ops = pack_codes_passes(bits, in_bytes=8)  # the rule's codes are int64
        encode, encode_ops = rule.encode_passes(workers)
        pack = [Op("pack-signs", signs, "int8 votes -> bits: > 0, int64 gather, >> 56, to uint8", sign_ops),
                Op("pack-codes", (encode + codes) / n, "my chunk's vote sums -> the rule's codes -> bits",
                   encode_ops + codes_ops)]
        if spec.numel % (8 * workers):  # chunks padded to whole bytes: F.pad copies the votes
            pack.insert(0, Op("cast", 2 * I8, "pad the int8 votes to a multiple of 8N (read 1, write 1)"))
        unpacked, unpack_ops = unpack_bools_passes()
        codes_out, codes_out_ops = unpack_codes_passes(bits)
        decode, decode_ops = rule.decode_passes(workers)
        unpack = (Op("unpack-signs", unpacked + I8 + 20 / n,
                     "N workers' bits of my chunk -> bools, summed to int32 (read 1, write 4/N), x 2 - N",
                     unpack_ops + 3),
                  Op("float-pass", 24 / n, "the chunk's coordinates for the tie rules (arange, + offset: int64)", 2),
                  Op("unpack-codes", codes_out + decode, "every chunk's codes -> int64 -> the rule's float32 result",
                     codes_out_ops + decode_ops))
        return dict(pack_ops=tuple(pack), unpack_ops=unpack, decoded=4.0)
