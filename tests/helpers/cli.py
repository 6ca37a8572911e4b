"""`lionsim ARGS` run in this process (lionsim.cli.app.main), as a user's shell would run it: no
process to start, so a test of a command's output or its refusal costs what the command costs."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from lionsim.cli.app import main


def run_cli(argv, capsys) -> tuple[int, str, str]:
    """`lionsim ARGV`'s exit code, stdout and stderr (paths and numbers in ARGV given as text)."""
    with pytest.raises(SystemExit) as exit_info:
        main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def exit_code(argv: list[str]) -> int:
    """`lionsim ARGV`'s exit code (its output left to pytest's capture)."""
    with pytest.raises(SystemExit) as done:
        main(argv)
    return done.value.code


def sim_and_gloo_steps(plugin: Path, argv: list[str], tmp_path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """steps.csv of the bench `argv` with the plug-in file `plugin`, on the simulator and over 2 gloo
    ranks (which load the file again)."""
    assert exit_code(["bench", "--plugin", str(plugin), *argv, "--out", str(tmp_path / "sim")]) == 0
    assert exit_code(["bench", "--plugin", str(plugin), *argv, "--backend", "gloo", "--ranks", "2",
                      "--out", str(tmp_path / "gloo")]) == 0
    return tuple(pd.read_csv(tmp_path / d / "steps.csv") for d in ("sim", "gloo"))


TINY_BENCH = ["bench", "-w", "mlp", "--model-size", "tiny", "--steps", "2", "-n", "2", "--eval-every", "1"]
"""The smallest bench of the default workload: 2 workers, 2 steps, evaluated at each."""


def one_line_exit_2(args: list[str], capsys, message: str = "") -> str:
    """Run `lionsim ARGS`, which must refuse with exit 2 and one line on stderr holding `message`."""
    code, out, err = run_cli(args, capsys)
    assert code == 2, (args, out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert message in err, err
    return err


def interrupted_while_printing(argv: list, printer: tuple, out: Path, capsys, monkeypatch,
                               progress: bool = False) -> None:
    """Run `argv --out OUT` with `printer` (module, attribute: what prints after the publish) raising
    KeyboardInterrupt, and assert that stderr is only the line an interruption after the publish
    says, exit 2 (`progress`: a bench's "lionsim: run ..." lines beside it, off a terminal)."""
    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(*printer, interrupt)
    code, _, err = run_cli([*argv, "--out", str(out)], capsys)
    lines = [line for line in err.strip().splitlines() if not (progress and line.startswith("lionsim: "))]
    assert code == 2 and lines == [
        f"error: interrupted after the results were written: {out} holds this command's results"], err


def table_text(table, width: int = 80) -> str:
    """A rich table as a terminal of `width` columns shows it."""
    from rich.console import Console

    console = Console(width=width, record=True, file=io.StringIO())
    console.print(table)
    return console.export_text()


def invoke_at(columns: int, argv: list[str], monkeypatch):
    """typer's runner on `lionsim ARGV` at a terminal COLUMNS wide, as a user sees its output. A
    test that monkeypatched the console's width leaves it pinned when undone (rich's width setter
    stores the value): it is unpinned here, so that COLUMNS decides as in a fresh process."""
    from typer.testing import CliRunner

    from lionsim.cli import app
    from lionsim.cli.app import console

    monkeypatch.setattr(console, "_width", None)
    done = CliRunner().invoke(app, [str(a) for a in argv], env={"COLUMNS": str(columns)})
    assert done.exit_code == 0, done.output
    return done
