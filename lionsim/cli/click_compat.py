"""The click that typer runs: typer >= 0.20 vendors it as typer._click, older typer uses click
itself. Every CLI module that names click's classes or exceptions imports it from here."""

from __future__ import annotations

import typer

click = getattr(typer, "_click", None)
if click is None:  # pragma: no cover
    import click

NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())
"""What a bare `lionsim` raises (click >= 8.2): main prints the help it carries on stderr."""

try:  # the command being parsed (a callback's option under sweep or elsewhere): vendored or click's own
    from typer._click.globals import get_current_context
except ImportError:  # pragma: no cover
    from click import get_current_context

__all__ = ["NO_ARGS_IS_HELP", "click", "get_current_context"]
