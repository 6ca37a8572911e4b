"""The plug-in files a run or sweep directory was trained with, loaded again by a command that
reads its runs by name (`estimate --from-run DIR`), as `--config run.json` and `--resume` load a
bench's: run.json records them as its config's `plugin` list, sweep.json as its bench's `plugins`
(absolute paths). A recorded file that is gone is one line naming it, not an unknown strategy or
transport later: unless a --plugin file of the same name is loaded already (the file moved)."""

from __future__ import annotations

import json
from pathlib import Path

from lionsim.errors import LionsimError


def recorded_plugins(directory) -> list[str]:
    """The plug-in files DIR's runs were trained with ([] where it records none or is unreadable:
    what DIR holds is its reader's to refuse)."""
    where = Path(directory)
    for name, table, key in (("sweep.json", "bench", "plugins"), ("run.json", "config", "plugin")):
        try:
            record = json.loads((where / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        inner = record.get(table) if isinstance(record, dict) else None
        paths = inner.get(key) if isinstance(inner, dict) else None
        return [p for p in paths if isinstance(p, str)] if isinstance(paths, list) else []
    return []


def load_recorded(directory, flag: str = "--from-run") -> list[str]:
    """Load the plug-ins DIR was trained with (lionsim.plugins); their resolved paths."""
    from lionsim.plugins import LOADED, PLUGIN_FILES, load_plugins

    recorded = recorded_plugins(directory)
    loaded = {Path(key).name for key in LOADED}
    missing = [p for p in recorded if not Path(p).is_file() and Path(p).name not in loaded]
    if missing:
        files = ", ".join(missing)
        raise LionsimError(f"bad {flag} {directory}: it was trained with --plugin {files}, and no such file is "
                           f"there now; accepted: {PLUGIN_FILES} at the path recorded, or --plugin FILE.py of "
                           "the same name where it moved")
    return load_plugins([p for p in recorded if Path(p).is_file()])
