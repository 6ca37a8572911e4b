"""Paths in a TOML --config file are relative to the file's folder, as in pyproject.toml or a
compose file: `network = "l40s.toml"` beside `prof/est.toml` is prof/l40s.toml from any working
directory. A path typed on the command line stays relative to the working directory, and so do a
run.json's (lionsim wrote them as the run was given them, from where it ran: a replay from there
reads the same files).

Which values are paths: a key that only takes one (data, out, from-run, fit, plugin,
baseline-dir); a network that names a profile file (.toml, .json or a folder in it), not a
preset; a workload or model given as FILE.py:FUNC (its FILE). An absolute path, `~/...` (made
the home folder's) and anything else stay as the file wrote them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

PATHS = frozenset({"data", "out", "from_run", "fit", "plugin", "baseline_dir"})
"""Keys (as option names) whose every value is a path."""
PROFILES = frozenset({"network"})
"""Keys whose value is a preset name or a profile file's path."""
SPECS = frozenset({"workload", "model"})
"""Keys whose value is a registered name, package.module:FUNC or FILE.py:FUNC."""


def rebased(values: dict[str, Any], config: Path) -> tuple[dict[str, Any], dict[str, tuple[str, str]]]:
    """`values` (a TOML config's, read from `config`) with each relative path made relative to the
    file's folder, and {path as now given: (key, value as the file wrote it)} for the values changed
    (a refusal naming one says where it came from: lionsim.cli.config_file.config_refused)."""
    folder = config.parent
    out, moved = dict(values), {}
    for key, value in values.items():
        name = key.replace("-", "_")
        kind = "path" if name in PATHS else "profile" if name in PROFILES else "spec" if name in SPECS else None
        if kind is None:
            continue
        given = value if isinstance(value, list) else [value]
        new = [_moved(v, folder, kind) for v in given]
        out[key] = new if isinstance(value, list) else new[0]
        moved.update({str(after): (key, before) for before, after in zip(given, new) if after != before})
    return out, moved


def _moved(value: Any, folder: Path, kind: str) -> Any:
    if not isinstance(value, str) or not value.strip():
        return value  # a wrong type is the option's to refuse, as the file wrote it
    if kind == "spec":
        target, colon, function = value.rpartition(":")
        if not colon or not target.endswith(".py"):
            return value  # a registered name or package.module:FUNC
        return f"{_path(target, folder)}:{function}"
    if kind == "profile" and not (Path(value).suffix.lower() in (".toml", ".json") or "/" in value or os.sep in value):
        return value  # a preset's name (a bad name is refused as one)
    return _path(value, folder)


def _path(text: str, folder: Path) -> str:
    """`text` from `folder`: unchanged where absolute, the home folder's for ~, else joined."""
    path = Path(text).expanduser()
    if path.is_absolute():
        return str(path) if text.startswith("~") else text
    return text if folder == Path(".") else str(folder / path)
