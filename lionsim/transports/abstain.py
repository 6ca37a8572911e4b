"""Abstentions on a wire: how a vote transport learns and carries that a worker voted 0.

A 1-bit sign cannot say "no vote", and a coordinate whose c is exactly zero (a parameter no
batch has touched) must not be pushed by a made-up -1. So each step starts with one 1-byte
MAX all-reduce of a flag, "some worker holds a zero vote". Only on flagged steps does the
payload grow a second plane, the "voted" bitmap (1 bit per parameter per worker) or its count,
and the downlink its third level. The step's spec records the flag so the network model and
`wire_bytes` price exactly what was sent.

Cost: every step, one all-reduce of 1 byte (latency only: about log2(N) alpha); on flagged
steps, 1 more bit per parameter up (a2a-1bit, allgather-1bit, param-server), a second p-bit
plane (pbit-allreduce), or a second container plane (int8-allreduce, only when the tie rule
must tell "nobody voted" from a tie; sign(0) = 0 needs no flag there at all).
"""

from __future__ import annotations

from dataclasses import replace

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.network.calls import CollectiveCall
from lionsim.transports.base import Transport, bits_on
from lionsim.transports.payloads import Payload, PayloadSpec

FLAG_CALL = CollectiveCall("all_reduce", 1, "abstain flag", dtype="uint8")
"""The per-step flag: one uint8 all-reduce (MAX)."""


def settle(payload: Payload, comm: Comm) -> bool:
    """Whether any worker abstains anywhere this step (one MAX all-reduce of a byte);
    records it on payload.spec, which the step is priced by."""
    local = (payload.values == 0).any(-1, keepdim=True).to(torch.uint8)  # [w, 1]
    flag = bool(comm.all_reduce(local, op="max")[0, 0])
    payload.spec = replace(payload.spec, abstain=flag)
    return flag


def voted_plane(values: Tensor) -> Tensor:
    """bool [w, n]: where each worker cast a vote."""
    return values != 0


def abstention_note(label: str, transport: Transport, specs: list[PayloadSpec | None], params: int, workers: int,
                    workers_per_node: int = 1) -> str:
    """bench's line under its table for run `label`, whose steps were priced by `specs` (None: a
    step that sent nothing), where a payload held a 0 on some steps: the transport carried those as
    abstentions, a bitmap (or plane) more up that the bits column averages in and nothing else names
    ("" where no step did, or where the wire carries a 0 for nothing: int8's container). A vote
    abstains by design (docs/decisions.md): a parameter no batch of a worker's has touched, such as
    the embedding row of a token it has not seen, so its line says where its zeros come from;
    another payload's 0 is its encode's sign(0), so its line says how to avoid the bitmap."""
    sent = [spec for spec in specs if spec is not None]
    hit = [spec for spec in sent if spec.abstain]
    if not hit or workers < 2:
        return ""
    spec = hit[0]
    more = bits_on(transport, spec, workers, workers_per_node)[0] - bits_on(
        transport, replace(spec, abstain=False), workers, workers_per_node)[0]
    more *= spec.numel / params  # per parameter of the model, as the bits column counts
    if more <= 0:
        return ""
    bits = f"+{more:.3g} bit{'' if f'{more:.3g}' == '1' else 's'}"
    if spec.kind == "votes":
        return (f"{label}: on {len(hit)} of {len(sent)} steps some worker abstained (a 0 vote: a parameter its "
                f"batches had not touched yet, such as an unseen token's embedding row), which {transport.name} "
                f"carries by marking who voted: {bits} up per parameter on those steps (docs/decisions.md)")
    advice = "; map sign(0) to +1 in encode where a 0 means nothing" if spec.kind == "scaled-signs" else ""
    return (f"{label}: {len(hit)} of {len(sent)} steps sent a 0 among the {spec.kind} values, which "
            f"{transport.name} carries as an abstention (a bitmap of who sent a nonzero: {bits} up per parameter "
            f"on those steps){advice}")
