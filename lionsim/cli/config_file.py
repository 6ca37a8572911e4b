"""`--config FILE`: a TOML file, or a run.json lionsim wrote, read into click's default_map for
the command named, and the refusals of what it gives. A key the command lacks is refused naming
the file, the nearest key and every accepted one; a bad value that came from the file (click's
refusal, or a configuration's own check) names the file and its key with the value as the file
wrote it, `bad workers = 0 in run.toml; accepted: ...`, as nobody typed --workers."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any, Callable, Sequence

from rich.console import Console

from lionsim.cli.click_compat import click
from lionsim.cli.config_paths import rebased
from lionsim.cli.refusals import takes
from lionsim.errors import LionsimError

_CONFIG_KEYS: dict[str, tuple[str, str, Any]] = {}
"""Option name -> (its key, the --config file, its value as the file wrote it) for the values a config
file gave: a refusal echoes the file's value (`workers = 0`), not the one click got (`[0]`, as comm's
--workers is a list)."""
_REBASED: dict[str, tuple[str, str, str]] = {}
"""A path a TOML config gave, as made relative to its folder (lionsim.cli.config_paths.rebased's
items) -> (its key, the file, the path as the file wrote it): a refusal naming the path says where
it came from."""


def config_path(argv: Sequence[str]) -> str | None:
    """The value of `--config` in argv (None: not given)."""
    return _typed(argv, "--config")


def _typed(argv: Sequence[str], option: str) -> str | None:
    """The last value of `option` in argv, `--option VALUE` or `--option=VALUE` (None: not given)."""
    args, value = list(argv), None
    for i, arg in enumerate(args):
        if arg == option and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith(option + "="):
            value = arg.split("=", 1)[1]
    return value


def config_defaults(argv: Sequence[str], click_app: Callable[[], Any],
                    err_console: Console) -> dict[str, Any] | None:
    """Read `--config FILE` from argv into click's default_map for the chosen command. `click_app`:
    the click group of lionsim's commands (lionsim.cli.app.click_app, called as the file is read:
    a plug-in loaded before adds flags); `err_console`: where a note goes (_on_typed_backend)."""
    args = list(argv)
    path = config_path(args)
    _CONFIG_KEYS.clear(), _REBASED.clear()  # this command's file only (tests run many in one process)
    if path is None:
        return None
    command_name = next((a for a in args if not a.startswith("-")), None)
    group = click_app()
    command = group.get_command(click.Context(group), command_name) if command_name else None
    if command is None:
        return None  # click reports the missing or unknown command itself
    written = load_config(Path(path), command_name)
    if not written:  # valid (empty TOML), but a wrong or unsaved file is worth a word: the run goes on
        err_console.print(f"note: --config {path} sets nothing (it holds no keys): the command line and the "
                          "defaults decide every option", markup=False, highlight=False)
    values = written
    if Path(path).suffix.lower() != ".json":  # a run.json's paths are absolute (an older one's the cwd's)
        values, moved = rebased(written, Path(path), command_name)
        _REBASED.update({after: (key, path, before) for after, (key, before) in moved.items()})
    accepted = {p.name: p for p in command.params if not _is_argument(p) and p.name != "config"}
    if command_name == "bench":  # (a sweep runs on sim alone; comm's files record no run to replay)
        values = _on_typed_backend(values, args, accepted, path, err_console)
    defaults: dict[str, Any] = {}
    for key, value in values.items():
        name = key.replace("-", "_")
        if name not in accepted:
            keys = sorted(n.replace("_", "-") for n in accepted)
            close = difflib.get_close_matches(key.replace("_", "-").lower(), keys, n=1, cutoff=0.6)
            near = f"; did you mean {close[0]!r}?" if close else ";"
            raise LionsimError(f"unknown key {key!r} in {path} for `lionsim {command_name}`{near} accepted: "
                               f"{', '.join(keys)}")
        if value is None:  # run.json records unset options as null: the option's own default
            continue
        if _takes_bool(accepted[name]) and not isinstance(value, bool):
            # click would read "yes", "no", "0" as it reads them typed: `overwrite = "yes"` quoted by
            # mistake ran as asked, `"false"` too; only TOML's own true/false is a boolean here
            raise LionsimError(f"bad {key} = {json.dumps(value)} in {path}: not a boolean; accepted: true or "
                               "false, unquoted")
        if accepted[name].multiple and not isinstance(value, list):
            value = [value]
        if isinstance(value, dict):  # a table (e.g. [hyper."dlion-mavo"]) travels as JSON text
            value = json.dumps(value)
        defaults[name] = value
    _CONFIG_KEYS.update({k.replace("-", "_"): (k, path, v) for k, v in written.items()})
    return {command_name: defaults}


def _takes_bool(param) -> bool:
    """A flag (every boolean option of lionsim's commands is one: --resume, --overwrite, --trace)."""
    return bool(getattr(param, "is_bool_flag", False))


def _on_typed_backend(values: dict[str, Any], args: list[str], accepted: dict, path: str,
                      err_console: Console) -> dict[str, Any]:
    """A --config whose backend the command line changes (`bench --config gloo-run/run.json --backend
    sim`, to compare a measured run with the model): the file's settings that cannot act on the new
    backend (lionsim.backends.scope: on sim the ranks, the timeout, the interface, calibration and a
    warm-up where nothing is measured, under the --compute typed if one is, else the file's; on
    gloo/nccl the bucket and a per-bucket overlap) are dropped, with one line on stderr naming them,
    so the run replays there (lionsim.config.bench.for_backend). The same options typed on the
    command line are checked as ever: one that cannot act on the backend is refused."""
    from lionsim.backends import BACKENDS
    from lionsim.backends.scope import shown
    from lionsim.config.bench import for_backend
    from lionsim.registry import match_name

    typed = _typed(args, "--backend")
    backend = match_name(typed, BACKENDS) if typed is not None else None
    recorded = match_name(str(values.get("backend")), BACKENDS)
    if backend is None or recorded is None or backend == recorded:  # a bad name: click refuses it
        return values
    kept, dropped = for_backend(values, backend, _typed(args, "--compute"))  # the compute the run will have

    def typed_too(name: str) -> bool:  # given on the command line as well: checked there, not the file's
        param = accepted.get(name)
        opts = [*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ())]
        return any(a == o or a.startswith(o + "=") for o in opts for a in args)

    named = [shown(name, v) for name, v in ((k.replace("-", "_"), v) for k, v in dropped.items()) if not typed_too(name)]
    if named:
        act = "acts" if len(named) == 1 else "act"
        err_console.print(f"note: {path} sets --backend {recorded}; on --backend {backend} it runs without "
                          f"{', '.join(named)}, which {act} on {recorded}, not on {backend}", markup=False,
                          highlight=False)
    return kept


