"""Click's exceptions as lionsim's one-line refusals: a bad option value ("bad --steps 1.5: not a
whole number; accepted: ..."), an unknown option, an unknown command and an argument too many,
each with what is accepted or the nearest name. Only the wording: lionsim.cli.app.main catches the exceptions."""

from __future__ import annotations

import difflib
import re

from lionsim.cli.click_compat import click
from lionsim.cli.one_value import sweep_one_value

KINDS = {"int": "a whole number", "float": "a number", "bool": "true or false", "string": "text"}
"""What a typed option takes, by the kind pydantic's error type names (int_parsing, float_type...)."""
BOUNDS = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}
"""A bound's error type -> its sign (its value in the error's ctx under gt, ge, lt, le)."""


def takes(e) -> tuple[str, str, str | None] | None:
    """Why a typed option's bad value is wrong, the value as typed and what is accepted (None: the
    option's own range, lionsim.ranges.accepted), ("not a whole number", "1.5", None): from a
    whole-number parser's refusal (lionsim.cli.options.NotWhole, with its range where the parser
    knows it), or from the pydantic error typer converts every int and float option with (its
    BadParameter's cause), in place of pydantic's "Input should be a valid integer, unable to parse
    string as an integer". None: not a conversion error (the message is the parameter's own)."""
    from lionsim.cli.options import NotWhole

    if isinstance(e, NotWhole):
        return e.why, e.text, e.accepted
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
    if kind.startswith("float"):  # a shared option's range, as its out-of-range value is told (--lr abc as --lr -1)
        from lionsim.ranges import accepted

        return f"not {what}", str(got), accepted(_flag(e), whole=False)
    return f"not {what}", str(got), None if kind.startswith("int") else what


def _flag(e) -> str:
    """The option a refusal names: its longest spelling (--lr, not -l)."""
    opts = getattr(e.param, "opts", None) or [getattr(e.param, "name", "the value")]
    return max(opts, key=len)


def bad_parameter(e) -> str:
    """A bad option value in the house's one line, "bad --steps 1.5: not a whole number; accepted:
    a whole number from 1 to 10,000,000", where it is a typed option's conversion (takes), else
    click's message."""
    from lionsim.ranges import accepted, refusal
    from lionsim.whole import Text

    said = takes(e) if isinstance(e, click.exceptions.BadParameter) else None
    if said is None:
        return e.format_message()
    option = _flag(e)
    why, got, words = said
    return refusal(option, Text(got), words or accepted(option), why) + _one_value(e, got)


NUMBER_AXES = ("--lr", "--workers", "--seed")
"""The number options that are a sweep's axes: bench takes one value, sweep a comma list."""


def _one_value(e, got: str) -> str:
    """Where a number option was given a comma list: of `lionsim sweep` (`--weight-decay 0,0.1`), what
    to do instead, since it is no axis of the grid (one value prices every cell); of `lionsim bench`
    (`--lr 0.001,0.01`), that sweep takes it as a list; "" elsewhere."""
    command = getattr(e.ctx, "info_name", None) if e.ctx is not None else None
    option = max(getattr(e.param, "opts", None) or ["--the-option"], key=len)
    if command == "bench" and "," in got and option in NUMBER_AXES:
        return f"; bench takes one value, `lionsim sweep {option} {got}` a comma list"
    return sweep_one_value(option, command) if "," in got else ""


INSTEAD = {("sweep", "--resume"): "a sweep resumes by itself: rerun the same command and its finished cells are "
                                  "kept (docs/outputs.md)",
           ("bench", "--gpus-per-node"): "bench's nodes are its --network's: a preset of GPU nodes "
                                         "(h100x8-10gbe, h100x8-100gbe, dgx-h100, ...: lionsim networks) or a profile "
                                         "with workers_per_node (docs/backends.md, profile files); estimate and comm take "
                                         "--gpus-per-node"}
"""Options users bring from another command that this one has no need of: what it does instead."""


def no_such_option(e) -> str:
    """An unknown option: the command's options, and the nearest only if it is near (click
    offers whatever shares a letter: `regress --lr` got "--all, --help, --list"). Those its --help
    hides are left out: estimate hides the strategy flags it refuses (they change only training)."""
    command = e.ctx.command if e.ctx is not None else None
    names = sorted({n for p in getattr(command, "params", []) if not getattr(p, "hidden", False)
                    for n in p.opts if n.startswith("--")})
    where = f" for `lionsim {e.ctx.info_name}`" if e.ctx is not None and e.ctx.info_name != "lionsim" else ""
    if instead := INSTEAD.get((getattr(e.ctx, "info_name", None), e.option_name)):
        return f"no such option {e.option_name}{where}: {instead}"
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


def extra_arguments(e, argv: list[str]) -> str | None:
    """Arguments a command does not take in the house style, "unexpected argument 'bogus' after
    --traits, a flag that takes no value; accepted: lionsim networks [OPTIONS], no arguments", the
    command's usage as its --help writes it; None: not that error. (click says "Got unexpected
    extra argument(s) (bogus)", naming neither the command nor what it takes.)"""
    found = re.match(r"Got unexpected extra arguments? ?(?:\(s\) )?\((.*)\)$", e.message or "")
    if found is None or e.ctx is None:
        return None
    extra, command = found.group(1).split(" "), e.ctx.command
    flags = {o for p in command.params if getattr(p, "is_flag", False) for o in p.opts}
    after = next((argv[i - 1] for i in range(1, len(argv)) if argv[i] in extra and argv[i - 1] in flags), None)
    pieces = command.collect_usage_pieces(e.ctx)
    takes_none = not any(getattr(p, "param_type_name", "") == "argument" for p in command.params)
    return (f"unexpected argument{'s' * (len(extra) > 1)} {', '.join(map(repr, extra))}"
            + (f" after {after}, a flag that takes no value" if after else "")
            + f"; accepted: {e.ctx.command_path} {' '.join(pieces)}" + (", no arguments" if takes_none else ""))
