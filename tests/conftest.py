"""Fixtures every test folder shares, and the settings that keep the CI tier fast and the same on
any machine (docs/ci-guard.md, "The test suite").

- Plots are laid out but not rendered: `Figure.savefig` writes an empty file of the name asked
  for, so a bench, sweep, comm or estimate run in a test draws every figure (its code runs, its
  files are listed) without the PNG and SVG rendering that costs about a second a run. From the
  first test's setup on (pytest_runtest_setup): a module- or session-scoped fixture (a shared bench
  or sweep) is set up before any test's own fixtures, and rendered its figures for real when only
  tests were patched. Tests marked `plots` (the plot tests) render for real.
- One torch thread in each test process: `pytest -n 2` runs two processes on two cores, and a
  second thread each would only make them wait on each other (as `lionsim bench --threads`).
- `gloo_group(R)`: R real gloo ranks started once per test process and reused
  (tests/helpers/gloo_group.py). Every test that uses one runs on the same xdist worker
  (`--dist loadgroup`), so the ranks start once per session; so do the tests that share any
  module- or session-scoped fixture (a bench of every strategy, a sweep), built once.
- `tiny_run`: one tiny bench (two runs, momentum sync every 2 steps) written once for the tests
  that read a finished run's files.
- No COLUMNS from the caller's shell: a test that wants a width sets it (tables follow an explicit
  COLUMNS even in a pipe).
- `available_memory(bytes)`: the memory guard's MemAvailable fixed, for an answer that does not
  depend on the machine.
"""

from __future__ import annotations

import pytest

RENDERED = "plots"
"""The marker of tests that render their figures (PNG and SVG) for real."""


def pytest_configure(config) -> None:
    if _xdist_controller(config):
        return  # it runs no test: torch and lionsim load in the workers only
    import torch

    torch.set_num_threads(1)


def _xdist_controller(config) -> bool:
    """Whether this process is pytest-xdist's controller (`-n N` given, and not a worker)."""
    return not hasattr(config, "workerinput") and bool(config.getoption("numprocesses", None))


@pytest.hookimpl(tryfirst=True)  # before xdist's, which reads the groups
def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        group = _shared_work(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


def _shared_work(item) -> str | None:
    """The xdist group of a test that shares work with others: "gloo" for the gloo groups' users,
    else the first module- or session-scoped fixture of tests/ it uses (a bench run, a sweep). Under
    `--dist loadgroup` a group runs on one worker, so that work is done once, not once a worker."""
    names = getattr(item, "fixturenames", ())
    if "gloo_group" in names:
        return "gloo"
    defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    for name in names:
        fixture = defs.get(name, [None])[-1]
        if fixture is not None and fixture.scope in ("module", "session") and fixture.baseid.startswith("tests"):
            return f"{fixture.baseid}::{name}"
    return None


def _unrendered_savefig(fig, fname, *args, **kwargs) -> None:
    """What Figure.savefig leaves outside the plot tests: the file, empty."""
    if hasattr(fname, "write"):
        return
    with open(fname, "wb"):
        pass


@pytest.fixture(autouse=True)
def _columns_unset(monkeypatch):
    """No COLUMNS from the shell that runs pytest: an explicit COLUMNS sets a table's width even in
    a pipe (lionsim.reports.widths.table_width), so a test that wants one sets it itself."""
    monkeypatch.delenv("COLUMNS", raising=False)


_RENDERING: list = []
"""Figure.savefig as matplotlib has it, kept when the first test's setup replaced it."""


@pytest.hookimpl(tryfirst=True)  # before any fixture of the first test, a shared one included
def pytest_runtest_setup(item) -> None:
    """Plots unrendered in this process from the first test on. A hook, not a session fixture:
    every test would use that one, and _shared_work would put them all in one xdist group."""
    if not _RENDERING:
        from matplotlib.figure import Figure

        _RENDERING.append(Figure.savefig)
        Figure.savefig = _unrendered_savefig


@pytest.fixture(autouse=True)
def _plots_unrendered(request, monkeypatch):
    """A plot test renders for real (what its shared fixtures drew before it stays unrendered)."""
    if request.node.get_closest_marker(RENDERED) is not None:
        from matplotlib.figure import Figure

        monkeypatch.setattr(Figure, "savefig", _RENDERING[0])


@pytest.fixture(scope="session")
def gloo_group():
    """gloo_group(R): a GlooGroup of R ranks, started on first use and kept for the session."""
    from tests.helpers.gloo_group import GlooGroup

    groups: dict[int, GlooGroup] = {}

    def get(world: int) -> GlooGroup:
        if world not in groups or groups[world].broken:
            groups[world] = GlooGroup(world)
        return groups[world]

    yield get
    for group in groups.values():  # all stop at once
        group.stop()
    for group in groups.values():
        group.join()


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory):
    """A finished tiny bench: dlion-mavo and adamw, momentum sync every 2 steps, 2 steps of 2
    workers; its directory (steps.csv, summary.csv, run.json, plots), not to be written to."""
    from lionsim.cli.app import main
    from tests.helpers.cli import TINY_BENCH

    out = tmp_path_factory.mktemp("tiny-run") / "r"
    with pytest.raises(SystemExit) as done:  # plots unrendered (pytest_runtest_setup), whichever test asks first
        main([*TINY_BENCH, "-s", "dlion-mavo,adamw", "--momentum-sync", "every:2", "--out", str(out)])
    assert done.value.code == 0
    return out


@pytest.fixture
def available_memory(monkeypatch):
    """available_memory(n): the memory guard sees n bytes available, on any machine."""
    from lionsim.training import memory

    def fix(nbytes: int) -> None:
        monkeypatch.setattr(memory, "available_memory", lambda: nbytes)

    return fix


@pytest.fixture
def forget_plugins():
    """The plug-ins a test's commands load are forgotten after it (the registries are the process's)."""
    from lionsim.cli.strategy_flags import refresh
    from lionsim.plugins import LOADED, unload_since

    before = set(LOADED)
    yield
    unload_since(before)
    refresh()


TRACE_WORKERS = 4
"""The workers of `counted_trace`'s trace."""


@pytest.fixture
def counted_trace(tmp_path, monkeypatch):
    """(a --compute-spread trace of TRACE_WORKERS workers over steps 1-3, the paths load_trace has read
    since): a test asserts how often a command parses its spread."""
    from lionsim.steptime import spread as spread_module

    trace = tmp_path / "t.csv"
    rows = [f"{s},{w},{1.0 + s * w / 10}" for s in (1, 2, 3) for w in range(TRACE_WORKERS)]
    trace.write_text("step,worker,compute_s\n" + "\n".join(rows) + "\n")
    reads = []
    real = spread_module.load_trace
    monkeypatch.setattr(spread_module, "load_trace", lambda text, path: reads.append(path) or real(text, path))
    return trace, reads
