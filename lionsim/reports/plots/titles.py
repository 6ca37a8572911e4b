"""What a run's plots say about themselves: the subtitle naming the run's setting, and the
bytes plot's ratios to the baseline."""

from __future__ import annotations

import pandas as pd

from lionsim.reports.columns import off_sim, workload_text
from lionsim.reports.run_steps import steps_text, stopped
from lionsim.reports.summary import split_runs
from lionsim.reports.titles import named_network


def subtitle(steps: pd.DataFrame, meta: dict | None) -> str:
    """What the run is: workload, N, the network (on gloo/nccl the link the collectives were
    measured on), and from run.json the data split, the momentum sync and, where it stopped
    before its steps, the steps it ran (run_steps)."""
    cfg = (meta or {}).get("config", {})
    network = ", ".join(str(v) for v in dict.fromkeys(steps["network"])) if "network" in steps else "?"
    network = named_network(network, meta, off_sim(steps))
    parts = [", ".join(workload_text(v) for v in dict.fromkeys(steps["workload"])) if "workload" in steps else "?",
             f"{', '.join(str(v) for v in dict.fromkeys(steps['workers']))} workers", network]
    if cfg.get("data_split"):
        parts.append(f"data {cfg['data_split']}")
    if cfg.get("momentum_sync"):
        parts.append(f"momentum sync {cfg['momentum_sync']}")
    if cfg.get("tie", "zero") != "zero":  # a vote's tie rule changes its bytes down: said where not the default
        parts.append(f"tie {cfg['tie']}")
    if stopped(meta) is not None and "step" in steps:  # its curves end early: say where and why
        parts.append(steps_text([len(rows) for _, rows in split_runs(steps)], meta))
    return " · ".join(parts)


def ratio_text(value: float, base: float) -> str:
    """This run's bytes against the baseline's, in words a reader can check against the bars."""
    if base <= 0 or value <= 0:
        return "" if value > 0 or base <= 0 else "(sends nothing)"
    ratio = value / base
    if abs(ratio - 1) < 5e-3:
        return "(= baseline)"
    return f"({ratio:.3g}x baseline)" if ratio > 1 else f"(1/{1 / ratio:.3g} of baseline)"
