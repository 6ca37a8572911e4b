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

Parameters, gradients and optimizer state are float32 (4 bytes); votes, levels and signs are
int8 (1 byte); sums of votes are the narrowest integer that holds them (int8 up to 127
workers). Terms below 1/n per parameter (per-tensor scales, chunk padding) are left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from lionsim.errors import LionsimError
from lionsim.steptime.wire_passes import F32, I8, HIERARCHICAL_BYTES, TRANSPORT_BYTES, TransportBytes  # noqa: F401
from lionsim.transports import PayloadSpec

@dataclass(frozen=True, slots=True)
class StrategyBytes:
    """What a strategy's own kernels move per parameter, besides its payload and the aggregate."""

    rule: float
    """Local rule: bytes read and written (gradient, state, extra statistic passes)."""
    update: float
    """Update: bytes read and written of the replica and the state."""
    why: str
    """The accounting, in words."""


STRATEGY_BYTES: dict[str, StrategyBytes] = {
    "adamw": StrategyBytes(0, 6 * F32, "no local rule (the gradient is sent); update reads p, m, v, writes p, m, v"),
    "lion": StrategyBytes(0, 4 * F32, "no local rule; update reads p, m, writes p, m"),
    "sgdm": StrategyBytes(0, 4 * F32, "no local rule; update reads p, buf, writes p, buf"),
    "dlion-mavo": StrategyBytes(3 * F32, 2 * F32, "rule reads g, m, writes m; update reads p, writes p"),
    "dlion-avg": StrategyBytes(3 * F32, 2 * F32, "rule reads g, m, writes m; update reads p, writes p"),
    "signum-mv": StrategyBytes(3 * F32, 2 * F32, "rule reads g, m, writes m; update reads p, writes p"),
    "lioncub-l1": StrategyBytes(
        5 * F32, 2 * F32, "rule: a pass reading g, m for mean|c| per tensor, then reads g, m, writes m; update reads p, writes p"
    ),
    "lioncub-linf": StrategyBytes(
        5 * F32, 2 * F32, "rule: a pass reading g, m for max|c| per tensor, then reads g, m, writes m; update reads p, writes p"
    ),
    "lioncub-l0": StrategyBytes(
        5 * F32, 2 * F32, "rule: a pass reading g, m for mean log|c| per tensor, then reads g, m, writes m; update reads p, writes p"
    ),
    "lioncub-ternary": StrategyBytes(
        5 * F32, 2 * F32, "rule: a pass reading g, m for mean|c| per tensor, then reads g, m, writes m; update reads p, writes p"
    ),
    "signsgd": StrategyBytes(F32, 2 * F32, "rule reads g; update reads p, writes p"),
    "qsgd": StrategyBytes(
        2 * F32, 4 * F32, "rule: a pass reading g for ||g|| per tensor, then reads g (draws from a counter RNG in "
        "registers); update (SGD momentum) reads p, buf, writes p, buf"
    ),
    "onebit-adam": StrategyBytes(
        7 * F32, 5 * F32, "rule (1-bit phase) reads g, m, e, writes m; a pass reading m, e for ||m + e||; then reads "
        "m, e, writes e; update reads p, m, v, writes p, m"
    ),
    "ef-signsgd": StrategyBytes(
        5 * F32, 2 * F32, "rule: a pass reading g, e for mean|p| per tensor, then reads g, e, writes e; update reads p, writes p"
    ),
    "terngrad": StrategyBytes(
        3 * F32, 4 * F32,
        "rule: a pass reading g for its sum and sum of squares per tensor (sigma of the 2.5 sigma clip), a pass "
        "reading g for max|clipped g| per tensor, then reads g (clip and Bernoulli draws from a counter RNG in registers); "
        "update (SGD momentum) reads p, buf, writes p, buf",
    ),
    "dgc": StrategyBytes(
        6 * F32, 2 * F32, "rule reads g, u, v, writes u, v, then a pass reading |v| for the top-k threshold; update reads p, writes p"
    ),
}


def payload_bytes(spec: PayloadSpec) -> float:
    """Bytes per parameter the local rule writes as the payload (a dense gradient is sent in place)."""
    if spec.kind == "dense":
        return 0.0
    if spec.kind == "sparse":
        return (8 + F32) * spec.k / spec.numel  # int64 index + float32 value per pair
    return I8  # votes, levels, scaled signs


@dataclass(frozen=True, slots=True)
class PassBytes:
    """Bytes per parameter of one step's three memory-bound passes."""

    encode: float
    decode: float
    update: float


@dataclass(frozen=True, slots=True)
class SyncCopy:
    """One worker's copy of a momentum sync (lionsim.strategies.base.MomentumSyncing): a pass of
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


def pass_bytes(strategy: str, transport: str, spec: PayloadSpec, workers: int, workers_per_node: int = 1) -> PassBytes:
    """Bytes per parameter that `strategy` over `transport` moves in each pass (see the module doc).

    A lone worker sends nothing: its own payload is the aggregate, so no pack or unpack.
    """
    if strategy not in STRATEGY_BYTES:
        raise LionsimError(f"no memory-pass accounting for strategy {strategy!r}; known: {', '.join(STRATEGY_BYTES)}")
    if transport not in TRANSPORT_BYTES:
        raise LionsimError(f"no memory-pass accounting for transport {transport!r}; known: {', '.join(TRANSPORT_BYTES)}")
    own = STRATEGY_BYTES[strategy]
    if workers == 1:
        aggregate = F32 if spec.kind in ("dense", "sparse", "scaled-signs") else I8
        return PassBytes(encode=own.rule + payload_bytes(spec), decode=0.0, update=own.update + aggregate)
    if transport in HIERARCHICAL_BYTES:
        t = TRANSPORT_BYTES[transport](spec, workers, min(workers_per_node, workers))
    else:
        t = TRANSPORT_BYTES[transport](spec, workers)
    return PassBytes(encode=own.rule + payload_bytes(spec) + t.pack, decode=t.unpack, update=own.update + t.aggregate)
