"""Installed plug-ins: the modules packages announce under an entry point group
(`lionsim.strategies`, `lionsim.transports`), imported so that they register themselves.
lionsim.registry calls this the first time a registry with a group is read.

What imports one and checks what it registered is lionsim.plugins.load_entry_point, the load
check `--plugin FILE.py` gets: it sits above the registries it checks, so it puts itself here
(`LOAD`) when imported, and lionsim/__init__ imports it, before any registry can be read."""

from __future__ import annotations

from typing import Callable

from lionsim.errors import LionsimError


def _unchecked(ep, group: str) -> None:
    """Import `ep` (lionsim.plugins not imported yet: a registry read while lionsim imports)."""
    try:
        ep.load()
    except Exception as e:  # noqa: BLE001 -- an installed plug-in that fails is one line naming it
        raise LionsimError(f"plugin {ep.value} (entry point {ep.name!r} of {group}): importing it raised "
                           f"{type(e).__name__}: {e}") from None


LOAD: list[Callable[[object, str], None]] = [_unchecked]
"""What imports one entry point of a group (and checks it): lionsim.plugins.load_entry_point."""


def load_group(group: str) -> None:
    """Import (and check) every entry point of `group`; one that fails is one line naming it."""
    from importlib.metadata import entry_points

    for ep in entry_points(group=group):
        LOAD[0](ep, group)
