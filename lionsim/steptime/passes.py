"""Encode, decode and update as memory-bound passes: bytes each moves per parameter.

On an accelerator these elementwise kernels are limited by memory bandwidth, not FLOPs: a
pass that reads and writes B bytes per parameter over P parameters takes
`compute.memory_pass_time(B * P, device)`. lionsim counts every input read once and every
output written once (one ideal fused kernel per pass), and keeps the three passes apart as
the step template runs them (lionsim.engine):

    encode = the strategy's local rule (reads the gradient and its state, writes its state
             and the payload) + the transport's packing into the wire format
    decode = the transport's unpacking of what arrived into the aggregate the update reads
    update = the strategy's update (reads the replica and its state, writes them) + one read
             of the aggregate; a vote rule (sign, mean) is applied as the update reads it
    a strategy that takes local steps (Strategy.local_step_bytes): its inner step is the
             update's on every step, a sync's too, as training books it (LocalSteps.inner_step)

What each strategy's own rule and update move is declared in its module (Strategy.bytes), each transport's
packing in its module (Transport.wire_bytes). Parameters, gradients and optimizer state are float32 (4 bytes);
votes, levels and signs are int8 (1 byte); sums of votes are the narrowest integer that holds them (int8 up to 127
workers). Terms below 1/n per parameter (per-tensor scales, chunk padding) are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from lionsim.errors import LionsimError
from lionsim.steptime.strategy_bytes import StrategyBytes
from lionsim.steptime.undeclared import no_bytes, no_local_step_bytes
from lionsim.steptime.wire_passes import F32, I8, TransportBytes, transport_bytes
from lionsim.transports import PAYLOAD_KINDS, PayloadSpec

__all__ = ["F32", "I8", "NO_SYNC",
           "PassBytes", "StrategyBytes", "SyncCopy", "TransportBytes", "pass_bytes", "payload_bytes", "sync_copy", "transport_bytes"]


def payload_bytes(spec: PayloadSpec) -> float:
    """Bytes per parameter the local rule writes as the payload, as its kind declares (PAYLOAD_KINDS:
    a dense gradient is sent in place, a sparse one writes its pairs, the rest a byte each)."""
    return PAYLOAD_KINDS.get(spec.kind).written(spec)


@dataclass(frozen=True, slots=True)
class PassBytes:
    """Bytes per parameter of one step's three memory-bound passes."""

    encode: float
    decode: float
    update: float


@dataclass(frozen=True, slots=True)
class SyncCopy:
    """One worker's copy of a momentum sync (lionsim.strategies.core.momentum_sync.MomentumSyncing): a pass of
    its own, since it runs after the sync's all-reduce and no other pass can fuse with it."""

    nbytes: float
    """Bytes read and written in all (not per parameter: only the synced tensors are copied)."""
    kernels: int


NO_SYNC = SyncCopy(0.0, 0)


def sync_copy(synced: int, params: int) -> SyncCopy:
    """The copy of a momentum sync of `synced` of a model's `params` parameters.

    Every tensor synced: the all-reduce runs in place on the flat momentum, then one kernel
    divides it by N (reads m, writes m). A selection is gathered into a flat send buffer (reads
    m, writes the buffer), then scattered back divided by N (reads the buffer, writes m).
    """
    if synced == 0:
        return NO_SYNC
    if synced == params:
        return SyncCopy(2 * F32 * synced, 1)
    return SyncCopy(4 * F32 * synced, 2)


class DeclaresBytes(Protocol):
    """What a strategy class declares about its own kernels (lionsim.strategies.core.base.Strategy):
    the step-time model reads the declaration it is handed and looks up no strategy by name, so
    it sits below the strategies that import StrategyBytes from it."""

    name: str
    bytes: StrategyBytes | None
    local_step_bytes: StrategyBytes | None


def pass_bytes(strategy: DeclaresBytes, transport: str, spec: PayloadSpec, workers: int, workers_per_node: int = 1,
               local: bool = False) -> PassBytes:
    """Bytes per parameter that `strategy` (its class) over `transport` moves in each pass (see
    the module doc).

    A lone worker sends nothing: its own payload is the aggregate, so no pack or unpack. A
    local step (`local`: local SGD or DiLoCo between syncs) runs the inner step alone.
    """
    cls = strategy
    if local:
        if cls.local_step_bytes is None:
            raise LionsimError(no_local_step_bytes(cls))
        return PassBytes(encode=0.0, decode=0.0, update=cls.local_step_bytes)  # the inner optimizer's step
    if cls.bytes is None:
        raise LionsimError(no_bytes(cls))
    own = cls.bytes
    # a strategy that takes local steps books its inner step as the update on a sync step too (as
    # training does: LocalSteps.inner_step); its rule counts it
    inner = cls.local_step_bytes or 0.0
    rule, update = own.rule - inner, own.update + inner
    if workers == 1:
        aggregate = PAYLOAD_KINDS.get(spec.kind).decoded  # its own payload, as the update reads it
        return PassBytes(encode=rule + payload_bytes(spec), decode=0.0, update=update + aggregate)
    t = transport_bytes(transport, spec, workers, workers_per_node)
    return PassBytes(encode=rule + payload_bytes(spec) + t.pack, decode=t.unpack, update=update + t.aggregate)
