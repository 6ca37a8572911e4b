"""Writing a bench's result: CSVs and run.json (and the plots) staged, then published whole.

Training results are not thrown away because --out cannot take them: when writing or
publishing fails (a full disk, a file system gone read-only), the CSVs and run.json are
written into a fresh temporary directory instead and the one error line names it.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from lionsim.errors import LionsimError
from lionsim.reports.files import CALLS_FILE, WriteError, write_atomic, write_failed, write_run
from lionsim.reports.formats import write_csv
from lionsim.reports.plots import plot_run
from lionsim.reports.publish import RunDir


def stage_result(target: RunDir, result, plots: bool = True) -> list[Path]:
    """Write (or rewrite) the result's files into the staging directory; return their staged paths."""

    def write(stage: Path) -> list[Path]:
        paths = write_run(stage, result.steps, result.summary, result.meta)
        if getattr(result, "calls", None) is not None:  # real backends: every collective measured
            paths.append(write_atomic(stage / CALLS_FILE, lambda f: write_csv(f, result.calls)))
        for name, text in getattr(result, "files", {}).items():  # e.g. a calibrated run's profile
            paths.append(write_atomic(stage / name, lambda f, text=text: f.write(text)))
        return paths + (plot_run(stage, result.steps, result.summary, result.meta) if plots and len(result.steps) else [])

    return target.write(write)


def publish_result(target: RunDir, result, plots: bool = True, into: Path | None = None) -> list[Path]:
    """Stage every file of the result, then move them into --out together (or `into`: RunDir.publish);
    on a write failure, keep the CSVs in a temporary directory and say where (one LionsimError line)."""
    try:
        stage_result(target, result, plots)
        return target.publish(into)
    except WriteError as e:
        kept = rescue(result)
        raise write_failed(target.out, e.cause, kept=_kept(kept)) from None
    except LionsimError as e:  # publishing failed: the staged files are where the line says
        if target.stage.is_dir():
            raise
        kept = rescue(result)
        raise LionsimError(f"{e}; {_kept(kept)}") from None


def rescue(result) -> Path | None:
    """steps.csv, summary.csv and run.json in a new temporary directory; None if even that fails."""
    try:
        where = Path(tempfile.mkdtemp(prefix="lionsim-results-"))
    except OSError:
        return None
    try:
        write_run(where, result.steps, result.summary, result.meta)
    except (OSError, LionsimError):
        shutil.rmtree(where, ignore_errors=True)
        return None
    return where


def _kept(where: Path | None) -> str:
    if where is None:
        return "the results could not be kept anywhere (the temporary directory failed too)"
    return f"the results are kept in {where} (steps.csv, summary.csv, run.json; `lionsim plot {where}` draws them)"
