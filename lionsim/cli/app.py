"""The typer app, its error handling and `--config FILE.toml` defaults.

Each command lives in its own module of this package, builds a typed config and calls one
library function; only this layer prints. Bad input anywhere (a LionsimError, a usage
error) becomes one line on stderr and exit code 2.
"""

from __future__ import annotations

import difflib
import functools
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Sequence

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from lionsim.errors import LionsimError
from lionsim.reports.widths import Environ, shaped
from lionsim.usercode import EXIT_CODE, UserCodeError

# typer >= 0.20 vendors click as typer._click; older typer uses click itself.
click = getattr(typer, "_click", None)
if click is None:  # pragma: no cover
    import click

DESCRIPTION = ("Benchmark and simulator for communication-efficient data-parallel training (Distributed Lion, "
               "Lion Cub, signSGD, PowerSGD, DiLoCo, Muon, Dion and more) over modelled or measured networks.")
"""The top-level help; pyproject.toml's description says the same."""

app = typer.Typer(
    name="lionsim",
    help=DESCRIPTION,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
class _Console(Console):
    def print(self, *objects, crop: bool = False, **kwargs) -> None:
        """Never crops (rich cuts every line at the console's width): a table whose numbers alone
        are wider than a narrow terminal (reports.widths.fit) prints whole, its lines running on
        past the edge, where a number cut to fit would read as another number. Off a terminal a
        table's lines lose the blanks rich pads them with to the table's width (a script or a diff
        reads `mfu 0.4`, not `mfu 0.4   `); the columns stay aligned, as only line ends move. Prose
        too: rich wraps a long line at a space it leaves at the line's end (`wrote 17 files to
        ..., `), so every print off a terminal loses its lines' trailing blanks."""
        if self.is_terminal:
            super().print(*objects, crop=crop, **kwargs)
            return
        with self.capture() as captured:
            super().print(*objects, crop=crop, **kwargs)
        text = "\n".join(line.rstrip() for line in captured.get().split("\n"))
        super().print(Text.from_ansi(text) if "\x1b" in text else Text(text), end="", soft_wrap=True,
                      crop=False, markup=False, highlight=False)

    def on_broken_pipe(self) -> None:
        """A reader that stops early (`lionsim strategies | head -1`) is not an error: the rest of
        the output goes nowhere and the command carries on (rich would exit 1 at once), so
        every file it writes is still written and its exit code is its own (0 when it succeeds)."""
        self.quiet = True
        stream = sys.stderr if self.stderr else sys.stdout
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())

    _environ = Environ()  # COLUMNS=0 (or junk) as unset: rich drew a console 0 wide, printing nothing

    def render(self, renderable, options=None):
        """A table (not a layout grid) drawn by the one rule of lionsim.reports.widths.shaped: fitted
        to the console's width (words break between words, numbers never), its notes at the
        table's width, and wider than the console where its numbers need it: rich otherwise
        squeezes it, folding numbers ("0.01" / "3") and dropping the rows and columns that cannot
        fit. Every print of a table passes here, a table nested in a group too."""
        if isinstance(renderable, Table) and renderable.box is not None:
            options = options or self.options
            options = options.update_width(shaped(renderable, options.max_width))
        return super().render(renderable, options)


def out_console(width: int | None = None) -> Console:
    """The stdout console, or (off a terminal, where nothing sets the width) one of `width`
    columns on the same file: both exit 0 when the reader stops early."""
    if width is None or console.is_terminal:
        return console
    return _Console(file=console.file, width=max(console.width, width), highlight=False, emoji=False)


console = _Console(emoji=False)  # ":end:" in a message is text, not an emoji code
err_console = _Console(stderr=True, soft_wrap=True, highlight=False, emoji=False)

ConfigOption = typer.Option(
    None, "--config", help="TOML file (or a run.json lionsim wrote) giving any option of this command; flags on the command line win."
)


