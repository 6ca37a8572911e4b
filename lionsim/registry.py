"""Name -> object registries: registration sits beside the class, lookups fail with the list."""

from __future__ import annotations

from typing import Callable, Generic, Iterator, TypeVar

from lionsim.errors import LionsimError

T = TypeVar("T")


class Registry(Generic[T]):
    """A registry of named things of one kind (strategies, transports, workloads, ...)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator: register the decorated class or function under `name`."""

        def add(obj: T) -> T:
            self.add(name, obj)
            return obj

        return add

    def add(self, name: str, obj: T) -> None:
        if name in self._items:
            raise KeyError(f"{self.kind} {name!r} registered twice")
        self._items[name] = obj

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            raise LionsimError(
                f"unknown {self.kind} {name!r}; choose from: {', '.join(self.names())}"
            ) from None

    def names(self) -> list[str]:
        return list(self._items)

    def items(self) -> Iterator[tuple[str, T]]:
        return iter(self._items.items())

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __len__(self) -> int:
        return len(self._items)
