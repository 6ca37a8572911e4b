"""lionsim's plots, each written as PNG and SVG with the same stem.

    style      the run palette and line styles, units, figure/legend helpers, save (PNG + SVG)
    run        plot_run: a bench run's loss, eval accuracy, bytes (and breakdown: time per part)
    sweep      plot_sweep: a `lionsim sweep` root's speedups, crossovers, seeds' spread, accuracy
    comm       plot_comm: a comm.csv, nccl-tests style, model and measurement on one plot
    estimate   plot_estimate_sweep: `lionsim estimate --sweep`'s step time and speedup, crossovers
    redraw     plot_dir: which kind of directory, and every plot of it redrawn from its CSVs
"""

from lionsim.reports.plots.comm import plot_comm
from lionsim.reports.plots.estimate import plot_estimate_sweep
from lionsim.reports.plots.redraw import detect_kind, plot_dir
from lionsim.reports.plots.run import plot_run
from lionsim.reports.plots.style import DPI, FIGSIZE, PALETTE, run_colours, run_styles, save, time_unit
from lionsim.reports.plots.sweep import plot_sweep

__all__ = ["DPI", "FIGSIZE", "PALETTE", "detect_kind", "plot_comm", "plot_dir", "plot_estimate_sweep", "plot_run",
           "plot_sweep",
           "run_colours", "run_styles", "save", "time_unit"]
