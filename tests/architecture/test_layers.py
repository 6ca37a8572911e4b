"""The layers hold, over packages: the configuration flows one way (docs/architecture.md),

    command (cli, config, bench) -> sweep, launch, estimate -> measure -> training -> plan -> reports

and nothing imports a layer above its own; no two packages import each other, directly or
around a loop (tests/architecture/test_import_cycles.py checks modules; a package cycle hides between
modules that each import only the other's other modules). A package is a subpackage of
lionsim (lionsim.training) or a top-level module (lionsim.plan); every import counts, deferred
and type-only ones included (the scanner of test_import_cycles)."""

from __future__ import annotations

import functools
import graphlib

from tests.architecture.test_import_cycles import PACKAGE, imports, modules

LAYERS: list[tuple[str, ...]] = [
    ("cli", "__main__", "config", "bench"),  # the command: flags, TOML, run.json -> configuration -> plan
    ("sweep", "launch", "estimate"),  # many benches; a bench's real ranks; a priced step without training
    ("measure",),  # measured collectives (and --calibrate on a bench's own group)
    ("training",),  # the runner, its records, their booking into files' contents
    ("plan",),  # the resolved bench every layer below the command reads
    ("reports",),  # columns, the summary rule, files, plots, tables
]
"""Top to bottom. Packages in no layer are the domain below them (strategies, transports,
network, steptime, ...), or harnesses beside the command that drive it (docgen, perf, regress,
published: they run commands, as a user would)."""
HARNESSES = ("docgen", "perf", "regress", "published")
COMMAND = LAYERS[0]


def package_graph(root=PACKAGE) -> dict[str, set[str]]:
    """package -> the packages its modules import (itself left out)."""
    known = modules(root)

    def package(module: str) -> str:
        parts = module.split(".")
        return parts[1] if len(parts) > 1 else parts[0]

    graph: dict[str, set[str]] = {package(m): set() for m in known}
    for name, path in known.items():
        for target in imports(name, path, known):
            if package(target) != package(name):
                graph[package(name)].add(package(target))
    return graph


def upward(graph: dict[str, set[str]]) -> list[str]:
    """`a -> b` for every import of a layer above the importer's (the domain sits below every layer)."""
    rank = {p: i for i, layer in enumerate(LAYERS) for p in layer}
    below = len(LAYERS)
    out = []
    for a, targets in graph.items():
        if a in HARNESSES:
            continue
        for b in targets:
            if b in rank and rank[b] < rank.get(a, below):
                out.append(f"{a} -> {b}")
    return sorted(out)


def package_cycles(graph: dict[str, set[str]]) -> list[str]:
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as e:
        return e.args[1]
    return []


def test_the_checks_find_an_upward_import_and_a_package_cycle(tmp_path):
    """On a made-up lionsim: training imports the configuration, launch and measure import each
    other through different modules (no module cycle, a package one)."""
    root = tmp_path / "lionsim"
    files = {
        "__init__.py": "",
        "config/__init__.py": "", "config/bench.py": "from lionsim.plan import BenchPlan\n",
        "plan.py": "", "training/__init__.py": "", "training/runner.py": "from lionsim.config.bench import X\n",
        "launch/__init__.py": "", "launch/rank.py": "from lionsim.measure.calibrate import calibrate\n",
        "launch/env.py": "",
        "measure/__init__.py": "", "measure/calibrate.py": "", "measure/rank.py": "import lionsim.launch.env\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    graph = package_graph(root)
    assert upward(graph) == ["measure -> launch", "training -> config"]
    assert set(package_cycles(graph)) == {"launch", "measure"}


@functools.cache
def lionsim_graph() -> dict[str, frozenset[str]]:
    """lionsim's own package graph, scanned once for the tests below."""
    return {p: frozenset(t) for p, t in package_graph().items()}


def test_nothing_below_the_command_imports_the_configuration_or_the_cli():
    graph = lionsim_graph()
    below = [p for p in graph if p not in COMMAND and p not in HARNESSES]
    assert {"training", "launch", "reports", "sweep", "measure", "plan"} <= set(below)
    assert [f"{p} -> {sorted(graph[p] & set(COMMAND))}" for p in below if graph[p] & set(COMMAND)] == []


def test_no_package_imports_a_layer_above_its_own():
    assert upward(lionsim_graph()) == []


def test_no_package_cycle():
    assert package_cycles(lionsim_graph()) == []
