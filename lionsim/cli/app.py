"""The typer app, its consoles, `fail` and main, which runs a command line.

Each command lives in its own module of this package, builds a typed config and calls one
library function; only this layer prints. Bad input anywhere (a LionsimError, a usage
error) becomes one line on stderr and exit code 2. Before click parses, main loads the
plug-ins the line names (lionsim.cli.preload) and reads `--config FILE` into click's defaults
(lionsim.cli.config_file); click's exceptions are worded by lionsim.cli.refusals.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Sequence

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from lionsim.cli.config_file import config_defaults, config_refused, from_config
from lionsim.cli.interruption import forget, interrupted_line
from lionsim.cli.preload import preload_plugins
from lionsim.cli.click_compat import NO_ARGS_IS_HELP, click
from lionsim.cli.refusals import bad_parameter, extra_arguments, no_such_command, no_such_option
from lionsim.cli.whole_words import prose, whole_caption
from lionsim.errors import LionsimError
from lionsim.reports.widths import Environ, shaped
from lionsim.usercode import EXIT_CODE, UserCodeError

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
        ..., `), so every print off a terminal loses its lines' trailing blanks. Prose wraps between
        words only: a path or command wider than the line runs past it whole (whole_words)."""
        objects = prose(self, objects, kwargs)
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
            whole_caption(self, renderable)  # a path in it stays whole, as in prose
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


def option_typed(ctx: typer.Context, name: str) -> bool:
    """Whether the command's option `name` was given on the command line (not by --config, whose
    values click reads as defaults, nor left at its default)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


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
    loaded = _loaded_plugins()
    try:
        with command_signals(hand_back=argv is not None), light(args):
            _run(args)
    finally:
        _INVOKED.pop()
        if argv is not None:  # a call from Python ends as a shell's command does: its plug-ins with it
            _forget_plugins(loaded)


def _loaded_plugins() -> set:
    """The plug-in files loaded so far in this process (none imported: lionsim.plugins is light)."""
    from lionsim.plugins import LOADED

    return set(LOADED)


def _forget_plugins(before: set) -> None:
    """Unload the plug-ins a `main(argv)` call loaded: the next call, as the next shell command,
    knows only what it loads itself (a strategy a call's --plugin registered trained the next call's
    `-s` without it, and wrote a run.json that named no plug-in to replay it with)."""
    from lionsim.plugins import unload_since

    if unload_since(before):
        from lionsim.cli.strategy_flags import refresh

        refresh()


def _run(argv: list[str]) -> None:
    default_map = None
    forget()  # an interruption describes this command line's --out, once the command names it
    try:
        preload_plugins(argv, app)
        default_map = config_defaults(argv, click_app, err_console)
        result = click_app()(args=argv, prog_name="lionsim", standalone_mode=False, default_map=default_map)
    except LionsimError as e:
        fail(config_refused(str(e), argv, default_map, click_app) or str(e))
    except UserCodeError as e:  # the user's code raised during a run (lionsim.usercode): exit 3
        fail(str(e), code=EXIT_CODE)
    except NO_ARGS_IS_HELP as e:  # bare `lionsim`: the help, on stderr, and exit 2 as click does for a missing command
        err_console.print(e.format_message(), markup=False, highlight=False)
        sys.exit(2)
    except click.exceptions.NoSuchOption as e:
        fail(no_such_option(e))
    except click.exceptions.UsageError as e:
        fail(no_such_command(e) or extra_arguments(e, argv) or from_config(e, argv, default_map)
             or bad_parameter(e))
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        fail(interrupted_line())
    if result == 130:  # typer turns Ctrl-C into Exit(130) and, non-standalone, returns the code
        fail(interrupted_line())
    sys.exit(result if isinstance(result, int) else 0)
