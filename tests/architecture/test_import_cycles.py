"""No import cycles in lionsim: a static scan of every module's imports, those inside functions
and under TYPE_CHECKING included (a deferred import is still a dependency: it hides a cycle,
it does not remove it). An edge goes to the module an import names (`from lionsim.a import b`
is lionsim.a.b when that is a module, else lionsim.a); a package's __init__, which Python runs
before any of its modules, is not an edge of its modules' imports.

The scanner is checked first on a made-up package whose cycles are known."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "lionsim"
KNOWN: set[frozenset[str]] = set()
"""Cycles left on purpose, each with who removes it; a cycle that is gone must leave this list."""


def modules(root: Path) -> dict[str, Path]:
    found = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of the scanned package that `name` imports, anywhere in its file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    top = next(iter(known)).split(".")[0]
    edges = set()

    def add(target: str) -> None:
        while target and target not in known:  # `lionsim.a.name` where name is not a module: lionsim.a
            target = target.rpartition(".")[0]
        if target and target != name:
            edges.add(target)

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == top:
                    add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            if base.split(".")[0] != top:
                continue
            for alias in node.names:
                add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return edges


def cycles(root: Path) -> set[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    known = modules(root)
    graph = {name: imports(name, path, known) for name, path in known.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: set[frozenset[str]] = set()

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.add(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_scanner_finds_deferred_and_type_only_cycles(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "from pkg import a\n",  # a package's own __init__ importing its modules: no cycle
        "a.py": "import pkg.b\n",
        "b.py": "def f():\n    from pkg.a import thing  # deferred: still a cycle\n",
        "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.sub.d import D\n",
        "sub/__init__.py": "",
        "sub/d.py": "from .. import c\n",  # relative, and names a module
        "e.py": "from pkg.a import name\nimport os\n",  # a name from a module; outside imports ignored
    }
    for name, text in files.items():
        (pkg / name).write_text(text)
    assert cycles(pkg) == {frozenset({"pkg.a", "pkg.b"}), frozenset({"pkg.c", "pkg.sub.d"})}


def test_lionsim_has_no_import_cycle_but_the_known_ones():
    found = cycles(PACKAGE)
    assert found - KNOWN == set(), f"import cycles: {[sorted(c) for c in found - KNOWN]}"
    assert KNOWN - found == set(), f"gone, remove from KNOWN: {[sorted(c) for c in KNOWN - found]}"
