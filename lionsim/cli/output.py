"""`--out DIR` for the commands that write a directory: an empty name is refused.

`--out ""` reached the commands as Path(""), which is ".", and wrote into the current
directory; the raw text is checked here, before it becomes a Path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def parse_out(value: str | Path) -> Path:
    """--out as given: a non-empty path (`.` says the current directory on purpose)."""
    if isinstance(value, Path):
        return value
    if not str(value).strip():
        raise typer.BadParameter("an empty name; accepted: a directory path (`.` for the current one)")
    return Path(value)


Out = Annotated[Path, typer.Option("--out", "-o", parser=parse_out, metavar="DIR", help="Output directory.")]
"""The bench and sweep --out."""


def _format(value: str) -> str:
    """table, csv or json (any case); else the one line, "bad --format xml; accepted: table, csv, json"."""
    from lionsim.errors import LionsimError
    from lionsim.ranges import refusal
    from lionsim.registry import did_you_mean
    from lionsim.reports.formats import FORMATS, check_format
    from lionsim.whole import Text

    try:
        return check_format(value)
    except ValueError:
        raise LionsimError(refusal("--format", Text(value), ", ".join(FORMATS))
                           + did_you_mean(str(value).strip(), FORMATS)) from None


Format = Annotated[str, typer.Option(
    "--format", callback=_format, metavar="table|csv|json",
    help="table (for people: 80 columns in logs and pipes, else COLUMNS or the terminal's width; its text "
         "folds to that, and it is printed wider where its numbers alone need more), or csv / json of every "
         "column on stdout (for tools; other messages go to stderr).")]


def emit(frame, fmt: str, table=None, whole: bool = False) -> None:
    """Print a result: the rich `table` (a renderable, or a function making one) for `table`,
    else the frame (a DataFrame, or a function making one: a table never imports pandas) as
    CSV or JSON on stdout. A reader that stops early is not an error: the rest goes nowhere and
    the command carries on (its files are still written). `whole`: a table its builder fitted to
    80 columns (lionsim.reports.widths.fit) that is still wider, its numbers alone, gets the width
    it needs off a terminal rather than a cut number."""
    import os
    import sys

    if fmt == "table":
        from lionsim.cli.app import out_console

        table = table() if callable(table) else table
        # `whole`: the builder fitted it to 80 columns by its run names; wider only where its
        # numbers alone are (never cut). Others fit 80 columns by folding their long text columns
        out_console(natural_width(table) if whole else None).print(table)
        return
    from lionsim.reports.formats import frame_text  # pandas: only for csv / json

    frame = frame() if callable(frame) else frame
    try:
        sys.stdout.write(frame_text(frame, fmt))
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def natural_width(renderable) -> int:
    """Columns `renderable` takes when nothing squeezes it (lionsim.reports.widths)."""
    from lionsim.reports.widths import natural_width

    return natural_width(renderable)


def print_not_drawn(console, name: str, why: str) -> None:
    """`not drawn: NAME (WHY)`, wrapped at word boundaries under NAME (a hanging indent), so that
    in an 80- or 100-column terminal the reason reads as one item rather than wrapping back to
    column 0 or splitting a word."""
    from rich.table import Table
    from rich.text import Text

    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")  # a word wider than the terminal (a path) is folded, not cut
    grid.add_row("not drawn:", Text(f"{name} ({why})"))
    console.print(grid)


def put_back_said(out: Path) -> None:
    """What a publish stopped between its two renames set aside beside `out`, moved back, a note on
    stderr for each (lionsim.reports.publish.put_back); call holding --out's lock."""
    from lionsim.cli.app import err_console
    from lionsim.reports.publish import put_back

    for note in put_back(out):
        err_console.print(note, markup=False, highlight=False)
