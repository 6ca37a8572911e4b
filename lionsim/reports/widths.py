"""Tables that fit 80 columns (a wider terminal's width): run names that break after a '-' rather
than widen the table.

A run label is two lines, strategy then @transport, each whole while the table fits (past
TABLE_WIDTH, where a wider width was asked for, one line where the table still fits); a table
wider than TABLE_WIDTH first breaks its cells of words between words where no row gets taller
for it (`not` / `reached` beside a two-line name), then drops its edges where they are blank and
that keeps every name whole (two columns of spaces: an estimate's `@bf16-allreduce` at 80
columns; the blank lines its top and bottom edges drew stay, under the title and over the
caption), then narrows its run column (the widest text) by what it is still over: the names in
it break after a '-' (`@compressed-` / `allreduce`), a prefixed transport after its prefix where
its own name then fits (`@hier:` / `int8-allreduce`), and a strategy's before its ` H=`
(`streaming-diloco` / `H=4`, or `streaming-` / `diloco H=500`): a last resort, taken only where
the column cannot hold the name whole. Narrowing a number column's header (`compute`,
`exposed`) to win more was not taken: a header cut mid-word reads worse than a name broken after
a '-'. A header that may fold where its words end (estimate's `speed` / `up`) counts as a name
does: it stays whole where dropping the blank edges fits the table (whole_header). Nothing is cut
inside a word, and the numbers' columns are never narrowed (no number is cut or ellipsized): where
those alone are wider than TABLE_WIDTH the table stays wider. No pandas here: the CLI measures
tables without it.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from collections.abc import Iterator, Mapping

from rich.console import Console
from rich.measure import Measurement
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

TABLE_WIDTH = 80
"""Columns a table fits in a pipe or a CI log (what `--format table` promises); on a terminal the
terminal's width (table_width)."""

LEAST_RUN = 8
"""Fewest characters the run column is squeezed to (`@sparse-`): past that a table is printed wider
(lionsim.cli.app.out_console) rather than cutting a number."""


def _pieces(line: str) -> list[str]:
    """A name's unbreakable pieces: it may break after each '-' (`@compressed-` / `allreduce`), and
    before a local-step run's ` H=` (`streaming-diloco` / `H=4`: the piece keeps its space, which
    a line it starts drops)."""
    name, h, rounds = line.partition(" H=")
    pieces = [piece + "-" for piece in name.split("-")]
    pieces[-1] = pieces[-1][:-1]
    return [piece for piece in pieces if piece] + ([h + rounds] if h else [])


def wrap_name(line: str, width: int) -> list[str]:
    """`line` in lines of at most `width`, greedily, broken after a '-' or before ` H=` only; a
    piece wider than `width` on its own stays whole here (the cell folds it: a name is never cut).
    A prefixed transport (`@hier:int8-allreduce`) breaks after its prefix first where the name
    after it then fits whole (`@hier:` / `int8-allreduce`, not `@hier:int8-` / `allreduce`): the
    transport's own name stays one word a reader can find."""
    prefix, colon, rest = line.partition(":")
    if colon and len(line) > width and len(prefix) + 1 <= width and len(rest) <= width and " " not in line:
        return [prefix + colon, rest]
    lines = [""]
    for piece in _pieces(line):
        if lines[-1] and len(lines[-1]) + len(piece) > width:
            lines.append("")
        lines[-1] += piece.lstrip() if not lines[-1] else piece
    return lines


