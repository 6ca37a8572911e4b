"""A strategy or transport whose module declares no memory passes (Strategy.bytes,
Transport.wire_bytes): the modelled compute cannot time its encode, decode and update.

One line for it, naming the plug-in file and the fix, said by whoever finds it first: bench and
sweep at plan time, where the run's compute mode is known (lionsim.config.planning: before any
training, not after hours of it), estimate when it prices the passes (lionsim.steptime.passes).
Measured compute (`--compute measured`) times the passes on the clock and needs neither."""

from __future__ import annotations

import sys

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


def no_wire_bytes(cls: type) -> str:
    """The line for a transport class (hier:T: T's) that declares no `wire_bytes`."""
    return (f"{origin(cls)}transport {cls.name!r} declares no wire_bytes, which the modelled compute times its "
            "packing and unpacking with; define `wire_bytes(self, spec, workers)` returning "
            f"TransportBytes(pack, unpack, aggregate) as docs/writing-a-strategy.md shows, {FIX}")


def undeclared_transport(transport: str) -> type | None:
    """The transport class behind `transport` that declares no wire_bytes (a hierarchy's inner
    transport prices the inter-node phase with its own), None where every one declares them."""
    from lionsim.transports import TRANSPORTS
    from lionsim.transports.base import Transport

    cls = TRANSPORTS.get(transport)
    inner = getattr(cls, "inner", None)
    if isinstance(inner, type):
        cls = inner
    return cls if cls.wire_bytes is Transport.wire_bytes else None


def check_declared(strategy: type, transport: str, workers: int) -> None:
    """Raise the one line where the modelled compute could not time this run's passes: its
    strategy's `bytes`, and (more than one worker: a lone one packs nothing) its transport's."""
    from lionsim.errors import LionsimError

    if strategy.bytes is None:
        raise LionsimError(no_bytes(strategy))
    if workers > 1 and (cls := undeclared_transport(transport)) is not None:
        raise LionsimError(no_wire_bytes(cls))
