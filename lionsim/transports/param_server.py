"""param-server: workers push packed 1-bit votes to the server, which votes and sends the
result back (the server of Distributed Lion's Algorithm 1).

The push is 1 bit per parameter; the pull is the rule's code, ceil(log2 levels) bits (1 for
MaVo with odd N, 2 with even N, log2(N+1) for the mean). On a real process group rank 0
is the server; the network model prices k servers (Network.ps_servers) sharing the load.
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.network.calls import CollectiveCall
from lionsim.packing import pack_codes, pack_signs, packed_size, unpack_codes, unpack_signs
from lionsim.timing import Clock
from lionsim.transports.base import TRANSPORTS, Transport, section
from lionsim.transports.payloads import Payload, PayloadSpec

SERVER = 0


@TRANSPORTS.register("param-server")
class ParamServer(Transport):
    name = "param-server"
    carries = ("votes",)
    summary = "push 1-bit votes to a parameter server, pull the voted result"

    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        spec, workers, rule = payload.spec, comm.world_size, payload.spec.rule
        bits = rule.bits_down(workers)
        with section(clock, "encode"):
            packed = pack_signs(payload.values)  # [w, n/8]
        with section(clock, "collective"):
            pushed = comm.gather(packed, root=SERVER)  # [W, n/8] on the server
        codes = None
        if pushed is not None:
            with section(clock, "decode"):
                vote_sum = unpack_signs(pushed, spec.numel, torch.int8).sum(0, dtype=torch.int32)
            with section(clock, "encode"):
                codes = pack_codes(rule.encode(vote_sum, workers), bits)
        with section(clock, "collective"):
            like = torch.empty(packed_size(spec.numel, bits), dtype=torch.uint8, device=packed.device)
            pulled = comm.broadcast(codes, root=SERVER, like=like)  # [w, n*bits/8]
        with section(clock, "decode"):
            return rule.decode(unpack_codes(pulled, spec.numel, bits), workers)

    def plan(self, spec: PayloadSpec, workers: int) -> list[CollectiveCall]:
        return [
            CollectiveCall("ps_push", packed_size(spec.numel), "votes"),
            CollectiveCall("ps_pull", packed_size(spec.numel, spec.rule.bits_down(workers)), "voted"),
        ]

    def bits_per_param(self, spec: PayloadSpec, workers: int) -> tuple[float, float]:
        return 1.0, float(spec.rule.bits_down(workers))
