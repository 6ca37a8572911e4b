"""`estimate --from-run DIR` loads the plug-ins DIR was trained with (lionsim.run_plugins), as
`--config run.json` and `--resume` do: the plug-in strategy's steps to target are the ones DIR
recorded; a recorded file that is gone is one line naming it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from lionsim.cli.strategy_flags import refresh
from lionsim.plugins import LOADED, unload_plugin
from tests.estimate.test_from_run import summary_rows
from tests.helpers.cli import one_line_exit_2, run_cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "randomk_ef.py"
REACHED = {"adamw@fp32-allreduce": 80, "randomk-ef@sparse-allgather": 60}
"""What DIR recorded: the plug-in's run reached the target in 60 steps."""
ESTIMATE = ["estimate", "--params", "2e8", "--tokens-per-worker", "1024", "--workers", "8", "--network", "10gbe"]


@pytest.fixture
def plugin_file(tmp_path):
    """The example plug-in at a path of this test's own, forgotten after it (the registries are the process's)."""
    path = tmp_path / "plug" / "randomk_ef.py"
    path.parent.mkdir()
    shutil.copy(EXAMPLE, path)
    yield path
    if str(path.resolve()) in LOADED:
        unload_plugin(str(path.resolve()))
        refresh()


def trained(tmp_path: Path, kind: str, plugins: list[str]) -> Path:
    """A finished bench run or sweep root of REACHED that records `plugins` as its own do."""
    out = tmp_path / kind
    out.mkdir()
    rows = summary_rows(REACHED)
    if kind == "run":
        pd.DataFrame(rows).to_csv(out / "summary.csv", index=False)
        record = {"command": "bench", "status": "complete", "config": {"plugin": plugins},
                  "runs": [{"run": label, "options": {}} for label in REACHED]}
        (out / "run.json").write_text(json.dumps(record))
    else:
        cells = [{"cell": f"c-{r['run']}", **r} for r in rows]
        pd.DataFrame(cells).to_csv(out / "sweep_summary.csv", index=False)
        (out / "sweep.json").write_text(json.dumps({"kind": "sweep", "cells": len(cells),
                                                    "bench": {"plugins": plugins}}))
    return out


@pytest.mark.parametrize("kind", ["run", "sweep"])
def test_the_plugins_dir_was_trained_with_are_loaded_and_its_steps_priced(tmp_path, capsys, plugin_file, kind):
    where = trained(tmp_path, kind, [str(plugin_file)])
    code, out, err = run_cli([*ESTIMATE, "--from-run", where, "--out", tmp_path / "est"], capsys)
    assert code == 0, err
    got = pd.read_csv(tmp_path / "est" / "estimate.csv").set_index("strategy")
    assert got.loc["randomk-ef", "steps_to_target"] == REACHED["randomk-ef@sparse-allgather"]
    assert got.loc["randomk-ef", "to_target_how"] == "exact"
    assert got.loc["adamw", "steps_to_target"] == REACHED["adamw@fp32-allreduce"]


@pytest.mark.parametrize("kind", ["run", "sweep"])
def test_a_recorded_plugin_that_is_gone_is_one_line_naming_it(tmp_path, capsys, kind):
    gone = tmp_path / "moved" / "randomk_ef.py"
    where = trained(tmp_path, kind, [str(gone)])
    err = one_line_exit_2([*ESTIMATE, "--from-run", where], capsys, f"trained with --plugin {gone}")
    assert "did you mean" not in err and "unknown strategy" not in err


def test_a_moved_plugin_given_by_plugin_stands_for_the_recorded_one(tmp_path, capsys, plugin_file):
    where = trained(tmp_path, "run", [str(tmp_path / "moved" / plugin_file.name)])
    code, out, err = run_cli([*ESTIMATE, "--from-run", where, "--plugin", plugin_file], capsys)
    assert code == 0, err
    assert "randomk-ef" in out


