"""`lionsim plot DIR`: re-draw every plot of a finished run, sweep, estimate sweep or comm table
from its CSVs alone."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from lionsim.cli import options as o
from lionsim.cli.app import ConfigOption, app, console
from lionsim.cli.output import print_not_drawn


@app.command("plot")
def plot(
    run_dir: Annotated[Path, typer.Argument(
        metavar="DIR", help="A directory written by `lionsim bench`, `sweep`, `estimate --sweep` or `comm` --out.")],
    baseline: Annotated[
        Optional[str],
        typer.Option("--baseline", help="Run to compare against: STRATEGY@TRANSPORT, or a STRATEGY only one run has "
                                        "(default: the first); "
                                        "run directories only."),
    ] = None,
    config: Optional[Path] = ConfigOption,
    plugin: o.Plugin = None,
) -> None:
    """Re-draw the plots of DIR from its CSVs: a run (steps.csv; summary recomputed if absent), a sweep
    (sweep_summary.csv + sweep_steps.csv), an estimate sweep (sweep.csv + crossover.csv) or a comm table (comm.csv)."""
    from lionsim.reports.outdir import plot_kind

    kind = plot_kind(run_dir)  # a folder holding nothing to plot: refused before pandas and matplotlib load
    from lionsim.reports.files import written_together
    from lionsim.reports import load_run, model_check, plot_run, summary_table
    from lionsim.reports.summary import run_summary
    from lionsim.reports.plots import plot_dir
    from lionsim.reports.out_lock import holding

    summary = None
    # a command publishing into DIR would replace the CSVs read here; every plot is redrawn, or (a
    # full disk) none is replaced
    with holding(run_dir, option="DIR"), written_together():
        if kind == "run":
            steps, summary, meta = load_run(run_dir)
            # A new baseline changes every speedup, so the stored summary only serves the run's own;
            # made again, it is made under the run's own rule (its target loss, warm-up steps)
            if summary is None or baseline is not None:
                summary = run_summary(steps, meta, baseline)
            paths = plot_run(run_dir, steps, summary, meta)
        else:
            kind, paths = plot_dir(run_dir, baseline=baseline)
    if summary is not None:
        from lionsim.cli.app import out_console
        from lionsim.cli.output import natural_width

        table = summary_table(summary, meta)
        out_console(natural_width(table)).print(table)  # fitted to 80; wider only where its numbers are
        check, unchecked = model_check(summary, meta)
        if check is not None:
            console.print(check)
        if unchecked:
            console.print(unchecked, markup=False, highlight=False)
    console.print(f"{kind} plots written to {run_dir}:", markup=False, highlight=False)
    for path in paths:
        console.print(f"  {path}", markup=False, highlight=False)
    if kind == "sweep":
        from lionsim.reports.plots.sweep import SUMMARY_NEEDS
        from lionsim.reports.plots.redraw import read_table
        from lionsim.reports.plots.sweep_axes import skipped_plots

        for name, why in skipped_plots(read_table(run_dir / "sweep_summary.csv", SUMMARY_NEEDS)):
            print_not_drawn(console, name, why)
    if kind in ("estimate", "estimate-sweep") and not any(Path(p).name == "to_target.png" for p in paths):
        from lionsim.reports.plots.redraw import read_table
        from lionsim.reports.plots.to_target import NEEDS
        from lionsim.reports.to_target import has_to_target, no_plot_reason

        table = run_dir / ("estimate.csv" if kind == "estimate" else "sweep.csv")
        if has_to_target(read_table(table, ["strategy"])):
            why = no_plot_reason(read_table(table, NEEDS))
            if why:
                print_not_drawn(console, "to_target.png", why)
