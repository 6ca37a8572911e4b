"""Prose the CLI prints wraps between words only: a word wider than the line runs past the edge whole.

rich folds a word wider than the width at the width, mid-word: a command the CLI prints (estimate's
advice to train a baseline, `lionsim report ROOT` after a sweep) or a path (`wrote N files to DIR`)
came out of an 80-column pipe or log split inside a path, and pasted back it named another file.
rich has no overflow that wraps between words yet keeps a long word whole ("ignore" stops wrapping
altogether, "crop" cuts the word), so the CLI's consoles (lionsim.cli.app._Console) print prose and
tables' captions through WholeWords, which breaks a line only at its spaces and otherwise lays it
out as rich does. Table cells keep their columns' own overflow.
"""

from __future__ import annotations

import re

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.containers import Lines
from rich.measure import Measurement
from rich.text import Text

WORD = re.compile(r"\s*\S+\s*")
"""A word with the blanks around it, as rich's wrapping divides a line."""


def breaks(line: str, width: int) -> list[int]:
    """Offsets to break `line` at so that each part fits `width` cells where its words do: before
    each word that would pass the width, never inside one (a wider word is a part of its own)."""
    offsets, column = [], 0
    for word in WORD.finditer(line):
        if column and column + cell_len(word.group().rstrip()) > width:
            offsets.append(word.start())
            column = 0
        column += cell_len(word.group())
    return offsets


class WholeWords:
    """`text` wrapped at its spaces only (module doc), ending with `end`."""

    def __init__(self, text: Text, end: str = "\n") -> None:
        self.text, self.end = text, end

    def __str__(self) -> str:
        return self.text.plain  # what lionsim.reports.widths measures a caption by

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width, text = options.max_width, self.text
        justify = text.justify or options.justify or "default"
        lines = Lines()
        for line in text.split(allow_blank=True):
            if "\t" in line.plain:
                line.expand_tabs(console.tab_size if text.tab_size is None else text.tab_size)
            parts = line.divide(breaks(line.plain, width))
            for part in parts:
                part.rstrip_end(width)
            parts.justify(console, width, justify=justify, overflow="ignore")  # a long word: not cut
            lines.extend(parts)
        yield from Text("\n").join(lines).render(console, end=self.end)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.text)


def prose(console: Console, objects: tuple, kwargs: dict) -> tuple:
    """`objects` to print as one WholeWords where they are prose (str or Text) that rich would wrap
    (no soft_wrap, no_wrap, overflow, justify or width asked for); else as they are. A str is made
    Text as print makes it (its markup, emoji and highlighting)."""
    asked = ("no_wrap", "overflow", "justify", "width")
    if (not objects or kwargs.get("soft_wrap", console.soft_wrap) or any(kwargs.get(k) is not None for k in asked)
            or not all(isinstance(o, (str, Text)) for o in objects)):
        return objects
    texts = [console.render_str(o, markup=kwargs.get("markup"), highlight=kwargs.get("highlight"),
                                emoji=kwargs.get("emoji")) if isinstance(o, str) else o for o in objects]
    if any(t.no_wrap or t.overflow is not None for t in texts):  # a Text that says how it wraps: as it says
        return objects
    return (WholeWords(Text(kwargs.get("sep", " ")).join(texts), kwargs.get("end", "\n")),)


def whole_caption(console: Console, table) -> None:
    """`table`'s caption as WholeWords, styled as rich styles a caption (which it does only for a str)."""
    if isinstance(table.caption, str):
        table.caption = WholeWords(console.render_str(table.caption, style=table.caption_style or "table.caption",
                                                      highlight=False))
