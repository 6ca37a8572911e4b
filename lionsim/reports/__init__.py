"""Run outputs: the steps table's columns, the per-run summary, CSV/JSON files, plots, tables.

The library half of `lionsim bench` and `lionsim plot`: it returns DataFrames, writes files
and builds rich tables, but never prints.
"""

from lionsim._lazy import lazy_attributes

_NAMES = {
    'STEP_COLUMNS': '.columns',
    'SUMMARY_REQUIRED': '.columns',
    'run_label': '.columns',
    'load_run': '.files',
    'write_run': '.files',
    'plot_run': '.plots',
    'summarize': '.summary',
    'SummaryRule': '.summary',
    'model_check_table': '.tables',
    'summary_table': '.tables',
}
__getattr__, __dir__ = lazy_attributes(__name__, _NAMES)

__all__ = [
    "STEP_COLUMNS",
    "SUMMARY_REQUIRED",
    "load_run",
    "plot_run",
    "run_label",
    "summarize",
    "SummaryRule",
    "model_check_table",
    "summary_table",
    "write_run",
]