class RunName:
    """A run label for a table cell: strategy, then @transport on its own line (and any line after,
    `diverged at N`), each whole where the column is wide enough. Where fit() narrows the column a
    line breaks after a '-' (`@fp32-` / `allreduce`) or before a strategy's ` H=` (wrap_name:
    greedy, so `streaming-diloco` / `H=4` where that fits, `streaming-` / `diloco H=500` where it
    must), and no word is cut: the column is never narrower than the widest piece."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.joined = False
        """Set by shaped past TABLE_WIDTH where the table fits so: strategy@transport on one line."""

    def __str__(self) -> str:
        return self.text

    def one_line(self) -> list[str]:
        """The label's lines with strategy and @transport on one ("adamw*@fp32-allreduce")."""
        first, *rest = self.text.split("\n")
        return [first + rest[0], *rest[1:]] if rest and rest[0].startswith("@") else [first, *rest]

    def __rich_measure__(self, console, options) -> Measurement:
        lines = self.text.split("\n")
        least = max(len(p.lstrip()) for line in lines for p in _pieces(line))
        lines = self.one_line() if self.joined else lines
        return Measurement(least, max(len(line) for line in lines))

    def __rich_console__(self, console, options):
        width = max(options.max_width, 1)
        if self.joined and len(self.one_line()[0]) <= width:
            yield Text("\n".join(self.one_line()), no_wrap=False, overflow="fold")
            return
        yield Text("\n".join(part for line in self.text.split("\n") for part in wrap_name(line, width)),
                   no_wrap=False, overflow="fold")


def _fill(items: list[str], width: int, split_wide=None) -> list[str]:
    """`items` in greedy lines of at most `width`, joined by spaces; an item wider than `width` alone
    on its own line, or in the lines `split_wide(item)` gives (None: whole, for the cell to fold)."""
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + 1 + len(item) <= width:
            lines[-1] += " " + item
        elif split_wide is None or len(item) <= width:
            lines.append(item)
        else:
            lines += split_wide(item)
    return lines


class NameList:
    """Run names (`lion`, `dlion-mavo@a2a-1bit`) joined by ", " in a table cell: as many whole names
    a line as the column holds; a name wider than the column breaks before its @transport, as a
    run label does, and a part wider still after a '-' (wrap_name): never elsewhere."""

    def __init__(self, names) -> None:
        self.items = [name + ("," if i < len(names) - 1 else "") for i, name in enumerate(names)]

    def __str__(self) -> str:
        return " ".join(self.items)

    def __rich_measure__(self, console, options) -> Measurement:
        pieces = [p for item in self.items for part in _at_parts(item) for p in _pieces(part)]
        return Measurement(max(map(len, pieces), default=0), len(str(self)))

    def __rich_console__(self, console, options):
        width = max(options.max_width, 1)
        def as_run_label(item: str) -> list[str]:  # wider than the column alone: strategy, then @transport
            return [line for part in _at_parts(item) for line in wrap_name(part, width)]

        lines = _fill(self.items, width, as_run_label)
        yield Text("\n".join(lines), no_wrap=False, overflow="fold")


class Phrases:
    """Phrases joined by "; " in a table cell (`warm-up 15; compressed 985`): as many whole phrases
    a line as the column holds, breaking only between them, so a count stays beside its name."""

    def __init__(self, text: str, sep: str = "; ") -> None:
        parts = text.split(sep)
        self.items = [part + sep.rstrip() * (i < len(parts) - 1) for i, part in enumerate(parts)]

    def __str__(self) -> str:
        return " ".join(self.items)

    def __rich_measure__(self, console, options) -> Measurement:
        return Measurement(max(map(len, self.items), default=0), len(str(self)))

    def __rich_console__(self, console, options):
        yield Text("\n".join(_fill(self.items, max(options.max_width, 1))), no_wrap=False, overflow="fold")


def _at_parts(name: str) -> list[str]:
    """`strategy@transport` as its two lines (`strategy`, `@transport`); a bare name as itself."""
    strategy, at, transport = name.partition("@")
    return [strategy, at + transport] if at and strategy else [name]


def fold_run(strategy: str, transport: str) -> RunName:
    """A run label in two lines, strategy then @transport, each whole in a column of run_width
    (one that fit() narrows breaks them after a '-' only)."""
    return RunName(f"{strategy}\n@{transport}")


