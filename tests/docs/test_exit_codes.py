"""docs/outputs.md's list of exit codes against the commands' own help: every exit code a
command's --help (or an option's help) names is in the list, under that code, naming the command."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from lionsim.cli.app import app
from lionsim.cli.click_compat import click  # typer's own (it vendors click from 0.20)

OUTPUTS = Path(__file__).resolve().parents[2] / "docs" / "outputs.md"
EXIT = re.compile(r"\bexits? (?:with )?(?:code )?(\d)\b")


def _commands(command: click.Command, path: str = ""):
    """(`lionsim` path, command) of every command below `command`, groups included."""
    if path:
        yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, f"{path} {name}".strip())


def _listed() -> dict[str, str]:
    """The list under '## Exit codes': code -> its item's text, lines joined."""
    section = OUTPUTS.read_text().split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    items = re.findall(r"^- (\d): (.*?)(?=^- \d: |\Z)", section, re.M | re.S)
    return {code: " ".join(text.split()) for code, text in items}


def test_every_exit_code_a_help_names_is_listed_for_that_command():
    listed = _listed()
    assert set(listed) == {"0", "1", "2", "3"}
    named = []
    for path, command in _commands(typer.main.get_command(app)):
        text = " ".join([command.help or "", *(getattr(p, "help", "") or "" for p in command.params)])
        for code in EXIT.findall(" ".join(text.split())):
            named.append((path, code))
            assert f"`{path}`" in listed.get(code, ""), (path, code, listed.get(code))
    assert ("sweep merge", "1") in named and ("regress", "1") in named  # the helps that name one
