"""A strategy or transport whose module declares no memory passes (Strategy.bytes,
Strategy.local_step_bytes where it takes local steps, Transport.wire_bytes): the modelled compute
cannot time its encode, decode, update or local step.

One line for it, naming the plug-in file and the fix, said by whoever finds it first: bench and
sweep at plan time, where the run's compute mode is known (lionsim.config.planning: before any
training, not after hours of it), estimate when it prices the passes (lionsim.steptime.passes).
A wire_bytes override that returns None for some specs shows only when that spec is priced
(wire_none): bench and sweep ask it for every spec a run sends at plan time (lionsim.config.sends),
estimate as it prices each. Measured compute (`--compute measured`) times the passes on the clock
and needs none."""

from __future__ import annotations

import dataclasses
import sys

from lionsim.errors import LionsimError
from lionsim.transports import TRANSPORTS, PayloadSpec
from lionsim.transports.base import Transport

FIX = "or run bench or sweep with --compute measured, which times the passes on the clock"


def origin(cls: type) -> str:
    """"plugin FILE: " for a class a plug-in defined (its file as --plugin gave it, or the module
    of an installed one), as the plug-in load errors begin (lionsim.plugins); "" for a built-in."""
    if cls.__module__.split(".")[0] == "lionsim":
        return ""
    file = getattr(sys.modules.get(cls.__module__), "__file__", None)
    return f"plugin {file or cls.__module__}: "


def no_bytes(cls: type) -> str:
    """The line for a strategy class that declares no `bytes`."""
    return (f"{origin(cls)}strategy {cls.name!r} declares no bytes, which the modelled compute times its "
            "encode and update with; declare `bytes = StrategyBytes(rule, update, why)` as "
            f"docs/writing-a-strategy.md shows, {FIX}")


def no_local_step_bytes(cls: type) -> str:
    """The line for a strategy class that takes local steps and declares no `local_step_bytes`."""
    return (f"{origin(cls)}strategy {cls.name!r} declares no local_step_bytes, which the modelled compute times "
            "its local steps (those that do not exchange) with; declare `local_step_bytes = BYTES`, the bytes per "
            f"parameter its inner step moves, as docs/writing-a-strategy.md shows, {FIX}")


def no_wire_bytes(cls: type) -> str:
    """The line for a transport class (hier:T: T's) that declares no `wire_bytes`."""
    return (f"{origin(cls)}transport {cls.name!r} declares no wire_bytes, which the modelled compute times its "
            "packing and unpacking with; define `wire_bytes(self, spec, workers)` returning "
            f"TransportBytes(pack, unpack, aggregate) as docs/writing-a-strategy.md shows, {FIX}")


def priced_transport(transport: str) -> type:
    """The transport class whose wire_bytes prices `transport`'s passes: a hierarchy's inner one
    prices the inter-node phase with its own."""
    cls = TRANSPORTS.get(transport)
    inner = getattr(cls, "inner", None)
    return inner if isinstance(inner, type) else cls


def undeclared_transport(transport: str) -> type | None:
    """The transport class behind `transport` that declares no wire_bytes, None where every one
    declares them."""
    cls = priced_transport(transport)
    return cls if cls.wire_bytes is Transport.wire_bytes else None


def payload_words(spec: PayloadSpec) -> str:
    """`spec` as a line names it: its kind, its size and every field that is not its default (a
    sparse payload's k, a vote's rule and abstentions), so its author can call wire_bytes with it."""
    shown = []
    for f in dataclasses.fields(spec):
        value = getattr(spec, f.name)
        if f.name in ("kind", "numel", "hidden_pieces") or value == f.default:
            continue
        plain = isinstance(value, (bool, int, float, str, tuple))
        shown.append(f"{f.name}={value!r}" if plain else f"{f.name}={getattr(value, 'name', type(value).__name__)}")
    return f"a {spec.kind!r} payload of {spec.numel:,} values" + (f" ({', '.join(shown)})" if shown else "")


def wire_none(transport: str, spec: PayloadSpec, workers: int) -> str:
    """The line for `transport` whose wire_bytes gave None for `spec` on `workers` workers: none
    declared, or an override that returns None for this spec (only asking it for the spec shows that)."""
    cls = priced_transport(transport)
    if cls.wire_bytes is Transport.wire_bytes:
        return no_wire_bytes(cls)
    return (f"{origin(cls)}transport {cls.name!r}: its wire_bytes returned None for {payload_words(spec)} on "
            f"{workers} workers, which this run sends, so the modelled compute cannot time its packing and "
            f"unpacking; return TransportBytes(pack, unpack, aggregate) for every spec it carries, {FIX}")


def undeclared_strategy(strategy: type, local_steps: bool = False) -> str | None:
    """The declaration `strategy` lacks for the modelled compute: "bytes", "local_step_bytes"
    (where it takes `local_steps`: more than one step per sync), or None."""
    if strategy.bytes is None:
        return "bytes"
    if local_steps and strategy.local_step_bytes is None:
        return "local_step_bytes"
    return None


def check_declared(strategy: type, transport: str, workers: int, steps_per_sync: int = 1) -> None:
    """Raise the one line where the modelled compute could not time this run's passes: its
    strategy's `bytes`, its `local_step_bytes` (more than one step per sync: it takes local steps),
    and (more than one worker: a lone one packs nothing) its transport's."""
    missing = undeclared_strategy(strategy, steps_per_sync > 1)
    if missing is not None:
        raise LionsimError((no_bytes if missing == "bytes" else no_local_step_bytes)(strategy))
    if workers > 1 and (cls := undeclared_transport(transport)) is not None:
        raise LionsimError(no_wire_bytes(cls))