def from_config(e: Exception, argv: Sequence[str], default_map: dict | None) -> str | None:
    """A bad value that came from --config, not from the command line: name the file and key
    (click would name the option, as if it had been typed)."""
    param = getattr(e, "param", None)
    name = getattr(param, "name", None)
    if not default_map or name not in _CONFIG_KEYS or any(o in argv for o in getattr(param, "opts", ())):
        return None
    key, path, value = _CONFIG_KEYS[name]
    said = takes(e) if isinstance(e, click.exceptions.BadParameter) else None
    if said:  # "bad workers = true in FILE: not a whole number; accepted: ...", the value in TOML's spelling
        from lionsim.ranges import accepted

        why, _, words = said
        return f"bad {key} = {json.dumps(value)} in {path}{': ' + why if why else ''}; accepted: " \
               f"{words or accepted(param.opts[0] if param.opts else key)}"
    message = getattr(e, "message", "") or e.format_message()
    return f"bad {key} = {json.dumps(value)} in {path}: {message}"


_REFUSED_FLAG = re.compile(r"bad (--[a-z0-9][a-z0-9-]*)")
"""The option a library refusal names first: "bad --workers -4; accepted: a whole number from 1 to ..."."""
_REASON = re.compile(r" [^;:]*([;:] .*)", re.DOTALL)
"""What follows the refused value in such a line: "; accepted: ..." or ": a run of 10 steps ..."."""


_REFUSED_TABLE = re.compile(r"bad ([a-z][a-z0-9_-]*)\.[^\s;:]+")
"""A refusal naming a key inside an option's table: "bad hyper.adamw: unknown key 'lrr'; ..."."""


def config_refused(message: str, argv: Sequence[str], default_map: dict | None,
                   click_app: Callable[[], Any]) -> str | None:
    """`_refused`'s line; else the message with where a path it names came from, where a TOML config
    gave it relative to its folder (lionsim.cli.config_paths): "network profile not found:
    prof/x.toml; ... (network = "x.toml" in prof/est.toml: ...)"; None where neither applies."""
    said = _refused(message, argv, default_map, click_app)
    for after, (key, path, before) in _REBASED.items():
        # _refused's plain "in FILE: ..." names neither the key nor the path as the file wrote it
        if _names(message, after) and said in (None, f"in {path}: {message}") and _from_file(
                key.replace("-", "_"), "--" + key.replace("_", "-"), argv, default_map, click_app):
            return (f"{message} ({key} = {json.dumps(before)} in {path}: a path in a config file is relative to "
                    "the file's folder)")
    return said


def _names(message: str, path: str) -> bool:
    """Whether `message` names `path` whole: `o/a.toml` is not named by a line saying `o/a.toml2`."""
    return re.search(rf"(?<![\w.~/-]){re.escape(path)}(?![\w/-]|\.\w)", message) is not None


