"""A plot title's line wrapped to the figure's width (style.fit_title): balanced lines, and never a
break inside parentheses where the line's items or its other words allow one (a title's items are
comma-separated: a model, a worker count, a network with its layout in parentheses)."""

from __future__ import annotations

import textwrap


def balanced_wrap(line: str, width: int) -> str:
    """`line` wrapped to at most `width` characters a line in as few lines as greedy wrapping
    takes, each as short as that count allows: the narrowest width that still needs no more lines,
    so the words spread evenly over them (greedy filling left "dropped)" alone on a last line).
    Where that breaks inside parentheses ("mycluster inter link (8 / GPUs a node, ...)"), it breaks
    between the line's comma-separated items instead, else anywhere but inside parentheses: in as
    many lines, else one more, with no word alone on a line (sensible_wrap)."""
    plain = _balanced(line, width)
    if not _inside_parentheses(plain):
        return plain
    return sensible_wrap(line, width, plain.count("\n") + 1) or plain


GLUE = "\x00"
"""Stands for a space wrapping may not break at (sensible_wrap)."""


def sensible_wrap(line: str, width: int, lines: int) -> str | None:
    """`line` balanced (as balanced_wrap) over its items (broken only after a comma outside
    parentheses), else over its words with each parenthesis kept whole: the first of those in
    `lines` lines, then in one more; None where neither fits `width` without a word alone on a line."""
    ways = [_glued(line, items=True), _glued(line, items=False)]
    for most in (lines, lines + 1):
        for glued in ways:
            wrapped = _balanced(glued, width, whole=True).replace(GLUE, " ")
            parts = wrapped.split("\n")
            if len(parts) <= most and all(len(part) <= width and len(part.split()) > 1 for part in parts):
                return wrapped
    return None


def _glued(line: str, items: bool) -> str:
    """`line` with GLUE for each space inside parentheses (and, `items`, each not after a comma)."""
    out, depth = [], 0
    for i, char in enumerate(line):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth = max(0, depth - 1)
        breakable = char == " " and depth == 0 and (not items or line[i - 1:i] == ",")
        out.append(GLUE if char == " " and not breakable else char)
    return "".join(out)


def _inside_parentheses(wrapped: str) -> bool:
    """Whether a line of `wrapped` ends inside parentheses its next line closes."""
    depth = 0
    for part in wrapped.split("\n")[:-1]:
        depth += part.count("(") + part.count("[") - part.count(")") - part.count("]")
        if depth > 0:
            return True
    return False


def _balanced(line: str, width: int, whole: bool = False) -> str:
    """balanced_wrap's lines; `whole`: a word wider than `width` stays whole (a glued item: the
    caller refuses the wrap), where textwrap would cut it."""
    wrap = lambda w: textwrap.wrap(line, w, break_on_hyphens=False, break_long_words=not whole)  # noqa: E731
    lines = wrap(width)
    if len(lines) <= 1:
        return "\n".join(lines)
    narrow, floor = width, max(len(word) for word in line.split())  # no narrower than a word: none is cut
    while narrow > floor and len(wrap(narrow - 1)) == len(lines):
        narrow -= 1
    return "\n".join(wrap(narrow))
