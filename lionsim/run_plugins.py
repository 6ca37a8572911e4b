"""The plug-in files a run or sweep directory was trained with, loaded again by a command that
reads its runs by name (`estimate --from-run DIR`), as `--config run.json` and `--resume` load a
bench's: run.json records them as its config's `plugin` list, sweep.json as its bench's `plugins`
(absolute paths; a relative one is taken from DIR). A --plugin file of the same name given on the
command line wins over the recorded one, there or not (the file moved, or an edited copy); a
recorded file that is gone and not given is one line naming it, not an unknown strategy or
transport later."""

from __future__ import annotations

import json
from pathlib import Path

from lionsim.errors import LionsimError


def plugin_paths(value) -> list[str]:
    """A record's plug-in value as paths: a list's strings, a bare string as one, [] otherwise (what
    is not a path is its reader's to refuse). The one reading of a recorded `plugin` list: run.json's,
    sweep.json's and a --config file's (lionsim.cli.preload)."""
    if isinstance(value, str):
        return [value] if value else []
    return [p for p in value if isinstance(p, str)] if isinstance(value, list) else []


def recorded_in(record, table: str, key: str) -> list[str]:
    """plugin_paths of `record[table][key]` (run.json: config/plugin; sweep.json: bench/plugins), [] where
    either level is missing or not a table."""
    inner = record.get(table) if isinstance(record, dict) else None
    return plugin_paths(inner.get(key)) if isinstance(inner, dict) else []


def recorded_plugins(directory) -> list[str]:
    """The plug-in files DIR's runs were trained with ([] where it records none or is unreadable:
    what DIR holds is its reader's to refuse); a relative path is taken from DIR (a hand-written
    run.json, an older lionsim's), as a --config file's are from its folder, not from the current one."""
    where = Path(directory)
    for name, table, key in (("sweep.json", "bench", "plugins"), ("run.json", "config", "plugin")):
        try:
            record = json.loads((where / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        return [str(where / p) for p in recorded_in(record, table, key)]  # an absolute p stays itself
    return []


def given_wins(recorded: list[str], given_names) -> list[str]:
    """`recorded` less each file a --plugin of the same file name stands for (`given_names`: the
    names of the files given or loaded): the file given wins, whether or not the recorded one is
    still there (an edited copy, a checkout elsewhere), rather than both registering one name."""
    names = set(given_names)
    return [p for p in recorded if Path(p).name not in names]


def load_recorded(directory, flag: str = "--from-run") -> list[str]:
    """Load the plug-ins DIR was trained with (lionsim.plugins), less those a plug-in of the same
    file name already loaded stands for (given_wins); their resolved paths."""
    from lionsim.plugins import LOADED, PLUGIN_FILES, load_plugins

    recorded = given_wins(recorded_plugins(directory), (Path(key).name for key in LOADED))
    missing = [p for p in recorded if not Path(p).is_file()]
    if missing:
        files = ", ".join(missing)
        raise LionsimError(f"bad {flag} {directory}: it was trained with --plugin {files}, and no such file is "
                           f"there now; accepted: {PLUGIN_FILES} at the path recorded, or --plugin FILE.py of "
                           "the same name where it moved")
    return load_plugins(recorded)
