"""Which sweep plots are drawn: a speedup plot needs two or more values on its x axis.

With one network (or one worker count) in a sweep, every line of the speedup-vs-bandwidth (or
-workers) plots would be a single point, which says nothing the summary table does not: those
plots are skipped, and the commands that draw them say which and why. With one run, every speedup
plot is (its baseline is itself, as the table's missing speedup column says).
"""

from __future__ import annotations

import re

import pandas as pd

AXES = {"bandwidth_GBps": ("speedup_vs_bandwidth", "time_to_target_speedup_vs_bandwidth", "network", "bandwidths"),
        "workers": ("speedup_vs_workers", "time_to_target_speedup_vs_workers", "worker count", "worker counts")}
"""A speedup plot's x axis: its two plots, and what one value of it is called."""


def stem(name: str, workload: str, several: bool) -> str:
    """A plot's file stem, suffixed with the workload when a sweep has several."""
    return f"{name}_{re.sub(r'[^A-Za-z0-9._-]', '_', workload)}" if several else name


def skipped_plots(sweep_summary: pd.DataFrame) -> list[tuple[str, str]]:
    """(plot name, why) for every speedup plot a sweep does not draw."""
    skipped = []
    workloads = list(dict.fromkeys(sweep_summary["workload"]))
    for workload in workloads:
        rows = sweep_summary[sweep_summary["workload"] == workload]
        if "run" in rows.columns and rows["run"].nunique() < 2:  # its baseline is itself: 1.00x says nothing
            why = f"one run ({rows['run'].iloc[0]}) in the sweep: a speedup needs a run to compare it with"
            skipped += [(stem(name, workload, len(workloads) > 1), why) for names in AXES.values() for name in names[:2]]
            continue
        for col, (step_plot, target_plot, one, many) in AXES.items():
            values = list(dict.fromkeys(rows["network" if col == "bandwidth_GBps" else col]))
            if len(values) < 2:
                why = f"one {one} ({values[0] if values else '-'}) in the sweep: a line needs at least two {many}"
                skipped += [(stem(name, workload, len(workloads) > 1), why) for name in (step_plot, target_plot)]
    return skipped
