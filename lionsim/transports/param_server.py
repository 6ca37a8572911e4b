"""param-server: workers push packed 1-bit votes to the server, which votes and sends the
result back (the server of Distributed Lion's Algorithm 1).

The push is 1 bit per parameter; the pull is the rule's code, ceil(log2 levels) bits (MaVo: 1
for odd N or under a tie rule that moves ties, 2 with sign(0) = 0 at even N; log2(N+1) for the
mean). On a step where some worker abstains (lionsim.transports.abstain, one 1-byte flag
all-reduce first) the push also carries the "voted" bitmap and the pull the rule's levels with
abstentions. On a real process group rank 0 is the server; the network model prices k servers
(Network.ps_servers) sharing the load.
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
from lionsim.transports.base import I8, TRANSPORTS, Transport, TransportBytes, section
from lionsim.transports.payloads import Payload, PayloadSpec

SERVER = 0


@TRANSPORTS.register("param-server")
class ParamServer(Transport):
    name = "param-server"
    kernels = ("pack-signs", "unpack-signs")
    carries = ("votes",)
    overlap = frozenset({PER_BUCKET, AFTER_BACKWARD})  # the server votes per coordinate: a bucket's push and reply stand alone
    summary = "push 1-bit votes to a parameter server, pull the voted result"

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        workers, rule = comm.world_size, payload.spec.rule
        with section(clock, "collective"):
            abstain = settle(payload, comm)
        spec = payload.spec
        bits, m = rule.bits_down(workers, abstain), packed_size(spec.numel)
        with section(clock, "encode"):
            packed = pack_signs(payload.values)  # [w, n/8]
            if abstain:  # signs, then where this worker voted
                packed = torch.cat([packed, pack_bools(voted_plane(payload.values))], -1)  # [w, 2n/8]
        with section(clock, "collective"):
            pushed = comm.gather(packed, root=SERVER)  # [W, n/8 or 2n/8] on the server
        codes = None
        if pushed is not None:
            with section(clock, "decode"):
                # counted on the packed words (lionsim.aggregators.bitslice): no [W, n] unpack
                voted = pushed[:, m:] if abstain else None
                vote_sum, voted_any = vote_sum_packed(pushed[:, :m], spec.numel, workers, voted)  # [n]
            with section(clock, "encode"):
                codes = pack_codes(rule.encode(vote_sum, workers, voted=voted_any, abstain=abstain), bits)
        with section(clock, "collective"):
            like = torch.empty(packed_size(spec.numel, bits), dtype=torch.uint8, device=packed.device)
            pulled = comm.broadcast(codes, root=SERVER, like=like)  # [w, n*bits/8]
        with section(clock, "decode"):
            return rule.decode(unpack_codes(pulled, spec.numel, bits), workers, abstain)

    def plan(self, spec: PayloadSpec, workers: int) -> list[CollectiveCall]:
        planes = 2 if spec.abstain else 1
        return [
            FLAG_CALL,
            CollectiveCall("ps_push", planes * packed_size(spec.numel), "votes", dtype="uint8"),
            CollectiveCall("ps_pull", packed_size(spec.numel, spec.rule.bits_down(workers, spec.abstain)), "result codes",
                           dtype="uint8"),
        ]

    def bits_per_param(self, spec: PayloadSpec, workers: int) -> tuple[float, float]:
        # the flag byte is per step, not per parameter: wire_bytes and comm_s count it
        return (2.0 if spec.abstain else 1.0), float(spec.rule.bits_down(workers, spec.abstain))

    def wire_bytes(self, spec: PayloadSpec, workers: int) -> TransportBytes:
        code = spec.rule.bits_down(workers) / 8
        # the server reads N pushes and writes codes; then the worker reads codes, writes int8 results
        return TransportBytes(pack=I8 + 1 / 8, unpack=workers / 8 + code + code + I8, aggregate=I8,
                              **self.kernel_ops(spec, workers))

    @staticmethod
    def kernel_ops(spec: PayloadSpec, workers: int) -> dict:
        """The GPU path's kernels on the server (aggregate above), whose work the step waits for: it
        packs its own votes, counts N pushes, encodes and packs the result, then unpacks it as
        every worker does."""
        rule, bits, n = spec.rule, spec.rule.bits_down(workers), workers
        signs, sign_ops = pack_signs_passes(I8)
        encode, encode_ops = rule.encode_passes(workers)
        codes, codes_ops = pack_codes_passes(bits, in_bytes=8)  # the rule's codes are int64
        unpacked, unpack_ops = unpack_bools_passes()
        codes_out, codes_out_ops = unpack_codes_passes(bits)
        decode, decode_ops = rule.decode_passes(workers)
        pack = (Op("pack-signs", signs, "int8 votes -> bits: > 0, int64 gather, >> 56, to uint8", sign_ops),
                Op("pack-codes", encode + codes, "the server: vote sums -> the rule's codes -> bits",
                   encode_ops + codes_ops))
        unpack = (Op("unpack-signs", n * unpacked + n + 4 + 16,
                     "the server: N pushes -> bools, summed to int32 (read N, write 4), x 2 - N", unpack_ops + 3),
                  Op("unpack-codes", codes_out + decode, "the pulled codes -> int64 -> the rule's float32 result",
                     codes_out_ops + decode_ops))
        return dict(pack_ops=pack, unpack_ops=unpack, decoded=4.0)
