"""Markdown pieces the reports share (run and sweep reports, estimate sweep reports)."""

from __future__ import annotations

import shlex
from pathlib import Path


def md_table(headers: list[str], rows: list[list[str]]) -> str:
    """A GitHub Markdown table; cells are text already formatted."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)


FRESH_ONLY = ("--resume", "--overwrite")
"""Flags about the --out a command found, not the run it made: a resumed run's command with
--resume fails in a fresh directory, so the command that reproduces it leaves them out."""


def command_line(argv: list[str] | None) -> str | None:
    """The command line that made DIR (run.json's, sweep.json's or estimate.json's argv), as a user
    would type it in a fresh directory (without FRESH_ONLY flags); None where none was recorded."""
    if not argv:
        return None
    argv = [a for a in argv if a not in FRESH_ONLY]
    return shlex.join(["lionsim", *argv[1:]] if Path(argv[0]).name in ("lionsim", "__main__.py") else argv)


def reproduce(command: str | None, directory: Path) -> str:
    """A report's Reproduce section: the command that made DIR, then the report's own."""
    lines = ([command] if command else []) + [f"lionsim report {shlex.quote(str(directory))}"]
    note = "" if command else "The original command was not recorded; the report comes from the files alone.\n\n"
    return note + "\n".join("    " + line for line in lines)
