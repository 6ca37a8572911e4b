"""A report's Reproduce block runs as written from any folder: a command that typed a path relative
to the folder it ran in (a profile, --out) is run from there (`cd FOLDER && ...`), and the report's
own command names its folder absolute. The reference is the block itself, run line by line from
another folder as a shell would: it makes the same files again. The configuration table says what
a profile file held (its name, path and inter link), as the file wrote it."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.helpers.cli import TINY_BENCH, run_cli

PROFILE = 'name = "my25g"\n[inter]\nalpha_us = 12\nbandwidth_GBps = 3.125\n'


def run_block(report: Path, capsys, monkeypatch) -> None:
    """Each line of the report's Reproduce block, as a shell runs it: `cd` changes folder for what
    follows, `&&` runs the next command if the last one succeeded, each lionsim command in-process."""
    block = report.read_text().split("## Reproduce\n\n")[1]
    for line in (line[4:] for line in block.splitlines() if line.startswith("    ")):
        for command in (shlex.split(part) for part in line.split(" && ")):
            if command[0] == "cd":
                monkeypatch.chdir(command[1])
                continue
            assert command[0] == "lionsim", line
            monkeypatch.setattr(sys, "argv", command)  # bench records the process's own command line
            code, _, err = run_cli(command[1:], capsys)
            assert code == 0, f"{line}: {err}"


def folders(tmp_path: Path) -> tuple[Path, Path]:
    """tmp_path/prof holding the profile my25g.toml, and tmp_path/elsewhere, empty."""
    (tmp_path / "prof").mkdir()
    (tmp_path / "prof" / "my25g.toml").write_text(PROFILE)
    (tmp_path / "elsewhere").mkdir()
    return tmp_path / "prof", tmp_path / "elsewhere"


def test_an_estimates_reproduce_block_runs_from_another_folder_and_names_the_profile(tmp_path, capsys, monkeypatch):
    prof, elsewhere = folders(tmp_path)
    monkeypatch.chdir(prof)
    made = ["estimate", "--model", "gpt2-124m", "-n", "4", "--network", "my25g.toml", "--out", "../est"]
    code, _, err = run_cli(made, capsys)
    assert code == 0, err
    before = pd.read_csv(tmp_path / "est" / "estimate.csv")
    monkeypatch.chdir(tmp_path)
    assert run_cli(["report", "est"], capsys)[0] == 0
    monkeypatch.chdir(elsewhere)
    (tmp_path / "est" / "report.md").rename(tmp_path / "report.md")  # made again by the block
    run_block(tmp_path / "report.md", capsys, monkeypatch)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "est" / "estimate.csv"), before)
    report = (tmp_path / "est" / "report.md").read_text()
    assert report == (tmp_path / "report.md").read_text()
    assert not list(elsewhere.iterdir())  # nothing written where the block was started
    assert f"| network | my25g ({prof.resolve() / 'my25g.toml'}: inter 12 us, 3.12 GB/s) |" in report


def test_a_runs_reproduce_block_runs_from_another_folder_and_names_the_profile(tmp_path, capsys, monkeypatch):
    prof, elsewhere = folders(tmp_path)
    monkeypatch.chdir(prof)
    made = [*TINY_BENCH, "-s", "adamw", "--network", "my25g.toml", "--out", "run"]
    monkeypatch.setattr(sys, "argv", ["lionsim", *made])
    code, _, err = run_cli(made, capsys)
    assert code == 0, err
    before = pd.read_csv(prof / "run" / "steps.csv")
    monkeypatch.chdir(tmp_path)
    assert run_cli(["report", "prof/run"], capsys)[0] == 0
    (prof / "run" / "report.md").rename(tmp_path / "report.md")
    monkeypatch.chdir(elsewhere)
    run_block(tmp_path / "report.md", capsys, monkeypatch)
    after = pd.read_csv(prof / "run" / "steps.csv")
    pd.testing.assert_frame_equal(after[["step", "loss"]], before[["step", "loss"]])
    assert not list(elsewhere.iterdir())
    report = (prof / "run" / "report.md").read_text()
    assert f"| network | my25g ({prof.resolve() / 'my25g.toml'}: inter 12 us, 3.12 GB/s) |" in report


@pytest.mark.parametrize("typed, relative", [
    (["estimate", "-m", "gpt2-124m", "--network", "10gbe", "--out", "/r/est"], []),  # a preset, a name
    (["estimate", "-m", "my.py:make", "--network=p/x.toml", "-o/r/est", "--from-run", "b"], ["my.py", "p/x.toml", "b"]),
    (["bench", "-w", "/w/wl.py:make", "--compute-spread", "trace:t.json", "--data", "~/d", "--out=/r"], ["t.json"]),
    (["bench", "-s", "adamw"], ["--out's default"]),  # reports/bench, of the folder it ran in
    (["sweep", "--network", "1gbe,a.toml", "--config", "c.toml", "-or"], ["c.toml", "a.toml", "r"]),
    (["sweep", "merge", "root"], ["root"]),
])
def test_the_paths_a_command_line_typed_relative_to_its_folder(typed, relative):
    from lionsim.option_paths import typed_relative

    assert typed_relative(["lionsim", *typed]) == relative
