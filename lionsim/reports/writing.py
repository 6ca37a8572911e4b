"""Writing a bench's result: CSVs and run.json (and the plots) staged, then published whole."""

from __future__ import annotations

from pathlib import Path

from lionsim.reports.files import write_atomic, write_run

CALLS_FILE = "calls.csv"
from lionsim.reports.plots import plot_run
from lionsim.reports.publish import RunDir


def stage_result(target: RunDir, result, plots: bool = True) -> list[Path]:
    """Write (or rewrite) the result's files into the staging directory; return their staged paths."""

    def write(stage: Path) -> list[Path]:
        paths = write_run(stage, result.steps, result.summary, result.meta)
        if getattr(result, "calls", None) is not None:  # real backends: every collective measured
            paths.append(write_atomic(stage / CALLS_FILE, lambda f: result.calls.to_csv(f, index=False)))
        for name, text in getattr(result, "files", {}).items():  # e.g. a calibrated run's profile
            paths.append(write_atomic(stage / name, lambda f, text=text: f.write(text)))
        return paths + (plot_run(stage, result.steps, result.summary) if plots and len(result.steps) else [])

    return target.write(write)


def publish_result(target: RunDir, result, plots: bool = True) -> list[Path]:
    """Stage every file of the result, then move them into --out together."""
    stage_result(target, result, plots)
    return target.publish()
