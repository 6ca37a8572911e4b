"""The transports' own memory passes: bytes per parameter each one's packing and unpacking
moves (the accounting of lionsim.steptime.passes, whose module doc gives the conventions). Each
transport declares its own in its module (Transport.wire_bytes); this reads the registry."""

from __future__ import annotations

from lionsim.errors import LionsimError
from lionsim.steptime.undeclared import wire_none
from lionsim.transports import TRANSPORTS, PayloadSpec
from lionsim.transports.base import F32, I8, TransportBytes

__all__ = ["F32", "I8", "TransportBytes", "transport_bytes"]


def transport_bytes(transport: str, spec: PayloadSpec, workers: int, workers_per_node: int = 1) -> TransportBytes:
    """What `transport` moves per parameter for `spec` on `workers` workers (`workers_per_node`
    for a hierarchical one); one line if it gives none (lionsim.steptime.undeclared)."""
    t = TRANSPORTS.get(transport)()
    found = (t.wire_bytes(spec, workers, workers_per_node=min(workers_per_node, workers)) if t.hierarchical
             else t.wire_bytes(spec, workers))
    if found is None:
        raise LionsimError(wire_none(transport, spec, workers))
    return found
