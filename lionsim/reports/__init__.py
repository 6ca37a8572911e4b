"""Run outputs: the steps table's columns, the per-run summary, CSV/JSON files, plots, tables.

The library half of `lionsim bench` and `lionsim plot`: it returns DataFrames, writes files
and builds rich tables, but never prints.
"""

from lionsim._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    ".columns": "STEP_COLUMNS SUMMARY_REQUIRED run_label",
    ".files": "load_run write_run",
    ".plots": "plot_run",
    ".summary": "SummaryRule summarize",
    ".tables": "model_check model_check_table summary_table",
})
