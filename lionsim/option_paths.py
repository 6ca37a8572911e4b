"""Which option values are paths, and those values placed elsewhere: a TOML --config's relative
paths are read from the file's folder (lionsim.cli.config_paths), and run.json records each as an
absolute path (lionsim.training.record), so a replay from any working directory reads the same
files.

Which values are paths: a key that only takes one (data, out, from-run, fit, plugin, and
regress's baseline-dir, junit and report); a network that names a profile file (.toml, .json or a
folder in it), not a preset; a workload or model given as FILE.py:FUNC (its FILE); a
compute-spread given as trace:FILE. Where the command takes a comma list (sweep's network and
workload axes), each item of a comma string is one of these."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

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


def placed(values: dict[str, Any], place: Callable[[str], str],
           command: str | None = None) -> tuple[dict[str, Any], dict[str, tuple[str, str]]]:
    """`values` (options of `command`, keys in either spelling) with each path in them replaced by
    `place(path)`, and {path as now given: (key, item as given before)} for every path item."""
    out, given = dict(values), {}
    lists = COMMA_LISTS.get(command or "", frozenset())
    for key, value in values.items():
        name = key.replace("-", "_")
        kind = ("path" if name in PATHS else "profile" if name in PROFILES else "spec" if name in SPECS
                else "spread" if name in SPREADS else None)
        if kind is None:
            continue
        items = value if isinstance(value, list) else [value]
        comma = name in lists  # each item of "a.toml,1gbe" (lionsim.sweep.grid splits array items too)
        parts = [[p.strip() for p in v.split(",")] if comma and isinstance(v, str) else [v] for v in items]
        new = [[_placed(p, place, kind) for p in each] for each in parts]
        joined = [",".join(n) if comma and isinstance(v, str) else n[0] for v, n in zip(items, new)]
        out[key] = joined if isinstance(value, list) else joined[0]
        given.update({str(after): (key, before) for each, n in zip(parts, new) for before, after in zip(each, n)
                      if isinstance(before, str) and before.strip() and not _kept(before, kind)})
    return out, given


def _kept(value: str, kind: str) -> bool:
    """Whether `value` of a `kind` key names no file: a registered name, package.module:FUNC, a
    spread's own kind (lognormal:0.1), a preset's name."""
    if kind == "spec":
        target, colon, _ = value.rpartition(":")
        return not (colon and target.endswith(".py"))
    if kind == "spread":
        spec, colon, file = value.strip().partition(":")
        return not (colon and file and spec.strip().lower() == "trace")
    if kind == "profile":
        return not (Path(value).suffix.lower() in (".toml", ".json") or "/" in value or os.sep in value)
    return False


def _placed(value: Any, place: Callable[[str], str], kind: str) -> Any:
    if not isinstance(value, str) or not value.strip() or _kept(value, kind):
        return value  # a wrong type is the option's to refuse, as given; a name stays a name
    if kind == "spec":
        target, _, function = value.rpartition(":")
        return f"{place(target)}:{function}"
    if kind == "spread":  # parsed as lionsim.steptime.spread.parse_spec reads it
        spec, _, file = value.strip().partition(":")
        return f"{spec}:{place(file)}"
    return place(value)


def absolute(path: str | os.PathLike[str]) -> str:
    """`path` (relative to the working directory, or ~/...) made absolute, as run.json records a
    path; a symlink in it stays one (a replay reads through it, as the run did)."""
    return os.path.abspath(os.path.expanduser(os.fspath(path)))
