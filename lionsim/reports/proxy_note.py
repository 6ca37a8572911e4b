"""Whose steps a bench's or sweep's time to target is, where it is ranked on a modelled network:
its own (proxy) model's, priced on that network, never a large model's on that cluster, for which
`lionsim estimate --from-run DIR -m MODEL` prices the model and carries the run's convergence over.
"""

from __future__ import annotations

import math

import pandas as pd

from lionsim.reports.columns import workload_text


def proxy_note(summary: pd.DataFrame, directory: str = "DIR", code: bool = False) -> str:
    """One sentence under a time-to-target ranking of `summary`'s runs priced on a modelled network
    (backend sim): whose steps the times are, and the command that prices a real model there with
    `directory`'s convergence (`code`: the command in backticks, as report.md writes commands).
    "" where every run was measured on a real backend: its network is no model's."""
    if "backend" in summary.columns and (summary["backend"].fillna("sim") != "sim").all():
        return ""
    sized = "params" in summary.columns
    models = "; ".join(dict.fromkeys(
        workload_text(w) + (f", {p:,.0f} params" if sized and isinstance(p, (int, float)) and math.isfinite(p) else "")
        for w, p in zip(summary["workload"], summary["params"] if sized else [math.nan] * len(summary))))
    networks = ", ".join(dict.fromkeys(map(str, summary["network"])))
    command = f"lionsim estimate --from-run {directory} -m MODEL"
    return (f"These times are the steps of this run's own model ({models}) priced on {networks}, not a real "
            f"model's on that network: for one, run {f'`{command}`' if code else command}.")
