"""A transport's answers checked once per distinct question within one command (check_answers).

An estimate sweep prices every point afresh: each point probes each run anew (a new transport
and payload spec, equal to the last point's), so checking at every pricing asked the same
question a thousand times. The question is keyed by value where that is sure to be right: the
transport's class (an instance holding no attributes, as every built-in one: its class is its
configuration), the payload spec (a frozen dataclass, vote rules comparing by value), the
workers and the workers per node. A transport whose instance holds attributes (a plug-in
configured per instance) is asked every time: an ask costs about 10 us, and keying arbitrary
state by value (tensors compare elementwise) would cost more code than it saves. The keys live
in a set the caller keeps for one command, never across."""

from __future__ import annotations

import functools

from lionsim.steptime.answers import check_answers
from lionsim.transports import PayloadSpec
from lionsim.transports.base import Transport


@functools.cache
def _declares_slots(cls: type) -> bool:
    """Whether `cls` or a base declares instance slots (state a key by class would miss)."""
    return any(base.__dict__.get("__slots__") not in (None, (), []) for base in cls.__mro__)


def question(transport: Transport, spec: PayloadSpec, workers: int, workers_per_node: int = 1) -> tuple | None:
    """The question as a key; None where the transport's instance holds state of its own, or the
    spec hashes no value: asked every time."""
    if getattr(transport, "__dict__", None) or _declares_slots(type(transport)):
        return None
    key = (type(transport), spec, workers, workers_per_node)
    try:
        hash(key)
    except TypeError:  # a spec field that hashes no value
        return None
    return key


def check_once(asked: set | None, transport: Transport, spec: PayloadSpec, workers: int,
               workers_per_node: int = 1) -> None:
    """check_answers(transport, spec, workers, workers_per_node), skipped where `asked` holds the
    question already (added once answered well); None: ask every time."""
    key = None if asked is None else question(transport, spec, workers, workers_per_node)
    if key is not None and key in asked:
        return
    check_answers(transport, spec, workers, workers_per_node)
    if key is not None:
        asked.add(key)
