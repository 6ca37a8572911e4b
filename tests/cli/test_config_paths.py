"""Paths in a TOML --config are relative to the file's folder (lionsim.cli.config_paths); a path
typed on the command line stays relative to the working directory; run.json records absolute ones
(lionsim.training.record). The reference for each read: the same estimate with the path typed from
where it runs, or the run that wrote the run.json."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest

from lionsim.cli.config_paths import rebased
from tests.helpers.cli import TINY_BENCH, one_line_exit_2, run_cli

SLOW = '[inter]\nalpha_us = 20.0\nbandwidth_GBps = 0.5\n'
FAST = '[inter]\nalpha_us = 5.0\nbandwidth_GBps = 20.0\n'
ESTIMATE = 'model = "gpt2-124m"\nworkers = 4\nstrategy = ["adamw", "dlion-mavo"]\n'


@pytest.fixture
def layout(tmp_path, monkeypatch):
    """prof/est.toml naming slow.toml beside it; the working directory another folder, holding a
    fast.toml of its own (and a slow.toml a CWD-relative read would take instead)."""
    prof, cwd = tmp_path / "prof", tmp_path / "cwd"
    prof.mkdir(), cwd.mkdir()
    (prof / "slow.toml").write_text(SLOW)
    (cwd / "fast.toml").write_text(FAST)
    (prof / "est.toml").write_text(ESTIMATE + 'network = "slow.toml"\nout = "o"\n')
    monkeypatch.chdir(cwd)
    return prof, cwd


def typed(argv, capsys) -> pd.DataFrame:
    code, out, err = run_cli([*argv, "--format", "csv"], capsys)
    assert code == 0, err
    return pd.read_csv(io.StringIO(out))


def test_a_profile_and_out_in_a_config_are_read_beside_it(layout, capsys):
    prof, cwd = layout
    code, _, err = run_cli(["estimate", "--config", "../prof/est.toml"], capsys)
    assert code == 0, err
    got = pd.read_csv(prof / "o" / "estimate.csv")  # out = "o" too: beside the config
    ref = typed(["estimate", "-m", "gpt2-124m", "--workers", "4", "-s", "adamw", "-s", "dlion-mavo",
                 "--network", "../prof/slow.toml"], capsys)
    assert set(got["network"]) == {"slow"} and got["comm_s"].tolist() == ref["comm_s"].tolist()
    assert list(cwd.iterdir()) == [cwd / "fast.toml"]  # nothing written where it ran


def test_a_path_typed_beside_a_config_stays_relative_to_the_working_directory(layout, capsys):
    prof, cwd = layout
    got = typed(["estimate", "--config", "../prof/est.toml", "--network", "fast.toml", "--out", "typed"], capsys)
    ref = typed(["estimate", "-m", "gpt2-124m", "--workers", "4", "-s", "adamw", "-s", "dlion-mavo",
                 "--network", str(cwd / "fast.toml")], capsys)
    assert set(got["network"]) == {"fast"} and got["comm_s"].tolist() == ref["comm_s"].tolist()
    assert (cwd / "typed" / "estimate.csv").is_file() and not (prof / "o").exists()


def test_a_missing_path_in_a_config_names_the_key_the_file_and_where_it_looked(layout, capsys):
    prof, _ = layout
    (prof / "miss.toml").write_text(ESTIMATE + 'network = "nosuch.toml"\n')
    one_line_exit_2(["estimate", "--config", "../prof/miss.toml"], capsys,
                    "network profile not found: ../prof/nosuch.toml; accepted: ")
    err = one_line_exit_2(["estimate", "--config", "../prof/miss.toml"], capsys,
                          '(network = "nosuch.toml" in ../prof/miss.toml: a path in a config file is relative to '
                          "the file's folder)")
    assert err.startswith("error: ")


def test_which_values_are_paths():
    """Presets, registered names and module specs stay; files and folders move; absolute ones stay."""
    values = {"network": ["a.toml", "10gbe", "sub/b.json"], "workload": "w.py:make", "model": "gpt2-124m",
              "data": "corpus.txt", "plugin": ["p.py", "/abs/q.py"], "from-run": "runs/r", "out": "o",
              "workers": 4, "strategy": ["adamw"], "fit": "fit.toml", "baseline-dir": "b", "junit": "j.xml",
              "report": "r.md",
              "compute-spread": ["lognormal:0.1", "trace:t.csv", "TRACE:/abs/t.csv"]}
    got, moved = rebased(values, Path("cfg/run.toml"))
    assert got == {"network": ["cfg/a.toml", "10gbe", "cfg/sub/b.json"], "workload": "cfg/w.py:make",
                   "model": "gpt2-124m", "data": "cfg/corpus.txt", "plugin": ["cfg/p.py", "/abs/q.py"],
                   "from-run": "cfg/runs/r", "out": "cfg/o", "workers": 4, "strategy": ["adamw"],
                   "fit": "cfg/fit.toml", "baseline-dir": "cfg/b", "junit": "cfg/j.xml", "report": "cfg/r.md",
                   "compute-spread": ["lognormal:0.1", "trace:cfg/t.csv", "TRACE:/abs/t.csv"]}
    assert moved["cfg/a.toml"] == ("network", "a.toml")
    assert rebased({"workload": "pkg.mod:make", "model": "m.py:build"}, Path("run.toml"))[0] == {
        "workload": "pkg.mod:make", "model": "m.py:build"}  # a config in the working directory: as written
    assert rebased({"data": "~/x"}, Path("cfg/run.toml"))[0] == {"data": str(Path.home() / "x")}


def test_plugins_loaded_before_click_are_read_beside_a_toml_but_as_a_run_json_recorded_them(tmp_path):
    from lionsim.cli.preload import _recorded_plugins

    (tmp_path / "run.toml").write_text('plugin = ["mine.py"]\n')
    (tmp_path / "run.json").write_text(json.dumps({"command": "bench", "config": {"plugin": ["mine.py"]}}))
    assert _recorded_plugins(tmp_path / "run.toml") == [str(tmp_path / "mine.py")]
    assert _recorded_plugins(tmp_path / "run.json") == ["mine.py"]


def test_an_older_run_json_s_relative_paths_are_not_moved_beside_it(tmp_path, monkeypatch):
    """An older lionsim recorded a run's paths as it was given them, from where it ran: a replay from
    there reads the same files, so they are not moved beside the record (a newer one's are absolute)."""
    from lionsim.cli.app import click_app, err_console
    from lionsim.cli.config_file import config_defaults

    record = tmp_path / "out" / "run.json"
    record.parent.mkdir()
    record.write_text(json.dumps({"command": "bench", "config": {"network": "prof/slow.toml", "workers": 2}}))
    defaults = config_defaults(["bench", "--config", str(record)], click_app, err_console)
    assert defaults["bench"]["network"] == "prof/slow.toml"


def _trace(path: Path, slow: float) -> None:
    """A trace of 2 steps on 4 workers, worker 3 `slow` times the others' compute."""
    rows = [f"{s},{w},{slow if w == 3 else 1.0}" for s in (1, 2) for w in range(4)]
    path.write_text("step,worker,compute_s\n" + "\n".join(rows) + "\n")


def test_a_trace_in_a_config_s_compute_spread_is_read_beside_it(layout, capsys):
    """compute-spread = "trace:FILE" (one spec, or one of a list) reads FILE beside the config; the
    working directory's tr.csv (a slower worker) would give another wait. Reference: the same
    estimate with the trace's path typed from where it runs."""
    prof, cwd = layout
    _trace(prof / "tr.csv", 2.0)
    _trace(cwd / "tr.csv", 5.0)
    common = ['model = "gpt2-124m"\nworkers = 4\nnetwork = "10gbe"\nstrategy = ["adamw"]\n']
    (prof / "one.toml").write_text(common[0] + 'compute-spread = "trace:tr.csv"\n')
    (prof / "two.toml").write_text(common[0] + 'compute-spread = ["lognormal:0.1", "trace:tr.csv"]\n')
    argv = ["estimate", "-m", "gpt2-124m", "--workers", "4", "--network", "10gbe", "-s", "adamw"]
    for name, typed_specs in (("one", ["trace:../prof/tr.csv"]), ("two", ["lognormal:0.1", "trace:../prof/tr.csv"])):
        got = typed(["estimate", "--config", f"../prof/{name}.toml"], capsys)
        ref = typed([*argv, *[a for s in typed_specs for a in ("--compute-spread", s)]], capsys)
        pd.testing.assert_frame_equal(got, ref)
    beside = typed(["estimate", "--config", "../prof/one.toml"], capsys)["wait_s"].iloc[0]
    here = typed([*argv, "--compute-spread", "trace:tr.csv"], capsys)["wait_s"].iloc[0]
    assert here > beside > 0  # the two traces differ: the reference above tells which file was read


def test_a_missing_trace_in_a_config_names_the_key_the_file_and_where_it_looked(layout, capsys):
    prof, _ = layout
    (prof / "miss.toml").write_text(ESTIMATE + 'compute-spread = ["lognormal:0.1", "trace:nosuch.csv"]\n')
    err = one_line_exit_2(["estimate", "--config", "../prof/miss.toml"], capsys,
                          "bad --compute-spread trace:../prof/nosuch.csv: cannot read ../prof/nosuch.csv")
    assert err.rstrip().endswith('(compute-spread = "trace:nosuch.csv" in ../prof/miss.toml: a path in a config file is '
                        "relative to the file's folder)")


def test_each_item_of_a_sweep_s_comma_string_is_a_path_as_an_array_s(layout, capsys):
    """network = "slow.toml,1gbe" in a sweep config is the array ["slow.toml", "1gbe"]: each item
    moves as the array's do; a missing one names the config."""
    from lionsim.cli.app import click_app, err_console
    from lionsim.cli.config_file import config_defaults

    prof, _ = layout
    sweep = 'workers = 2\nstrategy = ["adamw"]\nsteps = 2\n'
    (prof / "comma.toml").write_text(sweep + 'network = "slow.toml, 1gbe"\nworkload = "mlp,w.py:make"\n')
    (prof / "array.toml").write_text(sweep + 'network = ["slow.toml", "1gbe"]\nworkload = ["mlp", "w.py:make"]\n')
    got, ref = (config_defaults(["sweep", "--config", f"../prof/{n}.toml"], click_app, err_console)["sweep"]
                for n in ("comma", "array"))
    assert got["network"] == ",".join(ref["network"]) == "../prof/slow.toml,1gbe"
    assert got["workload"] == ",".join(ref["workload"]) == "mlp,../prof/w.py:make"
    (prof / "miss.toml").write_text(sweep + 'workload = "mlp"\nnetwork = "nosuch.toml,1gbe"\n')
    one_line_exit_2(["sweep", "--config", "../prof/miss.toml", "--out", "o"], capsys,
                    'network profile not found: ../prof/nosuch.toml; accepted: ')
    one_line_exit_2(["sweep", "--config", "../prof/miss.toml", "--out", "o"], capsys,
                    '(network = "nosuch.toml" in ../prof/miss.toml: a path in a config file is relative to the '
                    "file's folder)")
    assert rebased({"network": "a.toml,1gbe"}, Path("cfg/run.toml"), "estimate")[0] == {"network": "a.toml,1gbe"}


@pytest.mark.parametrize("command", [["estimate"], ["bench", "--steps", "1"]])
def test_a_missing_profile_in_a_config_is_said_as_written_and_answered_with_profiles_only(tmp_path, monkeypatch,
                                                                                          capsys, command):
    """cfg/cfg.toml names missing.toml, and no profile lies beside it but the config itself, as near
    a name as any: "did you mean" offered the config as a network. From the config's own folder the
    line did not say the path came from the file. Now, from there and from another folder, the line
    names the key as written, the file and what is accepted, and suggests a profile or nothing."""
    cfg, elsewhere = tmp_path / "cfg", tmp_path / "elsewhere"
    cfg.mkdir(), elsewhere.mkdir()
    (cfg / "cfg.toml").write_text('network = "missing.toml"\nworkers = 2\n')
    (cfg / "run.json").write_text(json.dumps({"command": "bench", "config": {}}))  # no profile either
    where = ((cfg, "cfg.toml", "missing.toml", ""), (elsewhere, "../cfg/cfg.toml", "../cfg/missing.toml", "../cfg/"))
    for cwd, given, resolved, folder in where:
        monkeypatch.chdir(cwd)
        argv = [*command, "--config", given, "--out", str(tmp_path / "o")]
        err = one_line_exit_2(argv, capsys, f"network profile not found: {resolved}; accepted: a preset (100mbe, ")
        assert "or an existing .toml/.json profile file" in err and "did you mean" not in err, err
        assert err.rstrip().endswith(f'(network = "missing.toml" in {given}: a path in a config file is relative '
                                     "to the file's folder)"), err
        (cfg / "missng.toml").write_text(SLOW)  # a profile one letter off: offered, as the config's folder holds it
        err = one_line_exit_2(argv, capsys, f"profile file; did you mean '{folder}missng.toml'? (network = ")
        (cfg / "missng.toml").unlink()
    assert not (tmp_path / "o").exists()


def test_a_config_in_the_working_directory_names_only_its_file_like_paths():
    """In a config beside where lionsim runs, a path stays as written; those a refusal may name
    are the ones that look like a file's (a folder or a suffix): a bare `out = "results"` would be
    found in any line that says "results"."""
    values = {"network": "a.toml", "out": "results", "data": "d/corpus.txt", "workload": "mlp"}
    got, named = rebased(values, Path("run.toml"))
    assert got == values
    assert named == {"a.toml": ("network", "a.toml"), "d/corpus.txt": ("data", "d/corpus.txt")}


def _two_worker_trace(path: Path, slow: float) -> None:
    """A trace of 2 steps on 2 workers, worker 1 `slow` times worker 0's compute."""
    rows = [f"{s},{w},{slow if w == 1 else 1.0}" for s in (1, 2) for w in range(2)]
    path.write_text("step,worker,compute_s\n" + "\n".join(rows) + "\n")


def test_a_run_json_replayed_from_another_folder_reads_the_files_the_run_read(tmp_path, monkeypatch, capsys):
    """A bench given a profile, a trace and --out relative to its folder; its run.json replayed
    (--config DIR/run.json) from another folder that holds files of the same names with other
    figures. run.json recorded them as typed, so the replay priced the other folder's. Reference:
    the first run's own summary and network (the same files price the same steps)."""
    here, there = tmp_path / "here", tmp_path / "there"
    for folder, profile, slow in ((here, SLOW, 2.0), (there, FAST, 5.0)):
        (folder / "prof").mkdir(parents=True)
        (folder / "prof" / "net.toml").write_text(profile)
        _two_worker_trace(folder / "tr.csv", slow)
    monkeypatch.chdir(here)
    made = [*TINY_BENCH, "-s", "adamw", "--network", "prof/net.toml", "--compute-spread", "trace:tr.csv",
            "--out", "run"]
    code, _, err = run_cli(made, capsys)
    assert code == 0, err
    record = json.loads((here / "run" / "run.json").read_text())
    real = here.resolve()
    assert {k: record["config"][k] for k in ("network", "compute_spread", "out")} == {
        "network": str(real / "prof" / "net.toml"), "compute_spread": [f"trace:{real / 'tr.csv'}"],
        "out": str(real / "run")}
    monkeypatch.chdir(there)
    code, _, err = run_cli(["bench", "--config", "../here/run/run.json", "--out", "again"], capsys)
    assert code == 0, err
    replay = json.loads((there / "again" / "run.json").read_text())
    def figures(net: dict) -> dict:  # its description names the path as given
        return {k: v for k, v in net.items() if k != "description"}

    assert figures(replay["network"]) == figures(record["network"])
    assert replay["config"]["compute_spread"] == record["config"]["compute_spread"]
    first, again = (pd.read_csv(d / "summary.csv") for d in (here / "run", there / "again"))
    columns = ["comm_s", "wait_s", "step_s", "final_loss"]
    assert first["wait_s"].iloc[0] > 0
    pd.testing.assert_frame_equal(first[columns], again[columns])


def test_an_empty_config_says_in_one_note_that_it_sets_nothing_and_runs(tmp_path, capsys):
    """An empty --config (valid TOML) ran with the defaults without a word, so a wrong or unsaved file
    went unnoticed. The reference: the same estimate without --config, whose output it prints."""
    empty = tmp_path / "empty.toml"
    empty.write_text("# to fill in\n")
    argv = ["estimate", "--model", "gpt2-124m", "--format", "csv"]
    code, plain, _ = run_cli(argv, capsys)
    assert code == 0
    code, out, err = run_cli([*argv, "--config", str(empty)], capsys)
    notes = [line for line in err.splitlines() if "sets nothing" in line]
    assert code == 0 and out == plain
    assert notes == [f"note: --config {empty} sets nothing (it holds no keys): the command line and the defaults "
                     "decide every option"], err
    one = tmp_path / "one.toml"
    one.write_text("workers = 8\n")
    code, _, err = run_cli([*argv, "--config", str(one)], capsys)
    assert code == 0 and "sets nothing" not in err
