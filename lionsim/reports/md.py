"""Markdown pieces the reports share (run and sweep reports, estimate sweep reports)."""

from __future__ import annotations

import shlex
from pathlib import Path

from lionsim.option_paths import absolute, launched_by_lionsim, typed_relative


def md_table(headers: list[str], rows: list[list[str]]) -> str:
    """A GitHub Markdown table; cells are text already formatted."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)


FRESH_ONLY = ("--resume",)
"""A flag about the --out a command found, not the run it made: a resumed run's command with
--resume fails in a fresh directory, so the command that reproduces it leaves it out."""
REPLACES = ("--overwrite", "--overwrite-sweep")
"""The flags that let a command write into an --out holding lionsim's results."""
WRITES_OVER = ("bench", "estimate")
"""The commands whose --out, holding a finished run, refuses a rerun unless REPLACES gives leave
(a sweep's rerun resumes it, taking none)."""


def command_line(argv: list[str] | None, resume: bool = False, cwd: object = None) -> str | None:
    """The command line that made DIR (run.json's, sweep.json's or estimate.json's argv), as a user
    would type it to make DIR again (without FRESH_ONLY flags; with --overwrite, see below); None
    where none was recorded. `resume`: a run that did not finish (lionsim.reports.resuming), whose
    command goes on with --resume in place of any REPLACES flag, which would discard what it kept.
    `cwd`: the folder it ran in (the record's `cwd`), which it is run from (`cd CWD && ...`) where
    it typed a path relative to it (lionsim.option_paths.typed_relative): as typed, it runs there only."""
    if not argv:
        return None
    argv = [a for a in argv if a not in FRESH_ONLY]
    there = f"cd {shlex.quote(cwd)} && " if isinstance(cwd, str) and cwd and typed_relative(argv) else ""
    if resume:
        return there + _typed([*(a for a in argv if a not in REPLACES), "--resume"])
    command = next((a for a in argv[1:] if not a.startswith("-")), None)
    # The command's --out is DIR, which holds this finished run, so without leave to replace it the
    # printed command is refused there ("holds a complete bench run; pass --overwrite"), whether or
    # not the user typed --overwrite (a first run into an empty folder did not need it); --overwrite
    # also runs where DIR is gone or empty, and clears only lionsim's own files, so it is always added.
    if command in WRITES_OVER and not any(a in REPLACES for a in argv):
        argv = [*argv, "--overwrite"]
    return there + _typed(argv)


def _typed(argv: list[str]) -> str:
    """argv as a user types it: `lionsim ...` where the program was lionsim's entry point."""
    return shlex.join(["lionsim", *argv[1:]] if launched_by_lionsim(argv) else argv)


def sweep_commands(meta: dict) -> list[str]:
    """The commands that made a sweep root (its sweep.json `meta`): its own, or for one merged from
    shards each shard's command (run from where its part was made), then the merge."""
    own = command_line(meta.get("argv"), cwd=meta.get("cwd"))
    shards = meta.get("shards") if isinstance(meta.get("shards"), list) else []
    made = [command_line(s.get("argv"), cwd=s.get("cwd")) for s in shards if isinstance(s, dict)]
    return [c for c in (*made, own) if c]


def reproduce(command: str | list[str] | None, directory: Path, note: str | None = None) -> str:
    """A report's Reproduce section: the command (or commands, in order) that made DIR, then the
    report's own; `note` (a run that did not finish: lionsim.reports.resuming) first, where the
    command was recorded."""
    commands = [command] if isinstance(command, str) else list(command or [])
    # DIR absolute: the report's command runs from any folder, as the one above does
    lines = commands + [f"lionsim report {shlex.quote(absolute(directory))}"]
    note = (note + "\n\n" if note else "") if commands else \
        "The original command was not recorded; the report comes from the files alone.\n\n"
    return note + "\n".join("    " + line for line in lines)
