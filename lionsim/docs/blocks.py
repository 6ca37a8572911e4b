"""README blocks: the registry, the markers, and reading and rewriting README.md."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from lionsim.errors import LionsimError
from lionsim.registry import Registry

START = "<!-- generated: {name} (python -m lionsim.docs) -->"
END = "<!-- end generated: {name} -->"
_BLOCK = re.compile(r"<!-- generated: (?P<name>[\w.-]+) \(python -m lionsim\.docs\) -->\n(?P<body>.*?)"
                    r"<!-- end generated: (?P=name) -->", re.S)


@dataclass(frozen=True, slots=True)
class Block:
    """One generated part of README.md."""

    name: str
    render: Callable[[], str]
    """The block's markdown (ending with a newline)."""
    cache: str | None = None
    """The cached run it renders from (reports/readme/CACHE), or None: it runs what it needs."""


BLOCKS: Registry[Block] = Registry("README block")


def readme_path() -> Path:
    """README.md of the checkout lionsim runs from."""
    from lionsim.regress.baseline import project_root

    root = project_root()
    if root is None or not (root / "README.md").is_file():
        raise LionsimError("README.md not found: python -m lionsim.docs runs from a lionsim checkout")
    return root / "README.md"


def cache_dir(name: str) -> Path:
    return readme_path().parent / "reports" / "readme" / name


def readme_blocks(text: str) -> dict[str, str]:
    """{name: body} of every generated block in a README text."""
    return {m.group("name"): m.group("body") for m in _BLOCK.finditer(text)}


def with_blocks(text: str, bodies: dict[str, str]) -> str:
    """The README text with the named blocks' bodies replaced (a missing marker is an error)."""
    missing = [name for name in bodies if name not in readme_blocks(text)]
    if missing:
        raise LionsimError(f"README.md has no markers for {', '.join(missing)}; add "
                           + " ... ".join((START + "\n", END)).format(name=missing[0]))

    def replace(m: re.Match) -> str:
        name = m.group("name")
        body = bodies.get(name, m.group("body"))
        return START.format(name=name) + "\n" + body + END.format(name=name)

    return _BLOCK.sub(replace, text)