def run_width(labels: list[tuple[str, str]], minimum: int) -> int:
    """Width of a run column that holds every strategy and @transport line whole."""
    return max([minimum, *(len(s) for s, _ in labels), *(len(t) + 1 for _, t in labels)])


@functools.cache
def _probe() -> Console:
    """The one console every measure here reads (wide, so nothing squeezes what it measures): made
    once, where each measure made its own."""
    return Console(width=400)


def natural_width(renderable) -> int:
    """Columns `renderable` takes when nothing squeezes it."""
    probe = _probe()
    return Measurement.get(probe, probe.options, renderable).maximum


class Measured:
    """A table's cells, each measured once on the probe, and the widths fit, fill and shaped read
    of it: the table's natural width and a column's cells. A print measured the whole table anew
    for each of those (8 to 12 times); a column's width limits are read as they are now, so one
    that fit or fill narrows or widens needs no measure again. A column is measured when first
    read, and a fixed-width one (a listing's) not for the width, as rich measures none of it. Made
    for one fit or shaped call: rows added after it are not in it.

    The table's width is rich's own rule (Table.__rich_measure__: each column its widest cell
    with padding, clamped to its min/max width, plus the borders), computed from rich's public
    API alone (a column's header, cells and footer, the table's padding, pad_edge,
    collapse_padding, box and show_edge; Measurement.get), so a rich release that renames its
    private helpers breaks no print; tests/reports/test_widths_measured.py holds it to rich's own
    measure on every padding, border, header and footer setting. Where that sum would not fit the
    probe (rich would collapse columns) it asks rich itself."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self._columns: dict[int, tuple[Measurement, list[Measurement], Measurement]] = {}

    def _index(self, column) -> int:
        """`column`'s place in the table (by identity: two columns alike are still two)."""
        return next(i for i, c in enumerate(self.table.columns) if c is column)

    def _measured(self, column) -> tuple[Measurement, list[Measurement], Measurement]:
        """`column`'s header and cells as written, and its span with padding before its limits."""
        index = self._index(column)
        if index not in self._columns:
            probe, table = _probe(), self.table
            measure = functools.partial(Measurement.get, probe, probe.options)
            header, cells = measure(column.header), [measure(cell) for cell in column.cells]
            drawn = [*([(column.header, header)] if table.show_header else []),
                     *zip(column.cells, cells),
                     *([(column.footer, measure(column.footer))] if table.show_footer else [])]
            left, right = _cell_sides(table, index)
            padded = [_padded(cell, m, left, right) for cell, m in drawn]  # what rich measures, as it pads them
            span = Measurement(max((m.minimum for m in padded), default=1),
                               max((m.maximum for m in padded), default=probe.width)).with_maximum(probe.width)
            self._columns[index] = header, cells, span
        return self._columns[index]

    def cells(self, column) -> list[Measurement]:
        """`column`'s cells (its header not among them), as written: without the table's padding."""
        return self._measured(column)[1]

    def header(self, column) -> Measurement:
        return self._measured(column)[0]

    def width(self) -> int:
        """Columns the table takes when nothing squeezes it: natural_width(table), from the cells
        measured once and the columns' limits as they are now."""
        table, probe = self.table, _probe()
        if table.width is not None:
            wide = max(table.width, table.min_width or 0) if table.width >= 0 else 0
        else:
            spans = [self._span(column) for column in table.columns]
            borders = _borders(table)
            if sum(span.maximum or 1 for span in spans) > probe.width - borders:
                return natural_width(table)  # rich collapses a table wider than the probe: its own rule
            wide = max(sum(span.maximum for span in spans) + borders, table.min_width or 0)
        return min(wide, probe.width) if wide >= 1 else 0

    def _span(self, column) -> Measurement:
        """Columns `column` takes with its padding, clamped to its limits now (rich's
        Table._measure_column)."""
        padding = _padding_width(self.table, self._index(column))
        if column.width is not None:
            return Measurement(column.width + padding, column.width + padding).with_maximum(_probe().width)
        return self._measured(column)[2].clamp(
            None if column.min_width is None else column.min_width + padding,
            None if column.max_width is None else column.max_width + padding)


