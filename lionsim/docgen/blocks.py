"""Generated blocks of the documentation: the registry, the markers, and reading and rewriting
the pages (README.md and docs/*.md) that hold them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from lionsim.errors import LionsimError
from lionsim.registry import Registry

START = "<!-- generated: {name} (python -m lionsim.docgen) -->"
END = "<!-- end generated: {name} -->"
_BLOCK = re.compile(r"<!-- generated: (?P<name>[\w.-]+) \(python -m lionsim\.docgen\) -->\n(?P<body>.*?)"
                    r"<!-- end generated: (?P=name) -->", re.S)


@dataclass(frozen=True, slots=True)
class Block:
    """One generated part of a documentation page."""

    name: str
    render: Callable[[], str]
    """The block's markdown (ending with a newline)."""
    cache: str | None = None
    """The cached run it renders from (reports/readme/CACHE), or None: it runs what it needs."""


BLOCKS: Registry[Block] = Registry("docs block")


def checkout() -> Path:
    """The lionsim checkout lionsim runs from (its README.md beside the package)."""
    from lionsim.regress.baseline import project_root

    root = project_root()
    if root is None or not (root / "README.md").is_file():
        raise LionsimError("README.md not found: python -m lionsim.docgen runs from a lionsim checkout")
    return root


def pages(root: Path | None = None) -> list[Path]:
    """The documentation pages of a checkout: README.md, then docs/*.md by name."""
    root = checkout() if root is None else root
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def cache_dir(name: str) -> Path:
    return checkout() / "reports" / "readme" / name


def page_blocks(text: str) -> dict[str, str]:
    """{name: body} of every generated block in a page's text."""
    return {m.group("name"): m.group("body") for m in _BLOCK.finditer(text)}


def where_blocks(paths: list[Path]) -> dict[str, Path]:
    """{name: the page holding it}; a block whose markers appear twice is an error (which would
    the check compare?)."""
    found: dict[str, Path] = {}
    for path in paths:
        for name in page_blocks(path.read_text(encoding="utf-8")):
            if name in found:
                raise LionsimError(f"block {name} has markers in both {found[name].name} and {path.name}; keep one")
            found[name] = path
    return found


def with_blocks(text: str, bodies: dict[str, str]) -> str:
    """The page's text with those of the named blocks it holds replaced (the others are kept)."""

    def replace(m: re.Match) -> str:
        name = m.group("name")
        body = bodies.get(name, m.group("body"))
        return START.format(name=name) + "\n" + body + END.format(name=name)

    return _BLOCK.sub(replace, text)


def missing_markers(names: list[str], found: dict[str, Path]) -> LionsimError | None:
    """The error for blocks no page holds markers for (None: all are placed)."""
    missing = [name for name in names if name not in found]
    if not missing:
        return None
    return LionsimError(f"no page (README.md, docs/*.md) has markers for {', '.join(missing)}; add "
                        + " ... ".join((START + "\n", END)).format(name=missing[0]))
