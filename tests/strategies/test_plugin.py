"""A strategy lionsim does not ship, loaded as a plug-in (examples/plugins/randomk_ef.py: random-k
sparsification with error feedback, Stich et al. 2018). Its own tests, the ones the docs tell a
plug-in's author to copy, are examples/plugins/test_randomk_ef.py (against a plain reference
written from the paper's equations; its bytes against their closed form; bench, report,
estimate, strategies): run here from a folder outside this checkout. Here: replays, sweeps, gloo,
and every way a plug-in can be wrong, each one line, exit 2, nothing written."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import lionsim
from lionsim.cli.strategy_flags import refresh
from lionsim.plugins import LOADED, load_plugin, unload_plugin
from lionsim.strategies import STRATEGIES
from lionsim.transports import TRANSPORTS
from tests.helpers.cli import exit_code, sim_and_gloo_steps
from tests.helpers.installed import fake_distribution

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "randomk_ef.py"


@pytest.fixture
def plugin():
    """The example loaded for one test, forgotten after it (the registries are the process's)."""
    key = load_plugin(EXAMPLE)
    refresh()
    yield sys_module(key)
    unload_plugin(key)
    refresh()


def sys_module(key: str):
    return sys.modules[LOADED[key][0]]


def test_the_example_test_runs_with_lionsim_installed_from_any_directory(tmp_path):
    """docs/writing-a-strategy.md tells a plug-in's author to copy examples/plugins/test_randomk_ef.py
    (random-k against the paper's rule, its bytes against their closed form, bench, report,
    estimate, strategies): beside a copy of its plug-in, in a folder outside this checkout, with
    lionsim importable and this repository's `tests` package not, it passes."""
    mine, site = tmp_path / "mine", tmp_path / "site"
    mine.mkdir()
    site.mkdir()
    for name in ("randomk_ef.py", "test_randomk_ef.py"):
        shutil.copy(EXAMPLE.with_name(name), mine / name)
    (site / "lionsim").symlink_to(Path(lionsim.__file__).parent)  # lionsim as installed: this tree's
    env = {**os.environ, "PYTHONPATH": str(site), "OMP_NUM_THREADS": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    probe = "import importlib.util as u; print(u.find_spec('tests') is None, u.find_spec('lionsim').origin)"
    found = subprocess.run([sys.executable, "-c", probe], cwd=mine, env=env, capture_output=True, text=True)
    assert found.stdout.split() == ["True", str(site / "lionsim" / "__init__.py")], found
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_randomk_ef.py"],
                          cwd=mine, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "6 passed" in done.stdout, done.stdout[-4000:] + done.stderr[-2000:]


@pytest.mark.slow  # two whole bench processes
def test_a_run_json_replays_with_its_plugin(plugin, tmp_path):
    first, again = tmp_path / "a", tmp_path / "b"
    argv = ["-w", "mlp", "-n", "2", "--steps", "2", "-b", "8", "-s", "randomk-ef", "--opt", "randomk-ef.ratio=0.02"]
    assert exit_code(["bench", "--plugin", str(EXAMPLE), *argv, "--out", str(first)]) == 0
    assert exit_code(["bench", "--config", str(first / "run.json"), "--out", str(again)]) == 0
    a, b = (pd.read_csv(d / "steps.csv") for d in (first, again))
    assert a.loss.tolist() == b.loss.tolist() and a.wire_bytes.tolist() == b.wire_bytes.tolist()


def test_a_later_bench_without_the_plugin_records_none_of_its_flags(plugin, tmp_path):
    """The process still holds the plug-in another bench loaded; a bench that did not name it
    records only its own strategies' flags, so its run.json replays where the plug-in is unknown."""
    out, again = tmp_path / "plain", tmp_path / "again"
    assert exit_code(["bench", "--plugin", str(EXAMPLE), "-w", "mlp", "-n", "2", "--steps", "1", "-b", "8",
                "-s", "randomk-ef", "--out", str(tmp_path / "rk")]) == 0
    assert "randomk_ef_ratio" in json.loads((tmp_path / "rk" / "run.json").read_text())["config"]
    assert exit_code(["bench", "-w", "mlp", "-n", "2", "--steps", "1", "-b", "8", "-s", "lion", "--out", str(out)]) == 0
    assert "randomk_ef_ratio" not in json.loads((out / "run.json").read_text())["config"]
    unload_plugin(str(EXAMPLE))  # a fresh process: the plug-in unknown
    refresh()
    try:
        assert exit_code(["bench", "--config", str(out / "run.json"), "--out", str(again)]) == 0
    finally:
        load_plugin(EXAMPLE)  # the fixture unloads it
        refresh()
    assert pd.read_csv(out / "steps.csv").loss.tolist() == pd.read_csv(again / "steps.csv").loss.tolist()


@pytest.mark.slow
def test_a_two_cell_sweep_trains_it(plugin, tmp_path):
    out = tmp_path / "sweep"
    assert exit_code(["sweep", "--plugin", str(EXAMPLE), "-w", "mlp", "-n", "2,4", "--steps", "2", "-b", "8",
                "-s", "randomk-ef", "--randomk-ef-ratio", "0.02", "--out", str(out)]) == 0
    summary = pd.read_csv(out / "sweep_summary.csv")
    assert sorted(summary.workers) == [2, 4] and set(summary.strategy) == {"randomk-ef"}


# -- a plug-in that is wrong: one line, exit 2, nothing written, nothing left registered ------------

GOOD_HEAD = """
from dataclasses import dataclass
from lionsim.strategies import STRATEGIES, Strategy
from lionsim.strategies.core.base import Hyper
from lionsim.strategies.core.form import between, option
from lionsim.transports import PayloadSpec
"""

WHOLE = GOOD_HEAD + """
@STRATEGIES.register("{name}")
class Mine(Strategy):
    name = "{name}"
    summary = "a test strategy"
    payload_kind = "dense"
    default_transport = "fp32-allreduce"
    defaults = Hyper(lr=0.1, weight_decay=0.0, betas=(0.0, 0.0))
{options}
    def payload_spec(self):
        return PayloadSpec(kind="dense", numel=self.layout.numel)

    def encode(self, grads, params, comm, clock):
        from lionsim.transports import Payload
        return Payload(self.payload_spec(), grads)

    def apply(self, params, aggregate):
        params.sub_(aggregate[0], alpha=self.hyper.lr)
"""

RATIO = """
    @dataclass(frozen=True, kw_only=True)
    class Options:
        ratio: float = option(0.5, check=between(0, 1, low_open=True){flag})
        \"\"\"A ratio.\"\"\"
"""

BAD_PLUGINS = {
    "missing file": (None, ": no such file; accepted: a Python file (FILE.py) defining"),
    "not python": ("x = 1\n", "bad --plugin "),
    "raises on import": ("import math\nraise RuntimeError('boom')\n", "importing it raised RuntimeError: boom (line 2)"),
    "exits on import": ("import sys\nsys.exit('bye')\n", "importing it raised SystemExit: bye (line 2); lionsim "
                        "imports the file"),
    "syntax error": ("def (:\n", "importing it raised SyntaxError"),
    "registers nothing": ("x = 1\n", "registers no strategy or transport"),
    "lacks members": (GOOD_HEAD + "\n@STRATEGIES.register('half')\nclass Half(Strategy):\n    name = 'half'\n",
                      "strategy 'half' lacks summary, payload_kind, default_transport, defaults"),
    "abstract": (WHOLE.format(name="abstract-one", options="").replace("def apply", "def not_apply"),
                 "strategy 'abstract-one' does not implement apply"),
    "built-in name": (WHOLE.format(name="adamw", options=""), "strategy 'adamw' registered twice: a built-in"),
    "wrong kind": (WHOLE.format(name="odd", options="").replace('payload_kind = "dense"', 'payload_kind = "odd"'),
                   "strategy 'odd': payload_kind 'odd'; accepted: "),
    "bare option field": (WHOLE.format(name="bare", options="\n    @dataclass(frozen=True, kw_only=True)\n"
                                       "    class Options:\n        ratio: float = 0.5\n"),
                          "strategy 'bare': option 'ratio' needs option(default, accepted=..., check=...)"),
    "bad default": (WHOLE.format(name="baddefault", options=RATIO.format(flag="")).replace("option(0.5", "option(2.0"),
                    "bad --baddefault-ratio 2; accepted: a number above 0 and at most 1"),
    "flag of another type": (WHOLE.format(name="clash", options=RATIO.format(flag=', flag="--local-steps"')),
                             "strategy 'clash': --local-steps is float but 'localsgd' declares it int"),
}


@pytest.mark.parametrize("case", sorted(BAD_PLUGINS))
def test_a_bad_plugin_is_one_line(case, tmp_path, monkeypatch, capsys):
    source, expected = BAD_PLUGINS[case]
    path = tmp_path / ("plugin.txt" if case == "not python" else "plugin.py")
    if source is not None:
        path.write_text(source)
    monkeypatch.chdir(tmp_path)
    before = (STRATEGIES.names(), TRANSPORTS.names())
    assert exit_code(["bench", "--plugin", str(path), "-w", "mlp", "--steps", "1", "--out", "out"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err
    assert expected in err
    assert not (tmp_path / "out").exists()
    assert (STRATEGIES.names(), TRANSPORTS.names()) == before


def test_where_the_file_is_wrong_the_line_says_how(tmp_path, monkeypatch, capsys):
    """A syntax error's own text names its file and line: its line once, not again after it; a
    folder, and a file named without its .py, each say so instead of only what is accepted."""
    from tests.helpers.cli import one_line_exit_2

    (tmp_path / "syntax.py").write_text("x = 1\n\ndef encode(self)\n    return x\n")  # line 3: no colon
    (tmp_path / "ef_signum.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    accepted = "accepted: a Python file (FILE.py) defining strategies or transports"
    err = one_line_exit_2(["strategies", "--plugin", "syntax.py"], capsys,
                          "error: plugin syntax.py: importing it raised SyntaxError: expected ':' (syntax.py, line 3)\n")
    assert err.count("line 3") == 1
    one_line_exit_2(["strategies", "--plugin", str(tmp_path)], capsys,
                    f"error: bad --plugin {tmp_path}: it is a folder; {accepted}\n")
    one_line_exit_2(["strategies", "--plugin", "ef_signum"], capsys,
                    f"error: bad --plugin ef_signum: no such file; {accepted}; did you mean ef_signum.py?\n")
    one_line_exit_2(["strategies", "--plugin", "other"], capsys, f"error: bad --plugin other; {accepted}\n")


HINT = " is not built in: if a plug-in defines it, load that with --plugin FILE.py\n"


def test_a_plugins_name_typed_without_its_plugin_says_how_to_load_it(capsys):
    """A strategy or transport name near no built-in one (a plug-in's, its --plugin forgotten) ends
    its refusal with how to load a plug-in, through the registries and through the table read before
    torch (lionsim.name_table) alike; a near name keeps its did-you-mean, the hint after it; a device,
    which no plug-in registers, has neither."""
    from lionsim import name_table
    from lionsim.compute.devices import DEVICES
    from lionsim.errors import LionsimError
    from lionsim.runs import parse_runs
    from tests.helpers.cli import one_line_exit_2

    err = one_line_exit_2(["bench", "-s", "sign-scale", "-w", "mlp"], capsys, "error: unknown strategy 'sign-scale'; ")
    assert err.endswith("; 'sign-scale'" + HINT)
    err = one_line_exit_2(["bench", "-s", "adamw@pigeon", "-w", "mlp"], capsys, "error: unknown transport 'pigeon'; ")
    assert err.endswith("; 'pigeon'" + HINT)
    err = one_line_exit_2(["bench", "-s", "lionn", "-w", "mlp"], capsys)
    # a near name keeps its did-you-mean, and the hint follows it (a plug-in's ef-signum, its --plugin
    # forgotten, was offered only the built-in ef-signsgd)
    assert err.endswith("; did you mean 'lion'? (If a plug-in defines 'lionn', load that with --plugin FILE.py.)\n")
    table = name_table.names_from(name_table.table())
    for names in (None, table):
        with pytest.raises(LionsimError) as refused:
            parse_runs(["sign-scale"], names=names)
        assert str(refused.value).endswith("'sign-scale'" + HINT.rstrip())
    with pytest.raises(LionsimError) as refused:
        DEVICES.canonical("abacus")
    assert "plug-in" not in str(refused.value) and "did you mean" not in str(refused.value)


def test_a_missing_plugin_file_names_the_nearest_file_beside_it(tmp_path, monkeypatch, capsys):
    """A file name with a typo, or without its .py, is answered with the .py files beside it whose
    names are nearest (every one as near), in the folder as typed; none near, or no such folder:
    the refusal alone. Reference: the folder's listing, written here."""
    from tests.helpers.cli import one_line_exit_2

    (tmp_path / "mine").mkdir()
    for name in ("sign_scale.py", "bad_nan.py", "bad_len.py", "notes.txt"):
        (tmp_path / "mine" / name).write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    refused = "no such file; accepted: a Python file (FILE.py) defining strategies or transports"
    for typed, near in [("mine/sign_scal.py", "mine/sign_scale.py"), ("mine/sign_scale", "mine/sign_scale.py"),
                        ("mine/sign_scal", "mine/sign_scale.py"), ("mine/bad_na.py", "mine/bad_nan.py"),
                        ("mine/bad.py", "mine/bad_len.py or mine/bad_nan.py"), ("mine/signscale.py", "mine/sign_scale.py")]:
        one_line_exit_2(["strategies", "--plugin", typed], capsys,
                        f"error: bad --plugin {typed}: {refused}; did you mean {near}?\n")
    for typed in ("mine/zzz.py", "other/sign_scal.py", "mine/notes.py"):
        one_line_exit_2(["strategies", "--plugin", typed], capsys, f"error: bad --plugin {typed}: {refused}\n")


def test_a_plugin_flag_that_is_a_command_option_is_refused(tmp_path, capsys):
    path = tmp_path / "steps.py"
    path.write_text(WHOLE.format(name="stepper", options=RATIO.format(flag=', flag="--steps"')))
    try:
        assert exit_code(["bench", "--plugin", str(path), "-s", "stepper", "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "option flag --steps is already a `lionsim bench` option" in err
    finally:
        if str(path.resolve()) in LOADED:
            unload_plugin(str(path))
        refresh()


def test_a_bad_option_value_of_a_plugin_is_one_line(plugin, tmp_path, capsys):
    for argv, expected in ((["--randomk-ef-ratio", "0"], "bad --randomk-ef-ratio 0; accepted: a number above 0 and at most 1"),
                           (["--opt", "randomk-ef.ratio=lots"], "bad --opt randomk-ef.ratio=lots; accepted: a number"),
                           (["--opt", "randomk-ef.size=3"], "randomk-ef has no option 'size'; accepted: ratio")):
        assert exit_code(["bench", "--plugin", str(EXAMPLE), "-s", "randomk-ef", "-w", "mlp", *argv,
                    "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and expected in err, err
    assert not (tmp_path / "out").exists()


def test_the_docs_show_the_example_as_it_is():
    docs = (EXAMPLE.parents[2] / "docs" / "writing-a-strategy.md").read_text()
    shown = docs.split("```python\n", 1)[1].split("```\n", 1)[0]
    assert shown == EXAMPLE.read_text()


@pytest.mark.slow
def test_gloo_ranks_load_the_plugin_and_train_what_sim_trains(plugin, tmp_path):
    """The spawned ranks import the file again (BenchConfig.plugins) and draw the same positions."""
    argv = ["-w", "mlp", "-n", "2", "--steps", "3", "-b", "8", "--eval-every", "3", "-s", "randomk-ef",
            "--compute", "h100"]
    sim, gloo = sim_and_gloo_steps(EXAMPLE, argv, tmp_path)
    assert gloo.loss.tolist() == pytest.approx(sim.loss.tolist(), rel=1e-5)
    assert gloo.wire_bytes.tolist() == sim.wire_bytes.tolist()


def test_an_installed_package_registers_through_its_entry_point_at_the_first_read(tmp_path, monkeypatch):
    (tmp_path / "ep_target.py").write_text("from lionsim.registry import Registry\n"
                                           "REG = Registry('thing', entry_points='lionsim.test_things')\n")
    (tmp_path / "ep_plugin.py").write_text("import ep_target\nep_target.REG.add('from-a-package', 42)\n")
    fake_distribution(tmp_path, "lionsim.test_things", {"mine": "ep_plugin"})
    monkeypatch.syspath_prepend(str(tmp_path))
    import ep_target

    assert ep_target.REG.get("from-a-package") == 42 and ep_target.REG.names() == ["from-a-package"]


@pytest.mark.parametrize("module, source, raised", [
    # a module that calls sys.exit at import ended the command with its own message and code
    ("ep_exits", "import sys\nsys.exit('bye')\n", "SystemExit: bye; lionsim imports the file"),
    ("ep_broken", "raise ImportError('needs a library you lack')\n", "ImportError: needs a library you lack"),
])
def test_an_installed_package_that_fails_on_import_is_one_line_naming_it(module, source, raised, tmp_path,
                                                                          monkeypatch):
    from lionsim.errors import LionsimError
    from lionsim.registry import Registry

    name = module.removeprefix("ep_")
    (tmp_path / f"{module}.py").write_text(source)
    fake_distribution(tmp_path, f"lionsim.test_{name}", {name: module})
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(LionsimError, match=rf"plugin {module} \(entry point '{name}' of lionsim.test_{name}\): "
                                           rf"importing it raised {re.escape(raised)}"):
        Registry("thing", entry_points=f"lionsim.test_{name}").names()
