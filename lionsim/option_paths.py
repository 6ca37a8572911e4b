"""Which option values are paths, and those values placed elsewhere: a TOML --config's relative
paths are read from the file's folder (lionsim.cli.config_paths), and run.json records each as an
absolute path (lionsim.training.record), so a replay from any working directory reads the same
files; a record's argv (what was typed) is run from the folder it ran in where it names a relative
path there (typed_relative: lionsim.reports.md).

Which values are paths: a key that only takes one (data, out, from-run, fit, plugin, and
regress's baseline-dir, junit and report); a network that names a profile file (.toml, .json or a
folder in it), not a preset; a workload or model given as FILE.py:FUNC (its FILE); a
compute-spread given as trace:FILE. Where the command takes a comma list (sweep's network and
workload axes), each item of a comma string is one of these."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Sequence

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
FLAGS = {**{f"--{key.replace('_', '-')}": key for key in PATHS | PROFILES | SPECS | SPREADS},
         "-o": "out", "-m": "model", "-w": "workload", "--config": "config"}
"""Each of these keys' flags on a command line (and --config's: its file is the working directory's,
the paths in it its own folder's)."""
LAUNCHERS = frozenset({"lionsim", "__main__.py", "cli.py"})
"""The names argv[0] has where a recorded command ran through lionsim itself, so argv[1] is its
command: the `lionsim` script, `python -m lionsim` (its __main__.py), `python cli.py` (the
checkout's cli.py: `python cli.py ARGS` is `lionsim ARGS`). `launched_by_lionsim` asks it."""


def launched_by_lionsim(argv: Sequence[str]) -> bool:
    """Whether a recorded command line ran through lionsim's launcher (LAUNCHERS)."""
    return bool(argv) and Path(argv[0]).name in LAUNCHERS


DEFAULT_OUT = frozenset({"bench", "sweep"})
"""The commands whose --out, not typed, is a folder of the working directory (reports/bench, ...)."""


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


def is_profile_file(network: str) -> bool:
    """Whether a --network value names a profile file (a preset's name names none)."""
    return not _kept(network, "profile")


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


def typed_relative(argv: Sequence[str]) -> list[str]:
    """The paths a recorded command line (`lionsim CMD ARGS`: run.json's, sweep.json's or
    estimate.json's argv) names relative to the folder it ran in, so that only from there does it
    run as typed: each path-valued option's (a preset or a registered name is no path), --config's
    file, `sweep merge`'s ROOT, and a bench's or sweep's --out left to its default."""
    command, args = (argv[1] if len(argv) > 1 else ""), list(argv[2:])
    values: dict[str, list[str]] = {}
    i = 0
    while i < len(args):
        flag, eq, value = args[i].partition("=")
        if flag in FLAGS and not eq and i + 1 < len(args):
            i, value = i + 1, args[i + 1]
        elif flag[:2] in FLAGS and flag[1:2] != "-" and len(flag) > 2:  # -oDIR, as click takes it
            flag, value = flag[:2], args[i][2:]
        if flag in FLAGS and value:
            values.setdefault(FLAGS[flag], []).append(value)
        i += 1
    if command == "sweep" and args[:1] == ["merge"]:
        values["out"] = [a for a in args[1:2] if not a.startswith("-")]
    paths = values.pop("config", [])
    placed(values, lambda path: paths.append(path) or path, command)  # each path itself (a spec's FILE)
    default_out = command in DEFAULT_OUT and "out" not in values
    return [p for p in paths if not os.path.isabs(os.path.expanduser(p))] + (["--out's default"] if default_out else [])
