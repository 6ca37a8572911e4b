"""Rough edges of issue 19, each with its test: estimate allocates nothing per worker,
`python -m lionsim` works from the parent of a checkout named lionsim, names and messages
(sweep's -w/-n, estimate's --tie help, plot FILE, an unknown option, --params), and the
progress bar before a run's first step."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from lionsim.cli.app import main
from lionsim.cli.progress import step_progress
from lionsim.estimate.probe import probe
from lionsim.runs import parse_runs

REPO = Path(__file__).resolve().parents[1]


def run(args, capsys):
    with pytest.raises(SystemExit) as done:
        main(args)
    out, err = capsys.readouterr()
    return done.value.code, out, err


def rss_bytes() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="needs /proc")
def test_estimate_builds_no_per_worker_state(capsys):
    """10^8 workers of a 148-tensor stand-in once asked for 59 GB (a [W, T] buffer per state)."""
    before = rss_bytes()
    for label in ("dlion-mavo@a2a-1bit", "lioncub-l1", "onebit-adam", "terngrad", "qsgd"):
        probe(parse_runs([label])[0], params=124_439_808, tensors=148, workers=10**8)
    assert rss_bytes() - before < 200 * 2**20
    code, out, err = run(["estimate", "-m", "gpt2-124m", "--workers", "100000000", "-s", "adamw,dlion-mavo@a2a-1bit"],
                         capsys)
    assert code == 0 and "dlion-mavo" in out, err


def test_python_m_lionsim_runs_from_the_parent_of_a_checkout_named_lionsim(tmp_path):
    (tmp_path / "lionsim").symlink_to(REPO, target_is_directory=True)  # a clone named lionsim, with its cli.py
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, str(REPO / "tests" / "editable_like.py"), str(REPO), "networks"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "1gbe" in done.stdout, done.stderr


def test_sweep_takes_benchs_short_names(tmp_path, capsys):
    code, _, err = run(["sweep", "-w", "mlp", "-n", "2", "--model-size", "tiny", "-b", "8", "--steps", "2",
                        "--eval-every", "2", "-s", "adamw", "--out", str(tmp_path / "s")], capsys)
    assert code == 0, err
    assert [p.name for p in (tmp_path / "s" / "cells").iterdir()] == ["mlp-w2-1gbe-s0-adamw@fp32-allreduce"]


def test_estimates_tie_help_names_no_option_it_lacks(capsys):
    import re

    import typer

    from lionsim.cli.app import app

    command = typer.main.get_command(app).commands["estimate"]
    options = {name for p in command.params for name in p.opts}
    tie = next(p for p in command.params if "--tie" in p.opts)
    named = set(re.findall(r"--[a-z][a-z-]*", tie.help))
    assert named <= options, named - options  # it once offered a --seed that estimate lacked
    code, out, _ = run(["estimate", "--help"], capsys)
    assert code == 0 and "--tie" in out


def test_plot_and_report_of_a_file_say_it_is_a_file(tmp_path, capsys):
    path = tmp_path / "steps.csv"
    path.write_text("x\n")
    for command in ("plot", "report"):
        code, _, err = run([command, str(path)], capsys)
        assert code == 2 and err.startswith(f"error: bad DIR {path}: it is a file; accepted: ") and "exist" not in err


def test_an_unknown_option_lists_the_commands_options_and_only_a_near_one(capsys):
    code, _, err = run(["regress", "--lr", "3"], capsys)
    assert code == 2 and err.startswith("error: no such option --lr for `lionsim regress`; accepted: --all, ")
    assert "did you mean" not in err
    code, _, err = run(["bench", "--stepz", "3"], capsys)
    # the near one first, not after the command's 80 options (--help lists them)
    assert code == 2 and err.strip() == ("error: no such option --stepz for `lionsim bench`; did you mean '--steps'? "
                                         "(every option: lionsim bench --help)")


def test_params_message_says_what_is_accepted(capsys):
    code, _, err = run(["estimate", "--params", "-5", "--tokens-per-worker", "1024"], capsys)
    assert code == 2 and err.strip() == ("error: bad --params -5; accepted: a whole number >= 1 and <= 1e15, "
                                         "written in full or like 3e9")
    code, _, err = run(["estimate", "--params", "1e30", "--tokens-per-worker", "1024"], capsys)
    assert code == 2 and err.strip().startswith("error: bad --params 1e+30; accepted: a whole number >= 1 and <= 1e15")
    assert run(["estimate", "--params", "3e9", "--tokens-per-worker", "1024"], capsys)[0] == 0


def test_a_progress_bar_shows_no_loss_before_a_step():
    console = Console(file=io.StringIO(), force_terminal=True, record=True, width=120)
    with step_progress(console, ["adamw@fp32-allreduce", "lion@fp32-allreduce"], 10) as update:
        update("adamw@fp32-allreduce", 1, 2.5)
    text = console.export_text()
    assert "nan" not in text.lower()
