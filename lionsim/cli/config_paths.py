"""Paths in a TOML --config file are relative to the file's folder, as in pyproject.toml or a
compose file: `network = "l40s.toml"` beside `prof/est.toml` is prof/l40s.toml from any working
directory. A path typed on the command line stays relative to the working directory, and so do a
run.json's (lionsim wrote them as the run was given them, from where it ran: a replay from there
reads the same files).

Which values are paths: a key that only takes one (data, out, from-run, fit, plugin, and
regress's baseline-dir, junit and report); a network that names a profile file (.toml, .json or a
folder in it), not a preset; a workload or model given as FILE.py:FUNC (its FILE); a
compute-spread given as trace:FILE. Where the command takes a comma list (sweep's network and
workload axes), each item of a comma string is one of these. An absolute path, `~/...` (made the
home folder's) and anything else stay as the file wrote them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

PATHS = frozenset({"data", "out", "from_run", "fit", "plugin", "baseline_dir", "junit", "report"})
"""Keys (as option names) whose every value is a path."""
PROFILES = frozenset({"network"})
"""Keys whose value is a preset name or a profile file's path."""
SPECS = frozenset({"workload", "model"})
"""Keys whose value is a registered name, package.module:FUNC or FILE.py:FUNC."""
SPREADS = frozenset({"compute_spread"})
"""Keys whose value is a spec, trace:FILE naming a file (lionsim.steptime.spread)."""
COMMA_LISTS = {"sweep": frozenset({"network", "workload"})}
"""Per command, the path keys whose comma string is a list (the sweep's grid axes: lionsim.sweep.grid
splits `"a.toml,1gbe"` as it splits an array)."""


def rebased(values: dict[str, Any], config: Path,
            command: str | None = None) -> tuple[dict[str, Any], dict[str, tuple[str, str]]]:
    """`values` (a TOML config's for `command`, read from `config`) with each relative path made
    relative to the file's folder, and {path as now given: (key, item as the file wrote it)} for the
    items changed (a refusal naming one says where it came from: config_file.config_refused)."""
    folder = config.parent
    out, moved = dict(values), {}
    lists = COMMA_LISTS.get(command or "", frozenset())
    for key, value in values.items():
        name = key.replace("-", "_")
        kind = ("path" if name in PATHS else "profile" if name in PROFILES else "spec" if name in SPECS
                else "spread" if name in SPREADS else None)
        if kind is None:
            continue
        given = value if isinstance(value, list) else [value]
        comma = name in lists  # each item of "a.toml,1gbe" (lionsim.sweep.grid splits array items too)
        items = [[p.strip() for p in v.split(",")] if comma and isinstance(v, str) else [v] for v in given]
        new = [[_moved(p, folder, kind) for p in parts] for parts in items]
        joined = [",".join(n) if comma and isinstance(v, str) else n[0] for v, n in zip(given, new)]
        out[key] = joined if isinstance(value, list) else joined[0]
        moved.update({str(after): (key, before) for parts, n in zip(items, new) for before, after in zip(parts, n)
                      if after != before})
    return out, moved


def _moved(value: Any, folder: Path, kind: str) -> Any:
    if not isinstance(value, str) or not value.strip():
        return value  # a wrong type is the option's to refuse, as the file wrote it
    if kind == "spec":
        target, colon, function = value.rpartition(":")
        if not colon or not target.endswith(".py"):
            return value  # a registered name or package.module:FUNC
        return f"{_path(target, folder)}:{function}"
    if kind == "spread":  # parsed as lionsim.steptime.spread.parse_spec reads it
        spec, colon, file = value.strip().partition(":")
        return f"{spec}:{_path(file, folder)}" if colon and file and spec.strip().lower() == "trace" else value
    if kind == "profile" and not (Path(value).suffix.lower() in (".toml", ".json") or "/" in value or os.sep in value):
        return value  # a preset's name (a bad name is refused as one)
    return _path(value, folder)


def _path(text: str, folder: Path) -> str:
    """`text` from `folder`: unchanged where absolute, the home folder's for ~, else joined."""
    path = Path(text).expanduser()
    if path.is_absolute():
        return str(path) if text.startswith("~") else text
    return text if folder == Path(".") else str(folder / path)