# Rich's rules for a table's width (as rich 15.0's Table has them), from its public settings: it
# pads a cell by one rule (Table._get_cells) and adds padding to a column's min, max or fixed
# width by another (Table._get_padding_width); under collapse_padding they differ, and each is
# kept as rich has it.


def _borders(table: Table) -> int:
    """Columns the table's box draws: its two edges (show_edge) and a rule between columns."""
    if not table.box:
        return 0
    return 2 * bool(table.show_edge) + len(table.columns) - 1


def _cell_sides(table: Table, index: int) -> tuple[int, int]:
    """The left and right padding rich puts around each cell of column `index` (its top and bottom
    padding takes no width): collapse_padding takes the right from a later column's left, and
    without pad_edge the table's outer sides have none."""
    _, right, _, left = table.padding
    if table.collapse_padding and index > 0:
        left = max(0, left - right)
    if not table.pad_edge:
        left = 0 if index == 0 else left
        right = 0 if index == len(table.columns) - 1 else right
    return left, right


def _padding_width(table: Table, index: int) -> int:
    """The padding rich adds to column `index`'s min, max or fixed width: under collapse_padding
    its right side alone (rich's rule, not _cell_sides')."""
    _, right, _, left = table.padding
    if table.collapse_padding:
        left = 0
    if not table.pad_edge:
        left = 0 if index == 0 else left
        right = 0 if index == len(table.columns) - 1 else right
    return left + right


def _padded(cell, bare: Measurement, left: int, right: int) -> Measurement:
    """`cell` (`bare` on the probe) measured as rich measures it in the table, `left` and `right`
    of padding either side: the padding added, where the probe's edge clamps neither; else rich
    measures the padded cell itself."""
    probe = _probe()
    if bare.maximum + left + right < probe.width:
        return Measurement(bare.minimum + left + right, bare.maximum + left + right)
    return Measurement.get(probe, probe.options, Padding(cell, (0, right, 0, left)))


