"""Run outputs: the steps table's columns, the per-run summary, CSV/JSON files, plots, tables.

The library half of `lionsim bench` and `lionsim plot`: it returns DataFrames, writes files
and builds rich tables, but never prints.
"""

from lionsim.reports.columns import STEP_COLUMNS, SUMMARY_REQUIRED, run_label
from lionsim.reports.files import load_run, write_run
from lionsim.reports.plots import plot_run
from lionsim.reports.summary import summarize
from lionsim.reports.tables import model_check_table, summary_table

__all__ = [
    "STEP_COLUMNS",
    "SUMMARY_REQUIRED",
    "load_run",
    "plot_run",
    "run_label",
    "summarize",
    "model_check_table",
    "summary_table",
    "write_run",
]
