"""Read-only values for plans: a given table (--hyper, strategy options) frozen as deeply as the
frozen dataclasses that hold it, and thawed back into plain JSON values for a record."""

from __future__ import annotations

from typing import Any, Mapping


class FrozenMap(Mapping):
    """A read-only mapping that pickles (a checkpoint holds its strategy's config): a plan's given
    tables (--hyper, strategy options) as frozen as the dataclasses around them."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping | None = None) -> None:
        self._items = dict(items or {})

    def __getitem__(self, key):
        return self._items[key]

    def __iter__(self):
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"FrozenMap({self._items!r})"

    def __reduce__(self):
        return (FrozenMap, (self._items,))


def frozen(value: Any) -> Any:
    """A given value made read-only: mappings as FrozenMap, lists as tuples, all the way down."""
    if isinstance(value, Mapping):
        return FrozenMap({k: frozen(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(frozen(v) for v in value)
    return value


def thawed(value: Any) -> Any:
    """frozen's inverse, for records: plain dicts and lists."""
    if isinstance(value, Mapping):
        return {k: thawed(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thawed(v) for v in value]
    return value
