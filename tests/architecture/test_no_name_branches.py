"""No code branches on a strategy's or a transport's name outside the module that registers it:
what a strategy or transport needs is declared on its class (overlap, schedule, payload kind,
kernels, `reads`), so a new one is its own file. A plain walk over lionsim/'s syntax trees finds
every comparison (==, !=, in, not in, startswith) against a registered name, or against a
module-level tuple, list or set made of registered names."""

from __future__ import annotations

import ast
from pathlib import Path

from lionsim.strategies import STRATEGIES
from lionsim.transports import TRANSPORTS

PACKAGE = Path(__file__).resolve().parents[2] / "lionsim"


def owners() -> dict[str, str]:
    """Registered name -> the module that registers it (dotted)."""
    return {name: cls.__module__ for registry in (STRATEGIES, TRANSPORTS) for name, cls in registry.items()}


def modules() -> dict[str, ast.Module]:
    return {".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__"):
            ast.parse(path.read_text(encoding="utf-8")) for path in sorted(PACKAGE.rglob("*.py"))}


def literal_names(node: ast.AST, names: dict[str, str]) -> list[str]:
    """The registered names a constant or a literal tuple/list/set of constants spells."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value.partition("@")[0]] if node.value.partition("@")[0] in names else []
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [n for item in node.elts for n in literal_names(item, names)]
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("frozenset", "set", "tuple") and node.args:
        return literal_names(node.args[0], names)
    return []


def name_sets(trees: dict[str, ast.Module], names: dict[str, str]) -> dict[str, dict[str, list[str]]]:
    """Per module, the constants it defines or imports that are made only of registered names (a
    central table of them), by the name it knows them by."""
    own = {}
    for module, tree in trees.items():
        own[module] = {}
        for stmt in tree.body:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
            value = getattr(stmt, "value", None)
            literal = value.args[0] if isinstance(value, ast.Call) and value.args else value
            elements = getattr(literal, "elts", None)
            spelled = literal_names(value, names) if elements else []
            if spelled and len(spelled) == len(elements):
                own[module].update({t.id: spelled for t in targets if isinstance(t, ast.Name)})
    known = {}
    for module, tree in trees.items():
        known[module] = dict(own[module])
        for stmt in ast.walk(tree):
            if isinstance(stmt, ast.ImportFrom) and stmt.module in own:
                known[module].update({a.asname or a.name: own[stmt.module][a.name] for a in stmt.names
                                      if a.name in own[stmt.module]})
    return known


def branches(trees: dict[str, ast.Module], names: dict[str, str]) -> list[str]:
    """`module:line: names` for every comparison against registered names outside their module."""
    tables = name_sets(trees, names)
    out = []
    for module, tree in trees.items():
        for node in ast.walk(tree):
            compared: list[str] = []
            if isinstance(node, ast.Compare):
                for side in [node.left, *node.comparators]:
                    compared += literal_names(side, names)
                    if any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) and isinstance(side, ast.Name):
                        compared += tables[module].get(side.id, [])
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr in ("startswith", "endswith") and node.args):
                compared += literal_names(node.args[0], names)
            foreign = sorted({n for n in compared if names[n] != module})
            if foreign:
                out.append(f"{module}:{node.lineno}: {', '.join(foreign)}")
    return sorted(out, key=lambda line: (line.split(":")[0], int(line.split(":")[1])))


def test_no_module_branches_on_another_modules_strategy_or_transport_name():
    assert branches(modules(), owners()) == []


def test_the_walk_finds_what_it_looks_for():
    """The checker itself, on code written to break the rule (and code that keeps it)."""
    names = {"dlion-mavo": "pkg.dlion", "a2a-1bit": "pkg.a2a"}
    source = '''
TABLE = frozenset({"dlion-mavo", "a2a-1bit"})
DEFAULTS = ("dlion-mavo", "adamw")
def f(run, t):
    if run.strategy == "dlion-mavo":
        pass
    if t in ("a2a-1bit", "other"):
        pass
    if t in TABLE or t.startswith("a2a-1bit"):
        pass
    return t in DEFAULTS  # not a table of registered names only (adamw is not registered here): data
'''
    trees = {"pkg.elsewhere": ast.parse(source), "pkg.dlion": ast.parse('ok = x == "dlion-mavo"'),
             "pkg.user": ast.parse("from pkg.elsewhere import TABLE as T\nok = x not in T")}
    assert branches(trees, names) == ["pkg.elsewhere:5: dlion-mavo", "pkg.elsewhere:7: a2a-1bit",
                                      "pkg.elsewhere:9: a2a-1bit, dlion-mavo", "pkg.elsewhere:9: a2a-1bit",
                                      "pkg.user:2: a2a-1bit, dlion-mavo"]
