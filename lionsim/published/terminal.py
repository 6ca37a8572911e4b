"""What the published-results commands print in a terminal, and how they read their arguments.

The docs embed each table as Markdown whose rows carry the source, configuration and command
inline (1,000 characters and more: unreadable in a terminal). A command prints instead a compact
table (a few short columns, long cells wrapped inside their column) and its paragraphs, fitted to
the terminal's width; `--markdown` prints the docs' Markdown and `--case KEY` one case's full record.

The commands take no typer CLI (building it costs seconds): `parse` reads their few flags, answers
--help with the module doc's usage lines, and refuses anything else in one line, exit 2: an unknown
flag, an option without its value, a flag given twice, or two flags a module declares exclusive
(each would otherwise override or drop the other silently). `entry` reports bad input met while
running (a case's command that fails, a checkout without examples/) the same way, and takes a
reader that stops early (`| head`) as lionsim's CLI does: not an error, exit 0.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import NoReturn

from lionsim.errors import LionsimError

PROSE_MAX = 100
"""Paragraphs wrap at the terminal's width or this, whichever is less: longer lines read badly."""
MIN_COLUMN = 6
"""The narrowest a wrapped column is made."""


def width() -> int:
    """The terminal's columns (COLUMNS, else the terminal, else 100 when output is not a terminal)."""
    return shutil.get_terminal_size((PROSE_MAX, 24)).columns


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], columns: int,
          right: Sequence[bool] = ()) -> list[str]:
    """A plain-text table within `columns` characters a line where it can be: columns two spaces
    apart, each cell on as many lines as its column needs. Columns are narrowed widest first, to
    their longest word, then (if still too wide) to MIN_COLUMN; `right[i]` aligns column i right."""
    cells = [list(headers), *[list(r) for r in rows]]
    count = len(headers)
    right = tuple(right) + (False,) * (count - len(right))
    widths = [max(len(row[i]) for row in cells) for i in range(count)]
    words = [max(MIN_COLUMN, *(len(word) for row in cells for word in row[i].split())) for i in range(count)]
    for floor in (words, [MIN_COLUMN] * count):  # break no word while wrapping at spaces suffices
        while sum(widths) + 2 * (count - 1) > columns:
            narrowable = [i for i in range(count) if widths[i] > floor[i]]
            if not narrowable:
                break
            widths[max(narrowable, key=lambda i: widths[i])] -= 1
    rule = ["-" * w for w in widths]
    out = []
    for row in (cells[0], rule, *cells[1:]):
        wrapped = [textwrap.wrap(cell, w, break_on_hyphens=False) or [""] for cell, w in zip(row, widths)]
        for line in range(max(len(w) for w in wrapped)):
            parts = [(w[line] if line < len(w) else "") for w in wrapped]
            out.append("  ".join(p.rjust(w) if r else p.ljust(w)
                                 for p, w, r in zip(parts, widths, right)).rstrip())
    return out


def prose(text: str, columns: int) -> list[str]:
    """A paragraph wrapped to the terminal (PROSE_MAX at most)."""
    return textwrap.wrap(text, min(columns, PROSE_MAX), break_on_hyphens=False, break_long_words=False)


def field(name: str, value: str, columns: int) -> list[str]:
    """A record's `name: value`, wrapped as prose, except a command: on one line whatever its length,
    so that it pastes whole into a shell (a wrapped one breaks where it was wrapped)."""
    if name == "command":
        return [f"{name}: {value}"]
    return prose(f"{name}: {value}", columns)


def usage(doc: str) -> str:
    """The module doc's usage lines: its `python -m` lines."""
    return "\n".join(line.strip() for line in doc.splitlines() if line.strip().startswith("python -m "))


def parse(argv: Sequence[str], doc: str, flags: Sequence[str], options: Sequence[str] = (),
          exclusive: Sequence[Sequence[str]] = ()) -> dict[str, object]:
    """The flags given (True) and the options' values (`options`: "--case KEY", the flag and what
    it takes), by name without dashes; --help prints the usage lines and exits 0. One line and exit 2
    for an unknown flag, an option without its value, a flag or option given twice, or two of one
    `exclusive` group (flags or options by name, "--case": at most one of each group acts)."""
    given: dict[str, object] = {}
    accepted = [*flags, *options, "--help"]
    options = [o.split()[0] for o in options]
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg in ("--help", "-h"):
            print(usage(doc))
            raise SystemExit(0)
        if arg in (*flags, *options) and arg.lstrip("-") in given:
            fail(f"{arg} given twice; give it once")
        if arg in flags:
            given[arg.lstrip("-")] = True
        elif arg in options and args and not args[0].startswith("--"):
            given[arg.lstrip("-")] = args.pop(0)
        elif arg in options:
            fail(f"{arg} needs a value")
        else:
            fail(f"unknown argument {arg!r}; accepted: {', '.join(accepted)}")
    for group in exclusive:
        both = [flag for flag in group if flag.lstrip("-") in given]
        if len(both) > 1:
            fail(f"{' and '.join(both)} cannot be given together; give one of {', '.join(group)}")
    return given


def entry(main: Callable[[list[str]], int]) -> Callable[[list[str]], int]:
    """A module's `main`, with bad input met while it runs (a LionsimError: a case's command that
    fails, the checkout's examples/ missing) reported as `fail` does: one line, exit 2; and a
    reader that stops early (`| head`: a BrokenPipeError while printing) exits 0 without a traceback."""
    @functools.wraps(main)
    def run(argv: list[str]) -> int:
        try:
            code = main(argv)
            sys.stdout.flush()  # what is still buffered meets a closed pipe here, not at exit
            return code
        except LionsimError as e:
            fail(str(e))
        except BrokenPipeError:
            # The rest of the output goes nowhere: every module prints only once it has computed
            # everything, so nothing is left undone. Python flushes stdout again at exit, which
            # would fail on the same pipe (exit 120): point stdout's descriptor at /dev/null.
            with contextlib.suppress(AttributeError, OSError, ValueError):  # a stream without a descriptor
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
    return run


def find(key: str, items: Sequence, what: str = "case"):
    """The item (a case, a sweep) whose `.key` is `key`, or one error line naming the keys accepted."""
    for item in items:
        if item.key == key:
            return item
    fail(f"unknown {what} {key!r}; accepted: {', '.join(i.key for i in items)}")


def fail(message: str) -> NoReturn:
    """One line on stderr and exit 2: bad input, as lionsim's CLI reports it."""
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)