def columns() -> int | None:
    """COLUMNS where it is a positive whole number; None where it is unset, empty, 0, negative or
    junk: read as unset (rich took COLUMNS=0 as a console 0 wide, and printed nothing)."""
    value = os.environ.get("COLUMNS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


class Environ(Mapping):
    """os.environ as the CLI's consoles read it (lionsim.cli.app): COLUMNS only where columns() takes it."""

    def __getitem__(self, key: str) -> str:
        if key == "COLUMNS" and columns() is None:
            raise KeyError(key)
        return os.environ[key]

    def __iter__(self) -> Iterator[str]:
        return (key for key in os.environ if key in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def table_width(console: Console | None = None) -> int:
    """Columns a table may take on stdout (or `console`): a terminal's width (rich reads it, or
    COLUMNS), so run names stay whole where they fit and, on one narrower than TABLE_WIDTH, the run
    column narrows rather than rich cutting the numbers to fit it. Off a terminal an explicit
    COLUMNS (a user or a script set it on purpose: the listings follow it too), else TABLE_WIDTH in
    a pipe, a file or where the width is unknown, so what a script or a log reads does not vary.
    A COLUMNS that is not a positive whole number counts as unset (columns())."""
    console = console or Console(_environ=Environ())
    if console.is_terminal:
        return console.width if console.width > 0 else shutil.get_terminal_size().columns
    return columns() or TABLE_WIDTH


def fit(table: Table, width: int | None = None, column: str = "run", measured: Measured | None = None) -> Table:
    """`table` narrowed to `width` columns (None: table_width) by its `column` alone (the run column: the widest text,
    names of strategies and transports), which then breaks its names after a '-' (RunName) or
    between them (NameList); the numbers' columns keep their width, so no number is ever cut or
    ellipsized. Down to LEAST_RUN, and never below the widest piece a name cannot break in (a
    word is not cut: `allreduce` keeps its 9 columns). Where that is not enough, a column of
    words (`not reached`) breaks between them; a table whose numbers alone are wider stays wider.
    A table without that column (a listing's) takes the second step alone. `measured`: the
    table's cells measured already (shaped's, passed on: one print measures them once)."""
    run = next((c for c in table.columns if c.header == column), None)
    width = table_width() if width is None else width
    measured = measured or Measured(table)
    # first a column of words breaks where that costs no line: `not` / `reached` beside a two-line
    # run name, which would otherwise fold every name onto three lines to make room for it
    for other in table.columns:
        if other is not run and not other.no_wrap:
            _narrow_free(measured, other, width)
    if run is not None and _blank_edges(table) and _edges_keep_names_whole(measured, run, width):
        _drop_edges(table)  # the two blank columns of its edges go before any name breaks
    if run is not None:
        _narrow(measured, run, width, LEAST_RUN)
    # still over: a column of words ("not reached") breaks between them, its rows being several
    # lines already; a number has no space, so its column keeps its width
    for other in table.columns:
        if other is not run and not other.no_wrap:
            _narrow(measured, other, width, 1)
    wide = measured.width()
    if wide > width:  # the numbers alone are wider: drawn so, past a narrow terminal, never cut to fit it
        table.width = wide
    return table


def fill(table: Table, width: int | None = None, column: str = "run", measured: Measured | None = None) -> Table:
    """`table` widened to `width` columns (None: TABLE_WIDTH, or a narrower terminal's width) by its
    `column` (left-justified, so the numbers keep their place at the right): a table of few columns
    otherwise wraps its title and caption at its own narrow width, where the other tables' notes
    take `width`. Never past a narrower terminal: rich cannot narrow a pinned column, so it would
    cut the numbers' columns instead. `measured`: as fit's."""
    run = next((c for c in table.columns if c.header == column), None)
    width = min(TABLE_WIDTH, table_width()) if width is None else width
    measured = measured or Measured(table)
    under = width - measured.width()
    if run is not None and under > 0:
        drawn = max(m.maximum for m in [*measured.cells(run), measured.header(run)])
        if run.max_width and run.min_width == run.max_width:  # pinned (a fill before this one): its width
            now = run.max_width
        else:  # a cap above its cells is not its width (a 34-column cap on a note column of 25)
            now = min(run.max_width, drawn) if run.max_width else drawn
        run.min_width = run.max_width = now + under
    return table


NUMBER = re.compile(r"[-+~<>]?[\d.,]*\d[\d.,:/%x*-]*( [^\s\d]\S*)?")
"""A cell that is a number, or a number and its unit (`1 KiB`, `0.013`, `1/32`): never broken, as
rich would fold it ("1" / "KiB") where its column is narrowed."""


def _least(cell, measured: Measurement) -> int:
    """The narrowest `cell` (`measured` on the probe) may be drawn without cutting a word, or a
    number and its unit."""
    text = cell.plain if isinstance(cell, Text) else cell if isinstance(cell, str) else None
    if text is not None and NUMBER.fullmatch(text.strip()):
        return len(text.strip())
    return measured.minimum


def _edges_keep_names_whole(measured: Measured, run, width: int) -> bool:
    """Whether dropping the table's two blank edge columns is what keeps every name of the run
    column whole: narrowing the column by what the `measured` table is over `width` would break a
    name's line, and by two columns less would not. Nothing gained, nothing changed: a column with
    room to spare keeps its edges, and names that break either way break as before."""
    over = measured.width() - width
    cells = measured.cells(run)
    now = run.max_width or max((m.maximum for m in cells), default=0)
    spare = now - max((_clean_width(cell, m) for cell, m in zip(run.cells, cells)), default=0)
    return over > spare and over - 2 <= spare  # the two edges: show_edge's share of _borders


def _clean_width(cell, measured: Measurement) -> int:
    """Columns `cell` needs for no name of it to break inside a transport or strategy: a RunName's
    lines may break before ` H=` or after a transport's prefix (wrap_name), not after a '-'."""
    if not isinstance(cell, RunName):
        return measured.maximum
    widths = []
    for line in cell.text.split("\n"):
        prefix, colon, rest = line.partition(":")
        name, h, rounds = line.partition(" H=")
        widths.append(max(len(prefix) + 1, len(rest)) if colon and " " not in line
                      else max(len(name), len(h + rounds) - 1) if h else len(line))
    return max(widths)


def whole_header(table: Table, column, folded: str, width: int | None = None) -> None:
    """`column`'s header kept whole where `table` fits `width` (None: table_width) with it, or
    without its blank edges (_drop_edges: as names are kept whole, fit); else `folded` (its words a
    line each: `speed\nup`), the table then fit as any."""
    width = table_width() if width is None else width
    over = natural_width(table) - width
    if over <= 0:
        return
    if over <= 2 and _blank_edges(table):  # the two edge columns: show_edge's share of _borders
        _drop_edges(table)
    else:
        column.header = folded


def _blank_edges(table: Table) -> bool:
    """Whether the table's outer edges draw nothing but blanks (box.SIMPLE_HEAD, box.SIMPLE): a
    column of spaces either side, which a table over its width can drop (show_edge) for a run name
    to stay whole (`@bf16-allreduce` in an estimate at 80 columns) and lose nothing drawn."""
    if not table.box or not table.show_edge:
        return False
    return all(line[0] == " " and line[-1] == " " for line in str(table.box).splitlines())


def _drop_edges(table: Table) -> None:
    """`table` without its blank edges (_blank_edges), the blank lines its top and bottom edges drew
    kept, under the title and over the caption, so the rows still stand apart from the notes."""
    table.show_edge = False
    if table.title:
        table.title = Text.assemble(table.title, "\n") if isinstance(table.title, Text) else f"{table.title}\n"
    if table.caption:
        table.caption = Text.assemble("\n", table.caption) if isinstance(table.caption, Text) else f"\n{table.caption}"


def _narrow(measured: Measured, column, width: int, least: int) -> None:
    """`column` narrowed by what the `measured` table is over `width`, down to `least` and never
    below its cells' (or its header's) widest unbreakable piece (a word, a number and its unit, or
    a name's piece: RunName)."""
    over = measured.width() - width
    if over <= 0:
        return
    cells = measured.cells(column)
    now = column.max_width or max((m.maximum for m in cells), default=0)
    whole = max(_least(c, m) for c, m in zip([*column.cells, column.header], [*cells, measured.header(column)]))
    if whole >= now:
        return
    column.min_width = column.max_width = min(now, max(least, whole, now - over))
    column.no_wrap, column.overflow = False, "fold"  # a plain-text name folds too, never ends in an ellipsis


def _lines(cell, width: int, column=None) -> int:
    """Lines `cell` takes drawn `width` wide (in `column`, as rich draws its cells: its wrapping
    and overflow; else broken between words, folded where a word is wider)."""
    if isinstance(cell, str) and "[" not in cell and max(map(len, cell.split("\n"))) <= width:
        return cell.count("\n") + 1  # a plain cell that fits: its own lines (most cells: no render)
    probe = _probe()
    wraps = column is None or not column.no_wrap
    options = probe.options.update(width=max(width, 1), no_wrap=not wraps, height=None,
                                   overflow="fold" if column is None else column.overflow)
    return len(probe.render_lines(cell, options, pad=False))


def _drawn_width(measured: Measured, column) -> int:
    """The width `column`'s cells are drawn at now: its limit where fit set one, else its widest cell."""
    if column.max_width is not None:
        return column.max_width
    return max(m.maximum for m in [*measured.cells(column), measured.header(column)])


def _narrow_free(measured: Measured, column, width: int) -> None:
    """`column` narrowed by what the `measured` table is over `width`, as _narrow would, but only as
    far as no row (nor the header) gets taller than its other cells make it: a word column's
    cells break between words where that costs no line."""
    over = measured.width() - width
    if over <= 0:
        return
    table, cells = measured.table, measured.cells(column)
    now = _drawn_width(measured, column)
    whole = max(_least(c, m) for c, m in zip([*column.cells, column.header], [*cells, measured.header(column)]))
    if whole >= now:
        return
    others = [(c, list(c.cells)) for c in table.columns if c is not column]
    heights: dict[int, int] = {}  # a row's lines in its other cells, worked out where needed (-1: the header)

    def height(i: int) -> int:
        if i not in heights:
            drawn = [(c.header if i < 0 else cells[i], c) for c, cells in others if i < len(cells)]
            heights[i] = max((_lines(cell, _drawn_width(measured, c), c) for cell, c in drawn), default=1)
        return heights[i]

    rows = [(-1, column.header), *enumerate(column.cells)]
    fits = now
    for w in range(now - 1, max(whole, now - over) - 1, -1):  # a cell's lines only grow as w shrinks
        if any((lines := _lines(cell, w)) > 1 and lines > height(i) for i, cell in rows):
            break
        fits = w
    if fits < now:
        column.min_width = column.max_width = fits
        column.no_wrap, column.overflow = False, "fold"


def _annotation(text) -> int:
    """Columns a title or caption takes on one line (0: none)."""
    return 0 if not text else len(text.plain if isinstance(text, Text) else str(text))


def _join_names(table: Table, width: int, measured: Measured) -> None:
    """Past TABLE_WIDTH (a wider terminal, or COLUMNS), a run column of RunName labels widened so
    that each reads strategy@transport on one line, where the table then still fits `width`: the
    80 columns of a pipe or a log break them before their @transport, a width asked for need not."""
    run = next((c for c in table.columns if c.header == "run"), None)
    names = list(run.cells) if run is not None else []
    if not names or not all(isinstance(name, RunName) for name in names):
        return
    now = run.max_width if run.max_width is not None else max(
        m.maximum for m in [*measured.cells(run), measured.header(run)])
    need = max(len(line) for name in names for line in name.one_line())
    if measured.width() + max(0, need - now) > width:
        return
    run.min_width = run.max_width = max(now, need)
    for name in names:
        name.joined = True


def shaped(table: Table, width: int) -> int:
    """Where the CLI's console draws a table (lionsim.cli.app._Console.render): `table` fitted to
    `width` (fit: a word column breaks between words, no number is cut), its runs' names on one line
    where `width` is past TABLE_WIDTH and holds them (_join_names), and one whose title or
    caption is wider than its columns widened, up to TABLE_WIDTH (and `width`), by its last
    left-justified column (fill), so its notes do not wrap at a few columns' width. Returns the
    width to draw it at: `width`, or the table's own where its numbers alone are wider (drawn so,
    never with rows or columns dropped, as rich does when a table cannot fit)."""
    measured = Measured(table)  # its cells measured once, for fit and fill alike
    if table.width is None:  # a builder that pinned its width fitted it already
        fit(table, width, measured=measured)
        if width > TABLE_WIDTH:
            _join_names(table, width, measured)
    notes = max(_annotation(table.title), _annotation(table.caption))
    wide = measured.width()
    if notes > wide and table.width is None:
        left = [c for c in table.columns if c.justify == "left" and c.header]
        if left:
            fill(table, min(TABLE_WIDTH, width, notes), left[-1].header, measured)
            wide = measured.width()
    return max(width, wide)
