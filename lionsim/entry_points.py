"""Installed plug-ins: the modules packages announce under an entry point group
(`lionsim.strategies`, `lionsim.transports`), imported so that they register themselves.
lionsim.registry calls this the first time a registry with a group is read."""

from __future__ import annotations

from lionsim.errors import LionsimError


def load_group(group: str) -> None:
    """Import every entry point of `group`; one that fails is one line naming it."""
    from importlib.metadata import entry_points

    for ep in entry_points(group=group):
        try:
            ep.load()
        except Exception as e:  # noqa: BLE001 -- an installed plug-in that fails is one line naming it
            raise LionsimError(f"plugin {ep.value} (entry point {ep.name!r} of {group}): importing it raised "
                               f"{type(e).__name__}: {e}") from None