def option_given(ctx: typer.Context, name: str) -> bool:
    """Whether the command's option `name` was given (on the command line or in --config), rather
    than left at its default."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name != "DEFAULT"


_INVOKED: list[list[str]] = []
"""The arguments of the main() call running now (innermost last)."""


def invoked() -> list[str]:
    """The command line that is running, as a user types it: `lionsim ARGS` where main() runs it
    (the process's own command line, or main(argv) from a test, a docs block, a script), else the
    process's own argv (typer's test runner calls the app directly). Files record it (estimate.json,
    run.json) so `lionsim report` can print the command that made them."""
    return ["lionsim", *_INVOKED[-1]] if _INVOKED else list(sys.argv)


def fail(message: str, code: int = 2) -> None:
    """Print one error line and exit (2: bad input)."""
    err_console.print(f"error: {message}", markup=False)
    sys.exit(code)


def _config_path(argv: Sequence[str]) -> str | None:
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


def takes_plugin(command: str | None) -> bool:
    """Whether the command named takes --plugin: those that run or list strategies and transports
    (what a plug-in registers) declare it; comm, regress, networks, workloads and devices do not,
    so their --help does not list it. An unknown name counts as taking it (click refuses it next)."""
    import inspect

    commands = {(c.name or c.callback.__name__.replace("_", "-")): c.callback for c in app.registered_commands}
    if command in commands:
        return "plugin" in inspect.signature(commands[command]).parameters
    return True  # a group (sweep, whose run and merge both take it) or no such command


def _preload_plugins(argv: Sequence[str]) -> None:
    """Load the plug-ins argv names (`--plugin`, and a --config file's `plugin` list) before click
    reads the commands, so their strategies' flags exist (lionsim.cli.strategy_flags). A command
    that takes no --plugin loads none: click refuses the option there, before any file is imported."""
    from lionsim.cli.strategy_flags import refresh
    from lionsim.plugins import load_plugins

    if not takes_plugin(next((a for a in argv if not a.startswith("-")), None)):
        return
    args, paths = list(argv), []
    for i, arg in enumerate(args):
        if arg == "--plugin" and i + 1 < len(args):
            paths.append(args[i + 1])
        elif arg.startswith("--plugin="):
            paths.append(arg.split("=", 1)[1])
    config = _config_path(args)
    if config is not None and Path(config).is_file():  # a missing or bad file is _config_defaults' to report
        paths += _recorded_plugins(Path(config))
    if paths:
        from lionsim.plugins import LOADED, unload_plugin

        before = set(LOADED)
        loaded = load_plugins(paths)
        try:
            refresh()
        except LionsimError:  # a flag no command can take: the plug-ins just loaded go again
            for key in dict.fromkeys(k for k in loaded if k not in before):
                unload_plugin(key)
            refresh()
            raise


def _recorded_plugins(path: Path) -> list:
    """The `plugin` list of a TOML --config or of a run.json's config ([] if it has none or is unreadable)."""
    try:
        data = load_toml(path) if path.suffix.lower() != ".json" else json.loads(path.read_text(encoding="utf-8"))
    except (LionsimError, OSError, ValueError):
        return []
    if path.suffix.lower() == ".json":
        data = data.get("config") if isinstance(data, dict) else None
    recorded = data.get("plugin") if isinstance(data, dict) else None
    return [] if not recorded else recorded if isinstance(recorded, list) else [recorded]


def _config_defaults(argv: Sequence[str]) -> dict[str, Any] | None:
    """Read `--config FILE` from argv into click's default_map for the chosen command."""
    args = list(argv)
    path = _config_path(args)
    if path is None:
        return None
    command_name = next((a for a in args if not a.startswith("-")), None)
    group = click_app()
    command = group.get_command(click.Context(group), command_name) if command_name else None
    if command is None:
        return None  # click reports the missing or unknown command itself
    values = load_config(Path(path), command_name)
    accepted = {p.name: p for p in command.params if not _is_argument(p) and p.name != "config"}
    if command_name == "bench":  # (a sweep runs on sim alone; comm's files record no run to replay)
        values = _on_typed_backend(values, args, accepted, path)
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
        if accepted[name].multiple and not isinstance(value, list):
            value = [value]
        if isinstance(value, dict):  # a table (e.g. [hyper."dlion-mavo"]) travels as JSON text
            value = json.dumps(value)
        defaults[name] = value
    _CONFIG_KEYS.update({k.replace("-", "_"): (k, path, v) for k, v in values.items()})
    return {command_name: defaults}


def _on_typed_backend(values: dict[str, Any], args: list[str], accepted: dict, path: str) -> dict[str, Any]:
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


_CONFIG_KEYS: dict[str, tuple[str, str, Any]] = {}
"""Option name -> (its key, the --config file, its value as the file wrote it) for the values a config
file gave: a refusal echoes the file's value (`workers = 0`), not the one click got (`[0]`, as comm's
--workers is a list)."""


def _from_config(e: Exception, argv: Sequence[str], default_map: dict | None) -> str | None:
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


def _config_refused(message: str, argv: Sequence[str], default_map: dict | None) -> str | None:
    """A refusal of an option's value (a config's own check, lionsim.config) where the value
    came from --config, not from the command line: said as _from_config says a value click
    refuses, "bad workers = -4 in FILE; accepted: ..." (nobody typed --workers); a refusal of a
    key in a table the file gave ([hyper.adamw]) names the file after the key, "bad
    hyper.adamw in FILE: ...". None where the flag was typed, or no file set it."""
    table = _REFUSED_TABLE.match(message)
    if table and _from_file(table.group(1).replace("-", "_"), "--" + table.group(1), argv, default_map):
        _, path, _ = _CONFIG_KEYS[table.group(1).replace("-", "_")]
        cut = table.end()  # "bad hyper.adamw: why" -> "bad hyper.adamw in FILE: why"
        if message[cut:cut + 1] not in (":", ";"):  # "bad hyper.adamw.lr -1; accepted" -> "... -1 in FILE; accepted"
            cut = message.find("; ", cut) if "; " in message[cut:] else len(message)
        return f"{message[:cut]} in {path}{message[cut:]}"
    found = _REFUSED_FLAG.match(message)
    if not found:
        return None
    name = found.group(1)[2:].replace("-", "_")
    if not _from_file(name, found.group(1), argv, default_map):
        return None
    key, path, value = _CONFIG_KEYS[name]
    reason = _REASON.fullmatch(message[found.end():])
    value = json.dumps(value)  # TOML's spelling: true, "four", [4, 0]
    return f"bad {key} = {value} in {path}{reason.group(1)}" if reason else f"in {path}: {message}"


def _from_file(name: str, flag: str, argv: Sequence[str], default_map: dict | None) -> bool:
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
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LionsimError(f"bad --config {path}: no such file; accepted: {CONFIG_FILES}") from None
    except IsADirectoryError:
        raise LionsimError(f"bad --config {path}: it is a directory; accepted: {CONFIG_FILES}") from None
    except OSError as e:  # unreadable: permissions, a symlink loop, a name too long
        raise LionsimError(f"cannot read config file {path}: {e.strerror or e}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise LionsimError(f"malformed JSON in {path}: {e}") from None
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
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise LionsimError(f"bad --config {path}: no such file; accepted: {CONFIG_FILES}") from None
    except IsADirectoryError:
        raise LionsimError(f"bad --config {path}: it is a directory; accepted: {CONFIG_FILES}") from None
    except OSError as e:
        raise LionsimError(f"cannot read config file {path}: {e.strerror or e}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise LionsimError(f"malformed TOML in {path}: {e}") from None


_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


KINDS = {"int": "a whole number", "float": "a number", "bool": "true or false", "string": "text"}
"""What a typed option takes, by the kind pydantic's error type names (int_parsing, float_type...)."""
BOUNDS = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}
"""A bound's error type -> its sign (its value in the error's ctx under gt, ge, lt, le)."""


def takes(e) -> tuple[str, str, str | None] | None:
    """Why a typed option's bad value is wrong, the value as typed and what is accepted (None: the
    option's own range, lionsim.ranges.accepted), ("not a whole number", "1.5", None): from a
    whole-number parser's refusal (lionsim.cli.options.NotWhole), or from the pydantic error typer
    converts every int and float option with (its BadParameter's cause), in place of pydantic's
    "Input should be a valid integer, unable to parse string as an integer". None: not a
    conversion error (the message is the parameter's own)."""
    from lionsim.cli.options import NotWhole

    if isinstance(e, NotWhole):
        return e.why, e.text, None
    cause = e.__cause__
    errors = cause.errors() if hasattr(cause, "errors") and callable(cause.errors) else None
    if not errors:
        return None
    error = errors[0]
    kind, got = error.get("type", ""), error.get("input")
    if kind in BOUNDS:
        bound = next(iter((error.get("ctx") or {}).values()), "?")
        return "", str(got), f"a number {BOUNDS[kind]} {bound}"
    what = KINDS.get(kind.split("_")[0])
    if what is None:
        return None
    return f"not {what}", str(got), None if kind.startswith("int") else what


def bad_parameter(e) -> str:
    """A bad option value in the house's one line, "bad --steps 1.5: not a whole number; accepted:
    a whole number from 1 to 10,000,000", where it is a typed option's conversion (takes), else
    click's message."""
    from lionsim.ranges import accepted, refusal
    from lionsim.whole import Text

    said = takes(e) if isinstance(e, click.exceptions.BadParameter) else None
    if said is None:
        return e.format_message()
    opts = getattr(e.param, "opts", None) or [getattr(e.param, "name", "the value")]
    option = max(opts, key=len)
    why, got, words = said
    return refusal(option, Text(got), words or accepted(option), why)


def no_such_option(e) -> str:
    """An unknown option: the command's options, and the nearest only if it is near (click
    offers whatever shares a letter: `regress --lr` got "--all, --help, --list")."""
    import difflib

    command = e.ctx.command if e.ctx is not None else None
    names = sorted({n for p in getattr(command, "params", []) for n in p.opts if n.startswith("--")})
    where = f" for `lionsim {e.ctx.info_name}`" if e.ctx is not None and e.ctx.info_name != "lionsim" else ""
    accepted = f"; accepted: {', '.join(names)}" if names else ""
    # compared without the dashes, which every name shares (they made `--lr` look like `--all`)
    close = difflib.get_close_matches(e.option_name.lstrip("-").lower(), [n[2:].lower() for n in names], n=1, cutoff=0.6)
    if close:  # the near one first, not after 80 names: `lionsim CMD --help` lists them all
        command = f"lionsim {e.ctx.info_name}" if where else "lionsim"
        return f"no such option {e.option_name}{where}; did you mean '--{close[0]}'? (every option: {command} --help)"
    return f"no such option {e.option_name}{where}{accepted}"


def no_such_command(e) -> str | None:
    """An unknown command in the house style, "no such command 'bnech'; did you mean 'bench'?
    (every command: lionsim --help)", the commands listed where none is near; None: not that
    error. (typer says "No such command 'bnech'." and appends click's own suggestion.)"""
    import re

    from lionsim.registry import did_you_mean

    found = re.match(r"No such command '(.*)'\.", e.message or "")
    group = e.ctx.command if e.ctx is not None else None
    if found is None or not hasattr(group, "list_commands"):
        return None
    name, names = found.group(1), group.list_commands(e.ctx)
    prefix = "lionsim" if e.ctx.info_name in (None, "lionsim") else f"lionsim {e.ctx.info_name}"
    near = did_you_mean(name, names)
    if near:
        return f"no such command {name!r}{near} (every command: {prefix} --help)"
    return f"no such command {name!r}; accepted: {', '.join(names)}"


def click_app():
    """The click group typer builds from `app`, built once per set of strategy flags (building it
    reads every command's signature: most of an in-process call's time when built every time).
    Called directly, not through `app()`, which would also set sys.excepthook for the process."""
    from lionsim.cli.strategy_flags import current

    return _built(current())


@functools.lru_cache(maxsize=8)
def _built(flags: tuple):
    return typer.main.get_command(app)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point: run the app, map errors to exit codes. (The commands are
    registered on `app` by lionsim/cli/__init__.py, which Python runs before this module.)

    `main()` is the process's own command line (`lionsim ARGS`, `python -m lionsim ARGS`): Ctrl-C
    or SIGTERM ends it with one line and exit 2. `main(argv)` is a call from Python (a test, a
    notebook, a script): the same, and then the signal goes on to the caller's own handler
    (lionsim.training.stop.command_signals), which for Ctrl-C raises KeyboardInterrupt there."""
    from lionsim.training.stop import command_signals

    from lionsim.cli.strategy_flags import light

    args = list(sys.argv[1:] if argv is None else argv)
    _INVOKED.append(args)
    try:
        with command_signals(hand_back=argv is not None), light(args):
            _run(args)
    finally:
        _INVOKED.pop()


def _run(argv: list[str]) -> None:
    default_map = None
    try:
        _preload_plugins(argv)
        default_map = _config_defaults(argv)
        result = click_app()(args=argv, prog_name="lionsim", standalone_mode=False, default_map=default_map)
    except LionsimError as e:
        fail(_config_refused(str(e), argv, default_map) or str(e))
    except UserCodeError as e:  # the user's code raised during a run (lionsim.usercode): exit 3
        fail(str(e), code=EXIT_CODE)
    except _NO_ARGS_IS_HELP as e:  # bare `lionsim`: the help, on stderr, and exit 2 as click does for a missing command
        err_console.print(e.format_message(), markup=False, highlight=False)
        sys.exit(2)
    except click.exceptions.NoSuchOption as e:
        fail(no_such_option(e))
    except click.exceptions.UsageError as e:
        fail(no_such_command(e) or _from_config(e, argv, default_map) or bad_parameter(e))
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        fail("interrupted: no results were written")
    if result == 130:  # typer turns Ctrl-C into Exit(130) and, non-standalone, returns the code
        fail("interrupted: no results were written")
    sys.exit(result if isinstance(result, int) else 0)
