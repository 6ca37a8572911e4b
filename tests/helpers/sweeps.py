"""A sweep root's files as comparable text: two sweeps that trained the same cells (resumed, in
parallel, on another executor) must write the same files but for the fields that say when and
where they ran."""

from __future__ import annotations

import json
from pathlib import Path

WALL_CLOCK = ("argv", "started", "duration_s", "host")
"""run.json fields that differ run to run."""


def sweep_files(root: Path) -> dict[str, str]:
    """Every file of a sweep root as text, run.json without its wall-clock fields and its own --out;
    sweep.json and the plots left out."""
    texts = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.name != "sweep.json" and path.suffix not in (".png", ".svg"):
            text = path.read_text()
            if path.name == "run.json":
                meta = json.loads(text)
                for key in WALL_CLOCK:
                    meta.pop(key)
                meta["config"].pop("out")  # the cell's own path
                text = json.dumps(meta, sort_keys=True)
            texts[str(path.relative_to(root))] = text
    return texts
