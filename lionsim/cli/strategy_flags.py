"""The strategy options' flags, generated from the registry (each module's Options).

`@strategy_options` gives a command one flag per option key of every registered strategy
(`--demo-topk`, `--local-steps`, a plug-in's own) and `--opt NAME.FIELD=VALUE`, and hands the
command the ones given as `strategy_options` (config key or NAME.FIELD -> value). The
signature is built when click reads it, so plug-ins loaded before (lionsim.cli.preload) add
their flags, and only for a command that takes strategies (reading the registry imports torch,
which `lionsim networks` or `lionsim --help` never do).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from typing import Annotated, Callable, Optional

import typer

from lionsim.cli.options import Plugin, whole_number
from lionsim.errors import LionsimError

OPT = "opt"
PLUGIN = "plugin"


def _source(full: bool) -> tuple:
    """Where the flags come from now: nothing (not `full`), the table of the built-in strategies'
    flags while it is current (lionsim.cli.flag_table: no torch), else the registry, named by its
    (name, class) pairs (a plug-in registering or forgotten makes another source)."""
    if not full:
        return ()
    from lionsim.cli.flag_table import usable

    if usable():
        return ("table",)
    from lionsim.strategies import STRATEGIES

    return tuple(STRATEGIES.items())


@functools.lru_cache(maxsize=8)
def _flags_of(source: tuple) -> dict:
    if not source:
        return {}
    if source == ("table",):
        from lionsim.cli.flag_table import cached

        return cached()
    from lionsim.strategies.core.given import check_flags, flags, registered_specs

    check_flags(registered_specs())
    return flags()


def _flags(full: bool) -> dict:
    """Config key -> the options its flag sets ({} unless `full`), from `_source` (once per source:
    every command's signature reads them, each time click builds the app)."""
    return _flags_of(_source(full))


def _generated(func: Callable, full: bool = True, hide: Callable | None = None) -> inspect.Signature:
    """`func`'s own parameters (but strategy_options, plugins), then the strategies' flags (not
    built unless `full`; those `hide` says of their options left out of --help, still taken), --plugin
    and --opt."""
    return _signature(func, _source(full), hide)


@functools.lru_cache(maxsize=32)
def _signature(func: Callable, source: tuple, hide: Callable | None = None) -> inspect.Signature:
    own = [p for name, p in inspect.signature(func, eval_str=True).parameters.items()
           if name not in ("strategy_options", "plugins")]
    taken = {p.name for p in own}
    params = list(own)
    for key, specs in _flags_of(source).items():
        if key in taken:
            raise LionsimError(f"strategy {specs[0].strategy!r}: option flag {specs[0].flag} is already a "
                               f"`lionsim {func.__name__.removesuffix('_cmd')}` option; choose another flag")
        users = ", ".join(dict.fromkeys(s.strategy for s in specs))
        default = specs[0].default
        help_text = f"{users}: {specs[0].help} (default {default}, or the strategy's for the workload)"
        kind = specs[0].type
        params.append(inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, default=None,
                                        annotation=Annotated[Optional[kind], typer.Option(
                                            specs[0].flag, help=help_text, hidden=hide is not None and hide(specs),
                                            parser=whole_number if kind is int else None)]))
    params.append(inspect.Parameter(PLUGIN, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Plugin))
    params.append(inspect.Parameter(OPT, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[
        Optional[list[str]], typer.Option("--opt", metavar="NAME.FIELD=VALUE", help=(
            "A strategy's option, repeatable: demo.topk=16 sets the option topk of demo's runs only "
            "(`lionsim strategies --matrix` lists each strategy's options)."))]))
    return inspect.Signature(params)


STRATEGY_COMMANDS = ("bench", "estimate", "sweep")
"""The commands that take strategies: only these build their flags (the registry imports torch)."""
_FULL = [True]
_COMMANDS: list[_Command] = []


def current() -> tuple:
    """What the commands' signatures are built from now (a key for the click app built from them)."""
    return (_FULL[0], _source(_FULL[0]))


@contextlib.contextmanager
def light(argv: list[str]):
    """While main() runs `argv`: unless it names a command that takes strategies, their flags are
    not built (so `lionsim networks` or `lionsim --help` never import torch). Afterwards the flags
    are full again: a caller that invokes the app itself (typer's runner, a docs block) gets every
    option whatever ran before it."""
    _FULL[0] = any(arg in STRATEGY_COMMANDS for arg in argv)
    try:
        yield
    finally:
        _FULL[0] = True


class _Command:
    """A command whose signature (what click parses) is its own parameters plus the registry's
    strategy options, built when click reads it: after plug-ins loaded, never at import."""

    def __init__(self, func: Callable, hide: Callable | None = None) -> None:
        functools.update_wrapper(self, func)
        self.hide = hide
        _COMMANDS.append(self)

    @property
    def __signature__(self) -> inspect.Signature:
        return _generated(self.__wrapped__, full=_FULL[0], hide=self.hide)

    def __call__(self, **kwargs):
        from lionsim.plugins import load_plugins

        keys = set(_flags(True))
        given = {key: kwargs.pop(key) for key in list(kwargs) if key in keys}
        given = {k: v for k, v in given.items() if v is not None}
        opts = kwargs.pop(OPT, None) or []
        plugins = load_plugins(kwargs.pop(PLUGIN, None) or [])
        if opts:  # the strategies' module: only when --opt is given (it imports torch)
            from lionsim.strategies.core.form import parse_opt
            from lionsim.strategies.core.given import canonical_opts

            given.update(canonical_opts(parse_opt(opts)))  # after the plug-ins: their names too
        return self.__wrapped__(**kwargs, strategy_options=given, plugins=plugins)


def strategy_options(func: Callable | None = None, *, hide: Callable | None = None) -> Callable:
    """Decorator (below @app.command): the strategy option flags and --plugin for `func`, which
    takes them as the keywords `strategy_options` and `plugins` (the files' resolved paths).
    `hide(specs)` (given as `@strategy_options(hide=...)`): True leaves a flag out of the command's
    --help, its options `specs` (each with `priced`); the command still takes it (and may refuse it)."""
    if func is None:
        return functools.partial(strategy_options, hide=hide)
    return _Command(func, hide)


def refresh() -> None:
    """Check the registry's flags against every strategy command's own options (after plug-ins
    registered strategies): a clash is one line now, not when click reads the command."""
    if _FULL[0]:
        for command in _COMMANDS:
            _generated(command.__wrapped__, full=True, hide=command.hide)
