"""`lionsim plot DIR`: re-draw the plots of a finished run from its CSVs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from lionsim.cli.app import ConfigOption, app, console
from lionsim.reports import load_run, model_check_table, plot_run, summarize, summary_table


@app.command("plot")
def plot(
    run_dir: Annotated[Path, typer.Argument(metavar="DIR", help="A run directory written by `lionsim bench --out`.")],
    baseline: Annotated[
        Optional[str],
        typer.Option("--baseline", help="Run to compare against: STRATEGY or STRATEGY@TRANSPORT (default: the first)."),
    ] = None,
    config: Optional[Path] = ConfigOption,
) -> None:
    """Re-draw the plots of a finished run from DIR/steps.csv (summary recomputed if absent)."""
    steps, summary, _meta = load_run(run_dir)
    # A new baseline changes every speedup, so the stored summary only serves the default.
    if summary is None or baseline is not None:
        summary = summarize(steps, baseline=baseline)
    paths = plot_run(run_dir, steps, summary)
    console.print(summary_table(summary))
    check = model_check_table(summary)
    if check is not None:
        console.print(check)
    console.print(f"plots written to {run_dir}:", markup=False, highlight=False)
    for path in paths:
        console.print(f"  {path}", markup=False, highlight=False)
