"""The strategy options' flags, generated from the registry (each module's Options).

`@strategy_options` gives a command one flag per option key of every registered strategy
(`--demo-topk`, `--local-steps`, a plug-in's own) and `--opt NAME.FIELD=VALUE`, and hands the
command the ones given as `strategy_options` (config key or NAME.FIELD -> value). The flags
are rebuilt (`refresh`) after plug-ins load, before click reads the commands' signatures.
"""

from __future__ import annotations

import functools
import inspect
from typing import Annotated, Callable, Optional

import typer

from lionsim.errors import LionsimError

OPT = "opt"
_COMMANDS: list[Callable] = []


def _generated(func: Callable) -> inspect.Signature:
    """`func`'s own parameters (but strategy_options), then the registry's flags and --opt."""
    from lionsim.strategies.given import check_flags, flags, registered_specs

    check_flags(registered_specs())
    own = [p for name, p in inspect.signature(func, eval_str=True).parameters.items() if name != "strategy_options"]
    taken = {p.name for p in own}
    params = list(own)
    for key, specs in flags().items():
        if key in taken:
            raise LionsimError(f"strategy {specs[0].strategy!r}: option flag {specs[0].flag} is already a "
                               f"`lionsim {func.__name__.removesuffix('_cmd')}` option; choose another flag")
        users = ", ".join(dict.fromkeys(s.strategy for s in specs))
        default = specs[0].default
        help_text = f"{users}: {specs[0].help} (default {default}, or the strategy's for the workload)"
        kind = specs[0].type
        params.append(inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, default=None,
                                        annotation=Annotated[Optional[kind], typer.Option(specs[0].flag, help=help_text)]))
    params.append(inspect.Parameter(OPT, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[
        Optional[list[str]], typer.Option("--opt", metavar="NAME.FIELD=VALUE", help=(
            "A strategy's option, repeatable: demo.topk=16 sets the option topk of demo's runs only "
            "(`lionsim strategies --matrix` lists each strategy's options)."))]))
    return inspect.Signature(params)


def strategy_options(func: Callable) -> Callable:
    """Decorator (below @app.command): the strategy option flags for `func`, which takes them as
    the keyword `strategy_options`."""

    @functools.wraps(func)
    def command(**kwargs):
        from lionsim.strategies.form import parse_opt
        from lionsim.strategies.given import flags

        keys = set(flags())
        given = {key: kwargs.pop(key) for key in list(kwargs) if key in keys}
        given = {k: v for k, v in given.items() if v is not None}
        given.update(parse_opt(kwargs.pop(OPT, None) or []))
        return func(**kwargs, strategy_options=given)

    command.__signature__ = _generated(func)
    _COMMANDS.append(command)
    return command


def refresh() -> None:
    """Rebuild every command's flags from the registry (after plug-ins registered strategies)."""
    for command in _COMMANDS:
        command.__signature__ = _generated(command.__wrapped__)