@pytest.fixture
def forget():
    """Plug-in files a test loads, forgotten after it (the registries are the process's)."""
    paths: list[Path] = []
    yield paths
    for path in paths:
        if str(path.resolve()) in LOADED:
            unload_plugin(str(path.resolve()))
    refresh()


@pytest.fixture
def loaded(monkeypatch) -> set[str]:
    """The plug-in files a command loaded (main unloads them as it ends: lionsim.cli.app)."""
    import importlib

    cli_app = importlib.import_module("lionsim.cli.app")  # the module (lionsim.cli.app is also the Typer app)
    seen: set[str] = set()
    real = cli_app._forget_plugins

    def spy(before: set) -> None:
        seen.update(key for key in LOADED if key not in before)
        real(before)

    monkeypatch.setattr(cli_app, "_forget_plugins", spy)
    return seen


def test_a_plugin_given_wins_over_the_recorded_file_of_the_same_name_still_there(tmp_path, capsys, forget, loaded):
    recorded, given = tmp_path / "a" / EXAMPLE.name, tmp_path / "b" / EXAMPLE.name
    for path in (recorded, given):
        path.parent.mkdir()
        shutil.copy(EXAMPLE, path)
        forget.append(path)
    where = trained(tmp_path, "run", [str(recorded)])
    code, out, err = run_cli([*ESTIMATE, "--from-run", where, "--plugin", given], capsys)
    assert code == 0, err
    assert "randomk-ef" in out
    assert str(given.resolve()) in loaded and str(recorded.resolve()) not in loaded  # the copy given, once


def test_a_relative_recorded_plugin_is_taken_from_the_run_directory(tmp_path, capsys, monkeypatch, forget):
    where = trained(tmp_path, "run", ["plug/randomk_ef.py"])  # hand-written: relative to the run's folder
    (where / "plug").mkdir()
    shutil.copy(EXAMPLE, where / "plug" / EXAMPLE.name)
    forget.append(where / "plug" / EXAMPLE.name)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # no plug/ here
    code, out, err = run_cli([*ESTIMATE, "--from-run", where, "--out", tmp_path / "est"], capsys)
    assert code == 0, err
    got = pd.read_csv(tmp_path / "est" / "estimate.csv").set_index("strategy")
    assert got.loc["randomk-ef", "steps_to_target"] == REACHED["randomk-ef@sparse-allgather"]


def test_a_bare_path_recorded_reads_as_a_list_of_one_as_config_run_json_reads_it(tmp_path, capsys, plugin_file):
    where = trained(tmp_path, "run", [])
    record = json.loads((where / "run.json").read_text())
    record["config"]["plugin"] = str(plugin_file)  # a string, not a list: --config run.json loads it too
    (where / "run.json").write_text(json.dumps(record))
    code, out, err = run_cli([*ESTIMATE, "--from-run", where, "--out", tmp_path / "est"], capsys)
    assert code == 0, err
    got = pd.read_csv(tmp_path / "est" / "estimate.csv").set_index("strategy")
    assert got.loc["randomk-ef", "steps_to_target"] == REACHED["randomk-ef@sparse-allgather"]


def test_a_plugin_given_wins_over_a_config_files_of_the_same_name(tmp_path, capsys, forget, loaded):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        shutil.copy(EXAMPLE, tmp_path / folder / EXAMPLE.name)
        forget.append(tmp_path / folder / EXAMPLE.name)
    (tmp_path / "c.toml").write_text(f'plugin = ["a/{EXAMPLE.name}"]\n')
    given = tmp_path / "b" / EXAMPLE.name
    code, out, err = run_cli([*ESTIMATE, "--config", tmp_path / "c.toml", "--plugin", given, "-s", "randomk-ef"],
                             capsys)
    assert code == 0, err
    assert str(given.resolve()) in loaded and str((tmp_path / "a" / EXAMPLE.name).resolve()) not in loaded
