"""`lionsim --version` and the registry listings."""

from __future__ import annotations

import typer

import lionsim
from lionsim.cli.app import app, console


def _version(value: bool) -> None:
    if value:
        console.print(f"lionsim {lionsim.__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """Benchmark and simulator for sign-compressed distributed Lion over modelled networks."""