def _refused(message: str, argv: Sequence[str], default_map: dict | None,
             click_app: Callable[[], Any]) -> str | None:
    """A refusal of an option's value (a config's own check, lionsim.config) where the value
    came from --config, not from the command line: said as from_config says a value click
    refuses, "bad workers = -4 in FILE; accepted: ..." (nobody typed --workers); a refusal of a
    key in a table the file gave ([hyper.adamw]) names the file after the key, "bad
    hyper.adamw in FILE: ...". None where the flag was typed, or no file set it. `click_app` as
    config_defaults takes it."""
    table = _REFUSED_TABLE.match(message)
    if table and _from_file(table.group(1).replace("-", "_"), "--" + table.group(1), argv, default_map, click_app):
        _, path, _ = _CONFIG_KEYS[table.group(1).replace("-", "_")]
        cut = table.end()  # "bad hyper.adamw: why" -> "bad hyper.adamw in FILE: why"
        if message[cut:cut + 1] not in (":", ";"):  # "bad hyper.adamw.lr -1; accepted" -> "... -1 in FILE; accepted"
            cut = message.find("; ", cut) if "; " in message[cut:] else len(message)
        return f"{message[:cut]} in {path}{message[cut:]}"
    found = _REFUSED_FLAG.match(message)
    if not found:
        return None
    name = found.group(1)[2:].replace("-", "_")
    if not _from_file(name, found.group(1), argv, default_map, click_app):
        return None
    key, path, value = _CONFIG_KEYS[name]
    reason = _REASON.fullmatch(message[found.end():])
    value = json.dumps(value)  # TOML's spelling: true, "four", [4, 0]
    return f"bad {key} = {value} in {path}{reason.group(1)}" if reason else f"in {path}: {message}"


def _from_file(name: str, flag: str, argv: Sequence[str], default_map: dict | None,
               click_app: Callable[[], Any]) -> bool:
    """Whether option `name` (spelled `flag`) took its value from the --config file, not typed."""
    if not default_map or name not in _CONFIG_KEYS or name not in next(iter(default_map.values()), {}):
        return False
    command_name = next((a for a in argv if not a.startswith("-")), None)
    group = click_app()
    command = group.get_command(click.Context(group), command_name) if command_name else None
    param = next((p for p in getattr(command, "params", ()) if p.name == name), None)
    opts = [*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ())] or [flag]
    return not any(a == o or a.startswith(o + "=") or (len(o) == 2 and a.startswith(o)) for o in opts for a in argv)


CONFIG_FILES = "a TOML file or a run.json lionsim wrote"
"""What --config reads, in its refusals."""


def load_config(path: Path, command: str) -> dict[str, Any]:
    """Options from a TOML file, or from a run.json that lionsim wrote (its `config`)."""
    if path.suffix.lower() != ".json":
        return load_toml(path)
    data = _parsed(path, "json")
    if not (isinstance(data, dict) and isinstance(data.get("config"), dict)):
        raise LionsimError(f"{path} is not a run record: a JSON --config must be a run.json written by lionsim")
    config = data["config"]
    if isinstance(config.get("strategy"), list):  # a bench's record: the options none of its runs reads go
        from lionsim.strategies.core.given import unread_options

        for key in unread_options(config, config["strategy"]):
            config.pop(key)
        from lionsim.training.resume import drop_inert_defaults

        drop_inert_defaults(config)
        # a measured run whose --network was left at its default recorded the default's name: a replay
        # (or --resume) leaves it a default, else the preset would read as chosen and its error come back
        if data.get("network_given") is False:
            config.pop("network", None)
    if data.get("command") != command:
        raise LionsimError(f"{path} records a `lionsim {data.get('command')}` run, not `lionsim {command}`")
    return data["config"]


def _is_argument(param) -> bool:
    return getattr(param, "param_type_name", "option") == "argument"


def load_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file, failing with one line on a missing or malformed file."""
    return _parsed(path, "toml")


def _parsed(path: Path, fmt: str) -> Any:
    """The file's TOML or JSON; one line where it is missing, unreadable or does not parse (the
    reason in plain words: lionsim.text_formats)."""
    from lionsim.text_formats import Unparsed, parse

    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise LionsimError(f"bad --config {path}: no such file; accepted: {CONFIG_FILES}") from None
    except IsADirectoryError:
        raise LionsimError(f"bad --config {path}: it is a directory; accepted: {CONFIG_FILES}") from None
    except OSError as e:  # unreadable: permissions, a symlink loop, a name too long
        raise LionsimError(f"cannot read config file {path}: {e.strerror or e}") from None
    try:
        return parse(raw, fmt)
    except Unparsed as e:
        raise LionsimError(f"bad --config {path}: {e}; accepted: {CONFIG_FILES}") from None
