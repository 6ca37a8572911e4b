"""Paths in a TOML --config file are relative to the file's folder, as in pyproject.toml or a
compose file: `network = "l40s.toml"` beside `prof/est.toml` is prof/l40s.toml from any working
directory. A path typed on the command line stays relative to the working directory; a run.json
records absolute ones (lionsim.training.record; an older lionsim's relative ones are read from the
working directory, where it ran).

Which values are paths: lionsim.option_paths. An absolute path, `~/...` (made the home folder's)
and anything else stay as the file wrote them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from lionsim.option_paths import placed


def rebased(values: dict[str, Any], config: Path,
            command: str | None = None) -> tuple[dict[str, Any], dict[str, tuple[str, str]]]:
    """`values` (a TOML config's for `command`, read from `config`) with each relative path made
    relative to the file's folder, and {path as now given: (key, item as the file wrote it)} for the
    items a refusal may name (config_file.config_refused says where they came from): those changed,
    and in a config in the working directory those that look like a file's path (a folder or a
    suffix: `out = "results"` would be found in any line that says "results")."""
    folder = config.parent
    out, given = placed(values, lambda text: _path(text, folder), command)
    named = {after: (key, before) for after, (key, before) in given.items()
             if after != before or "/" in before or os.sep in before or Path(before).suffix}
    return out, named


def _path(text: str, folder: Path) -> str:
    """`text` from `folder`: unchanged where absolute, the home folder's for ~, else joined."""
    path = Path(text).expanduser()
    if path.is_absolute():
        return str(path) if text.startswith("~") else text
    return text if folder == Path(".") else str(folder / path)
