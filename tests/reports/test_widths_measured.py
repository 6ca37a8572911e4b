"""widths.Measured (a table's cells measured once, for fit, fill and shaped) against rich's own
measure of the whole table (natural_width), on tables of every padding and border rich draws,
before and after a column is narrowed or widened, and against each cell measured alone."""

from __future__ import annotations

import itertools

import pytest
from rich import box
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from lionsim.reports.widths import Measured, NameList, Phrases, _probe, fold_run, natural_width

ROWS = [
    (fold_run("dlion-mavo", "a2a-1bit"), "1.00x", Text("not reached"), "[b]bold[/b] 3"),
    (fold_run("adamw*", "compressed-allreduce"), "12,345", "", Phrases("warm-up 15; compressed 985")),
    (NameList(["lion", "dlion-mavo@a2a-1bit", "signsgd"]), "-", "2.5 KiB", "x" * 30),
]


def _table(padding, collapse, pad_edge, border, show_edge, header, footer, rows=ROWS, **kw) -> Table:
    table = Table(title="t", padding=padding, collapse_padding=collapse, pad_edge=pad_edge, box=border,
                  show_edge=show_edge, show_header=header, show_footer=footer, **kw)
    for name in ("run", "speed\nup", "words", "note"):
        table.add_column(name, footer="sum" if name == "note" else "")
    for row in rows:
        table.add_row(*row)
    return table


SHAPES = list(itertools.product([(0, 0), (0, 1), (0, 1, 0, 0), (1, 2)], [False, True], [False, True],
                                [box.SIMPLE_HEAD, None], [False, True], [True, False], [False, True]))


def _cell_widths(table: Table, measured: Measured) -> None:
    probe = _probe()
    for column in table.columns:
        alone = [Measurement.get(probe, probe.options, cell) for cell in column.cells]
        assert measured.cells(column) == alone, column.header
        assert measured.header(column) == Measurement.get(probe, probe.options, column.header)


@pytest.mark.parametrize("shape", SHAPES[::3], ids=str)  # a third of the 256 shapes: every value of each
def test_a_table_measured_once_is_as_wide_as_rich_measures_it(shape):
    table = _table(*shape)
    measured = Measured(table)
    assert measured.width() == natural_width(table)
    _cell_widths(table, measured)
    # limits set after the measure are read as they are now: narrowed, pinned wider, fixed
    table.columns[0].min_width = table.columns[0].max_width = 9
    assert measured.width() == natural_width(table)
    table.columns[3].min_width = table.columns[3].max_width = 50
    table.columns[2].max_width = 3
    assert measured.width() == natural_width(table)
    table.columns[1].width = 2
    assert measured.width() == natural_width(table)
    table.min_width = 300
    assert measured.width() == natural_width(table)
    table.width = 77
    assert measured.width() == natural_width(table)
    table.min_width = None
    assert measured.width() == natural_width(table) == 77


@pytest.mark.parametrize("rows", [[], [("", "", "", "")]], ids=["no rows", "empty cells"])
def test_an_empty_table_or_empty_cells(rows):
    for shape in SHAPES[::17]:
        table = _table(*shape, rows=rows)
        assert Measured(table).width() == natural_width(table), shape


def test_a_table_wider_than_the_probe_is_measured_by_rich():
    """Past the probe's 400 columns rich collapses columns: Measured asks rich there."""
    table = _table((0, 1), False, True, box.SIMPLE_HEAD, True, True, False,
                   rows=[("a" * 150, "b " * 90, "c" * 120, "d" * 398)])
    measured = Measured(table)
    assert measured.width() == natural_width(table)
    _cell_widths(table, measured)


@pytest.mark.parametrize("argv", [
    ["networks"], ["devices"],
    ["estimate", "--model", "gpt2-124m", "--workers", "16", "--network", "10gbe", "-s", "lion", "-s", "dlion-mavo"],
    ["comm", "--collective", "all_reduce", "--sizes", "1KB:1MB:x1000", "--workers", "8", "--network", "10gbe"],
], ids=lambda argv: argv[0])
def test_the_clis_tables_measure_as_rich_measures_them(argv, monkeypatch):
    """Every table the CLI prints, as built and as fitted at 40 and 80 columns, measures the same."""
    from typer.testing import CliRunner

    import sys

    from lionsim.cli import app
    from lionsim.reports import widths

    seen = []

    def checked(table, width):
        assert Measured(table).width() == natural_width(table)
        drawn = widths.shaped(table, width)
        assert Measured(table).width() == natural_width(table)
        seen.append(table)
        return drawn

    monkeypatch.setattr(sys.modules["lionsim.cli.app"], "shaped", checked)
    for columns in ("40", "80"):
        result = CliRunner().invoke(app, argv, env={"COLUMNS": columns})
        assert result.exit_code == 0, result.output
    assert seen


PRIVATE = {"Table": ["_get_cells", "_extra_width", "_get_padding_width", "_measure_column"], "Column": ["_index"]}
"""rich's private helpers (rich.table, 13 to 15) Measured reproduces from public API, rather than calls."""


def _without_rich_privates(monkeypatch, tables) -> None:
    """rich as a release that renamed its private helpers would be: none of PRIVATE on its classes
    or (a column's index) on the columns of `tables`."""
    from rich import table as rich_table

    for name, attributes in PRIVATE.items():
        for attribute in attributes:
            monkeypatch.delattr(getattr(rich_table, name), attribute)
    for table in tables:
        for column in table.columns:
            monkeypatch.delattr(column, "_index")


@pytest.mark.parametrize("shape", SHAPES[1::11], ids=str)  # 24 of the 256 shapes: every value of each
def test_measured_and_shaped_need_no_private_rich_api(shape, monkeypatch):
    """A rich without Table._get_cells, _extra_width, _get_padding_width or a column's _index
    measures and shapes every table as rich 15 with them does, and the table then prints the
    same, byte for byte (rich's own render, with its helpers back, draws both)."""
    from rich.console import Console

    from lionsim.reports.widths import shaped

    reference, bare = _table(*shape), _table(*shape)
    wide = natural_width(reference)
    drawn = shaped(reference, 40)
    _without_rich_privates(monkeypatch, [bare])
    assert Measured(bare).width() == wide
    assert shaped(bare, 40) == drawn
    monkeypatch.undo()

    def printed(table) -> str:
        console = Console(width=drawn, color_system=None)
        with console.capture() as captured:
            console.print(table)
        return captured.get()

    assert printed(bare) == printed(reference)
    assert [(c.min_width, c.max_width, c.width) for c in bare.columns] == \
        [(c.min_width, c.max_width, c.width) for c in reference.columns]
