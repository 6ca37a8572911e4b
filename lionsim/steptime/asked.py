"""A transport's answers checked once per distinct question within one command (check_answers).

An estimate sweep prices every point afresh: each point probes each run anew (a new transport
and payload spec, equal to the last point's), so checking at every pricing asked the same
question a thousand times. The question is the transport's class and configuration, the payload
spec, the workers and the workers per node, keyed by value so that a new probe of the same run
hits: the spec by its own equality (a frozen dataclass; vote rules compare by value), the
transport by its class and its instance's attributes (`state`), so a plug-in's instance
configured otherwise is asked again. What cannot be keyed by value (a tensor, an array: they
compare their own way) is asked every time. The keys live in a set the caller keeps for one
command, never across. A key costs less than the ask it saves (a built-in transport holds no
attributes: its class is its configuration)."""

from __future__ import annotations

import dataclasses
import functools
from enum import Enum
from fractions import Fraction

from lionsim.steptime.answers import check_answers
from lionsim.transports import PayloadSpec
from lionsim.transports.base import Transport

DEPTH = 8
"""Nesting the key follows before it gives up (a cycle or a deep object is asked every time)."""
PLAIN = (type(None), bool, int, float, complex, str, bytes, Fraction, Enum, type)


class Unkeyed(Exception):
    """A value `state` cannot compare by value."""


def state(value: object, depth: int = 0) -> object:
    """`value` as a hashable key equal for equally configured values: a plain value itself,
    containers item by item, an object as its class and attributes (its __dict__ and slots), where
    it compares by identity or is a dataclass; one whose class compares it by value (a vote rule)
    itself; Unkeyed for anything else (a tensor's == is elementwise)."""
    if depth > DEPTH:
        raise Unkeyed
    if isinstance(value, PLAIN):
        return value
    if isinstance(value, (tuple, list)):
        return type(value), tuple(state(v, depth + 1) for v in value)
    if isinstance(value, (set, frozenset)):
        return type(value), frozenset(state(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return dict, frozenset((state(k, depth + 1), state(v, depth + 1)) for k, v in value.items())
    if dataclasses.is_dataclass(value) or type(value).__eq__ is object.__eq__:
        return type(value), tuple((name, state(v, depth + 1)) for name, v in _attributes(value))
    if _by_value(value):
        return value
    raise Unkeyed


def _by_value(value: object) -> bool:
    """Whether `value`'s own __eq__ and __hash__ make it a key: hashable, and equal to itself as a
    bool (a tensor's or an array's == gives one of its own)."""
    try:
        hash(value)
        return (value == value) is True
    except Exception:  # noqa: BLE001 -- any failure: not a key; it is asked every time
        return False


def _attributes(value: object) -> list[tuple[str, object]]:
    """(name, value) of every attribute an instance holds: its __dict__'s and its slots', by name."""
    held = dict(getattr(value, "__dict__", {}))
    held |= {name: getattr(value, name) for name in _slots(type(value)) if hasattr(value, name)}
    return sorted(held.items())


@functools.cache
def _slots(cls: type) -> tuple[str, ...]:
    """The slots `cls` and its bases declare (read once a class: a sweep keys thousands of probes)."""
    names = []
    for base in cls.__mro__:
        slots = base.__dict__.get("__slots__", ())
        names += [n for n in ((slots,) if isinstance(slots, str) else slots) if n not in ("__dict__", "__weakref__")]
    return tuple(names)


def _configuration(transport: Transport) -> object:
    """The transport's class where its instance holds nothing (every built-in one), else its state."""
    if not getattr(transport, "__dict__", None) and not _slots(type(transport)):
        return type(transport)
    return state(transport)


def check_once(asked: set | None, transport: Transport, spec: PayloadSpec, workers: int,
               workers_per_node: int = 1) -> None:
    """check_answers(transport, spec, workers, workers_per_node), skipped where `asked` holds the
    question already (added once answered well); None: ask every time."""
    try:
        key = (_configuration(transport), spec, workers, workers_per_node)
        hash(key)
    except (Unkeyed, TypeError):  # TypeError: a spec field that hashes no value
        key = None
    if asked is not None and key is not None and key in asked:
        return
    check_answers(transport, spec, workers, workers_per_node)
    if asked is not None and key is not None:
        asked.add(key)
