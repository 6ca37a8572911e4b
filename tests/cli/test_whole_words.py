"""The CLI's consoles wrap prose and tables' captions between words only (lionsim.cli.whole_words):
a command with a path wider than an 80-column pipe prints with the path whole on a line of its own
(rich folded it mid-path, so the pasted command named another file). Elsewhere the wrapping is
rich's own, the reference: text whose words all fit prints exactly as a plain rich console prints
it, and a table's cells keep their column's overflow."""

from __future__ import annotations

import io
import shlex

import pytest
from rich import box
from rich.console import Console
from rich.table import Table

from lionsim.cli.app import _Console

PATH = "/data/" + "/".join(["a-folder-name-that-is-long-enough"] * 4) + "/run.json"
COMMAND = shlex.join(["lionsim", "bench", "--config", PATH, "-s", "adamw,lion", "-s", "adamw@bf16-allreduce",
                      "--out", PATH.removesuffix("/run.json"), "--overwrite"])
LINE = f"For that baseline, train adamw@bf16-allreduce beside its runs: `{COMMAND}`; then add --baseline."


def printed(*objects, width: int = 80, plain: bool = False, **kwargs) -> str:
    """What `objects` print as on a console `width` columns wide, off a terminal (a pipe, a log):
    lionsim's, or rich's own where `plain` (its lines' trailing blanks left off, as lionsim's are)."""
    file = io.StringIO()
    console = (Console if plain else _Console)(file=file, width=width, force_terminal=False, color_system=None)
    console.print(*objects, **kwargs)
    return "\n".join(line.rstrip() for line in file.getvalue().split("\n"))


def test_a_command_with_a_path_wider_than_the_line_prints_whole():
    assert len(PATH) > 80
    out = printed(LINE, markup=False)
    assert PATH in out.splitlines()  # whole, a line of its own (it was folded at column 80)
    assert max(len(line) for line in out.splitlines() if " " in line) <= 80  # the lines of several words: 80
    command = " ".join(out.split()).split("`")[1]
    assert shlex.split(command) == shlex.split(COMMAND)  # pasted back, it is the same command
    assert PATH not in printed(LINE, markup=False, plain=True)  # rich's own folds it


@pytest.mark.parametrize("width", [40, 80, 100])
def test_prose_whose_words_fit_wraps_as_rich_wraps_it(width):
    text = ("lionsim: mlp, 2 workers, 1gbe, 2 steps; step times modelled: comp on h100 (FLOPs at peak x mfu), "
            "enc/upd (memory passes at h100's bandwidth), comm on 1gbe (alpha-beta).\n  an indented second line "
            "with [bold]markup[/bold] that wraps too, as a note under a table would.")
    assert printed(text, width=width) == printed(text, width=width, plain=True)
    assert printed("two", "objects", sep=" | ", width=width) == printed("two", "objects", sep=" | ", width=width,
                                                                        plain=True)


def test_a_captions_path_stays_whole():
    table = Table(title="t", caption=LINE, caption_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("run", no_wrap=True)
    table.add_row("adamw")
    out = printed(table)
    assert PATH in out.splitlines()
    command = " ".join(out.split()).split("`")[1]
    assert shlex.split(command) == shlex.split(COMMAND)


def test_a_cell_keeps_its_columns_overflow():
    """A grid's folding column (print_not_drawn's) folds a long word as rich folds it: a cell is not prose."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row("not drawn:", f"plot ({PATH})")
    assert printed(grid) == printed(grid, plain=True)
    assert PATH not in printed(grid)
