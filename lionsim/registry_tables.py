"""Tables of what lionsim's own registries give, kept as JSON in lionsim/data/ so that a command can
answer without importing the registries (torch, about 4 s): the strategies' option flags
(lionsim.cli.flag_table), the strategies' and transports' names (lionsim.name_table).

A table holds a fingerprint of the sources it was read from and is read only while that still
matches, so a stale table is never wrong, only slow: its reader falls back to the registry. So
does a reader wherever something other than lionsim may register (others_register)."""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def fingerprint(*folders: Path) -> str:
    """A digest of every source file under `folders`, in order (names and contents); of one folder,
    the digest the flag table has always recorded. Line endings are read as LF: a checkout that
    writes CRLF (git's autocrlf) holds the same sources, and the shipped tables match it."""
    digest = hashlib.sha256()
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            text = path.read_bytes().replace(b"\r\n", b"\n")
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + text + b"\0")
    return digest.hexdigest()


def current(table: Path, *folders: Path) -> dict | None:
    """The table in `table` while its fingerprint of `folders` matches; None: no table, or a stale one."""
    if not table.is_file():
        return None
    data = json.loads(table.read_text(encoding="utf-8"))
    return data if data.get("fingerprint") == fingerprint(*folders) else None


@functools.lru_cache(maxsize=1)
def announced() -> frozenset[str]:
    """The entry point groups installed packages announce anything under: one scan of the installed
    packages (tens of milliseconds) for every table a command reads, once a process (they do not
    change under it; a test that installs one clears this)."""
    from importlib.metadata import entry_points

    return frozenset(entry_points().groups)


def installed(*groups: str) -> bool:
    """Whether an installed package announces an entry point in any of `groups`."""
    return not announced().isdisjoint(groups)
