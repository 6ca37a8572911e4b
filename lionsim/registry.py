"""Name -> object registries: registration sits beside the class, lookups fail with the list.

Names are matched ignoring case (`AdamW` is `adamw`, `10GbE` is `10gbe`); `canonical` gives
the registered spelling, which is what configs, labels and files carry. An unknown name
fails with the nearest valid one ("did you mean ...?", all of them where several are as near)
and the list; with none near, a kind plug-ins register says how to load one (plugin_hint).

A registry may also make things from a prefix and another name (`prefix`: the transports'
`hier:TRANSPORT`): such names are valid wherever a registered one is, but `names` and `items`
list only the registered ones, so a listing is not flooded with every combination.
"""

from __future__ import annotations

import difflib
from typing import Callable, Generic, Iterable, Iterator, TypeVar

from lionsim.errors import LionsimError

T = TypeVar("T")


def closest(name: object, choices: Iterable[str]) -> str | None:
    """The valid choice nearest to `name` ignoring case (difflib's ratio at least 0.6), else None."""
    lowered = {c.lower(): c for c in choices}
    close = difflib.get_close_matches(str(name).lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[close[0]] if close else None


PREFIX_LEAST = 4
"""Least characters a typed name must share with the start of a choice for the prefix rule
(nearest): three would make `mlp` and `mla...` kin."""


def _shared_start(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def spelled(name: object) -> str:
    """`name` as names are compared for a suggestion: lower case, an underscore or a blank as a hyphen
    (`streaming_diloco`, `Streaming DiLoCo` are streaming-diloco)."""
    return str(name).strip().lower().replace("_", "-").replace(" ", "-")


def nearest(name: object, choices: Iterable[str]) -> list[str]:
    """Every valid choice as near to `name` as the nearest, in the order given, ignoring case: those
    whose start it shares longest, where that is at least PREFIX_LEAST characters and four fifths of
    what was typed (`dlionn` is a dlion-* strategy, not `lion`, nearer by difflib's ratio), or only
    the one it holds whole where there is one (`adamww` is adamw, not adamw@fp32-allreduce); else
    the longest choice it ends with after a separator (`nvidia-h200` is h200); else those of difflib's
    best ratio, at least 0.6. `vit` is as near to vit-s as to vit-b, and naming
    one of them would pick for the user."""
    key, unique = spelled(name), list(dict.fromkeys(choices))
    shared = {choice: _shared_start(spelled(choice), key) for choice in unique}
    longest = max(shared.values(), default=0)
    if longest >= PREFIX_LEAST and longest >= 0.8 * len(key):
        kin = [choice for choice in unique if shared[choice] == longest]
        whole = [choice for choice in kin if len(choice) == longest]  # typed with a letter too many: `adamww`
        return whole or kin
    # a vendor's or a maker's prefix before a name we know: `nvidia-h200`, `NVIDIA H200` is h200
    tails = [c for c in unique if len(c) >= 3 and len(key) > len(c) and key.endswith(spelled(c))
             and key[-len(c) - 1] in "-/:"]
    if tails:
        return [max(tails, key=len)]
    best, near = 0.6, []
    for choice in unique:
        score = difflib.SequenceMatcher(None, spelled(choice), key).ratio()
        if score > best:
            best, near = score, [choice]
        elif score == best:
            near.append(choice)
    return near


def did_you_mean(name: object, choices: Iterable[str]) -> str:
    """"; did you mean 'x'?" for the choice closest to `name` ("'x' or 'y'" where several are as
    close), else "". It ends the message, after the list, so the message still starts "unknown
    KIND 'NAME';"."""
    near = [repr(c) for c in nearest(name, choices)]
    if not near:
        return ""
    return "; did you mean " + (near[0] if len(near) == 1 else ", ".join(near[:-1]) + " or " + near[-1]) + "?"


def plugin_hint(name: object) -> str:
    """The end of the refusal of an unknown name near none, of a kind plug-ins register: a plug-in's
    strategy typed without its --plugin is told how to load it, not left with the list alone."""
    return f"; {name!r} is not built in: if a plug-in defines it, load that with --plugin FILE.py"


def match_name(name: object, choices: Iterable[str]) -> str | None:
    """The choice equal to `name` ignoring case and surrounding blanks, or None."""
    if not isinstance(name, str):
        return None
    key = name.strip().lower()
    return next((c for c in choices if c.lower() == key), None)


class Registry(Generic[T]):
    """A registry of named things of one kind (strategies, transports, workloads, ...)."""

    def __init__(self, kind: str, entry_points: str | None = None, plugins: bool | None = None) -> None:
        self.kind = kind
        self.plugins = entry_points is not None if plugins is None else plugins
        """Whether plug-ins register this kind (default: where installed ones have an entry point
        group): an unknown name with none near says how to load one (suggest)."""
        self._items: dict[str, T] = {}
        self._group = entry_points
        """The entry point group installed plug-ins register under, imported at the first read."""
        self._makers: dict[str, Callable[[str], tuple[str, T]]] = {}
        """prefix -> what makes `prefix + NAME` (prefix)."""
        self._made: dict[str, T] = {}
        """Things made from a prefix, by canonical name."""

    def _read(self) -> dict[str, T]:
        """The items, after installed plug-ins (entry points) registered theirs and passed the
        load check (lionsim.entry_points); one that fails it fails this read, and the next."""
        if self._group is not None:
            group, self._group = self._group, None  # once, and not again while they register
            from lionsim.entry_points import load_group

            try:
                load_group(group)
            except BaseException:
                self._group = group
                raise
        return self._items

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator: register the decorated class or function under `name`."""

        def add(obj: T) -> T:
            self.add(name, obj)
            return obj

        return add

    def add(self, name: str, obj: T) -> None:
        if match_name(name, self._items) is not None:  # names are looked up ignoring case
            raise KeyError(f"{self.kind} {name!r} registered twice")
        self._items[name] = obj

    def prefix(self, prefix: str, make: Callable[[str], tuple[str, T]]) -> None:
        """Make `prefix + NAME` (prefix in any case) with make(NAME) -> (its canonical name, the
        thing); make raises LionsimError, in one line, for a NAME it cannot take."""
        self._makers[prefix.lower()] = make

    def prefixes(self) -> list[str]:
        """The prefixes things are made from (lower case), as `prefix` added them."""
        return list(self._makers)

    def forget(self, names: Iterable[str]) -> None:
        """Unregister `names` (a plug-in that failed half way, or a test's clean-up); things made
        from a prefix are made again at the next look-up."""
        for name in names:
            self._items.pop(name, None)
        self._made.clear()

    def _make(self, name: str) -> str | None:
        """The canonical name of a prefixed `name`, made and kept; None if no prefix matches."""
        key = name.strip().lower()
        for prefix, make in self._makers.items():
            if key.startswith(prefix):
                canonical, obj = make(name.strip()[len(prefix):])
                self._made[canonical] = obj
                return canonical
        return None

    def canonical(self, name: str) -> str:
        """The registered spelling of `name` (any case); unknown: LionsimError with a suggestion."""
        if isinstance(name, str) and name in self._read():
            return name
        found = match_name(name, self._items)
        if found is None and isinstance(name, str):
            found = self._make(name)
        if found is None:
            raise LionsimError(f"unknown {self.kind} {name!r}; choose from: {', '.join(self.names())}{self.suggest(name)}")
        return found

    def suggest(self, name: object) -> str:
        """What ends the refusal of an unknown `name`: the nearest names (did_you_mean), and where
        plug-ins register this kind, how to load one (plugin_hint; after a near name, in brackets: a
        plug-in's `ef-signum`, its --plugin forgotten, was only offered the built-in `ef-signsgd`);
        "" where neither applies."""
        known = [n for n, obj in self._items.items() if spelled(name) in getattr(obj, "known_as", ())]
        near = (f"; did you mean {' or '.join(map(repr, known))}?" if known  # a paper's name for it
                else did_you_mean(name, self._items))
        if not self.plugins:
            return near
        if not near:
            return plugin_hint(name)
        return f"{near} (If a plug-in defines {name!r}, load that with --plugin FILE.py.)"

    def get(self, name: str) -> T:
        canonical = self.canonical(name)
        return self._items[canonical] if canonical in self._items else self._made[canonical]

    def names(self) -> list[str]:
        return list(self._read())

    def items(self) -> Iterator[tuple[str, T]]:
        return iter(list(self._read().items()))

    def __iter__(self) -> Iterator[str]:
        """The registered names (as `names`)."""
        return iter(self.names())

    def __contains__(self, name: object) -> bool:
        """Whether `name` (any case) is registered, or can be made from a prefix."""
        if match_name(name, self._read()) is not None:
            return True
        try:
            return isinstance(name, str) and self._make(name) is not None
        except LionsimError:
            return False

    def __len__(self) -> int:
        return len(self._read())
