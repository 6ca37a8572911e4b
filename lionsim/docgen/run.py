"""Run a `lionsim` command for a docs block as a user would, 80 columns off a terminal, but in
this process (typer's runner): the blocks share one import of lionsim instead of paying 2-4 s of
imports a command, so `python -m lionsim.docgen --check` takes seconds."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd

from lionsim.errors import LionsimError


def printed(args: list[str], cwd: Path | None = None) -> list[str]:
    """The lines `lionsim ARGS` prints (stdout), trailing blanks trimmed; `cwd`: run from there
    (relative paths in ARGS are the page's, from the repository root)."""
    import os

    from typer.testing import CliRunner

    from lionsim.cli import app

    here = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        done = CliRunner().invoke(app, args, env={"COLUMNS": "80"})
    finally:
        os.chdir(here)
    if done.exit_code != 0:
        detail = done.stderr.strip() if done.stderr_bytes else repr(done.exception)
        raise LionsimError(f"lionsim {' '.join(args)} failed: {detail}")
    return [line.rstrip() for line in done.stdout.splitlines()]


def estimate_frame(args: list[str], cwd: Path | None = None, csv: str = "estimate.csv") -> tuple[list[str], pd.DataFrame]:
    """(what `lionsim estimate ARGS` prints, the `csv` it writes with --out: estimate.csv, or
    sweep.csv of a --sweep, every point's rows)."""
    from unittest import mock

    from matplotlib.figure import Figure

    # A block shows tables, never the plots --out draws: they are made but not rendered (rendering was
    # half of `docgen --check`), so each plot file is left empty in the temporary folder.
    with tempfile.TemporaryDirectory() as tmp, mock.patch.object(Figure, "savefig", lambda *a, **k: None):
        lines = printed(["estimate", *args, "--out", str(Path(tmp) / "out")], cwd=cwd)
        frame = pd.read_csv(Path(tmp) / "out" / csv, keep_default_na=False, na_values=[""])
    return [line for line in lines if not line.startswith("wrote ")], frame


def section(lines: list[str], title: str) -> list[str]:
    """The rows of the table printed under `title` (a line starting with it): from its header to the
    first blank line, the rules dropped."""
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(title))
    head = next(i for i in range(start + 1, len(lines)) if lines[i].strip())
    end = next((i for i in range(head + 1, len(lines)) if not lines[i].strip()), len(lines))
    return [line for line in lines[head:end] if not set(line.strip()) <= {"─", "━"}]


class _Planned(Exception):
    """Raised in place of training: the bench command has planned its runs."""


def bench_plan(args: list[str]):
    """The plan `lionsim bench ARGS` makes (every check and default the command applies), without
    running it: the command is invoked in this process and stopped where it would train."""
    from unittest import mock

    from typer.testing import CliRunner

    from lionsim.cli import app

    planned = []

    def capture(plan, *rest):
        planned.append(plan)
        raise _Planned

    with tempfile.TemporaryDirectory() as tmp, mock.patch("lionsim.cli.bench_run.run_here", capture):
        done = CliRunner().invoke(app, ["bench", *args, "--out", str(Path(tmp) / "out")], env={"COLUMNS": "80"})
    if not planned:
        detail = done.stderr.strip() if done.stderr_bytes else repr(done.exception)
        raise LionsimError(f"lionsim bench {' '.join(args)} failed: {detail}")
    return planned[0]


def bench_summary(args: list[str]) -> pd.DataFrame:
    """summary.csv of `lionsim bench ARGS` on the simulator, trained in this process without the
    plots the command draws (seconds for a tiny workload), indexed by run."""
    from lionsim.bench import run_plan

    summary = run_plan(bench_plan(args)).summary
    return summary.set_index("run")
