"""The table `lionsim estimate --from-run DIR` prints: each strategy's time to target at scale."""

from __future__ import annotations

import math

import pandas as pd
from rich import box
from rich.table import Table

from lionsim.reports.columns import ROUND_STEPS, strategy_text
from lionsim.reports.widths import TABLE_WIDTH, fill, fit, fold_run, natural_width, run_width, table_width
from lionsim.numbers import run_duration, speedup_text
from lionsim.reports.to_target import (SPEEDUP_BAND, UNFIT, band_text, lr_edge_lines, notes, source_text,
                                      speedup_band_text, status, unfit, unfit_words)

RUN_WIDTH = 17
"""Least characters of the run column (the estimate's tables': lionsim.cli.estimate_view)."""


def proxy_size(first) -> str:
    """The caveat's second sentence where DIR's model is FAR_SMALLER or more below the priced one (both
    sizes in parameters), with a leading space; "" otherwise or where DIR did not record its size."""
    from lionsim.estimate.to_target import FAR_SMALLER
    from lionsim.reports.columns import workload_text

    proxy, priced = first.get("to_target_params", math.nan), float(first["params"])
    if not (isinstance(proxy, (int, float)) and proxy > 0 and priced >= FAR_SMALLER * proxy):
        return ""
    model = first.get("model")
    named = model if isinstance(model, str) and model and model != "params" else "model"  # --params: no name
    return (f" Its model is far smaller: {workload_text(first['to_target_workload'])} ({proxy:,.0f} params) against the priced "
            f"{named} ({priced:,.0f} params, {priced / proxy:,.0f}x), and convergence may change with size.")


def fitted_text(first) -> str:
    """How a sweep's ratios were taken across worker counts, as the caption says it: fitted against log N
    over two or more, measured at one only (no fit); a bench run's, nothing (its one N)."""
    if first["to_target_kind"] != "sweep":
        return ". "
    counts = str(first["to_target_workers"]).split()
    if len(counts) == 1:
        return f" (measured at {int(counts[0]):,} workers only; no fit). "
    return " (fitted against log N over its worker counts). "


def to_target_table(frame: pd.DataFrame) -> Table:
    """One row per run: steps to target at scale, the run's time (and band), the speedup (and its band,
    where the terminal is wide enough: else estimate.csv's columns, which the caption names); the notes
    below it (what every row shares once, then each run's own)."""
    width = min(TABLE_WIDTH, table_width())
    table = _table(frame, width, True)
    if natural_width(table) > width:  # its numbers alone too wide: the speedup's band goes to the CSV
        table = _table(frame, width, False)
    return table


def _speedup_bands_said(rows) -> str:
    """The speedup's bands in the caption, where a column of them would not fit the terminal."""
    said = "; ".join(f"{r.strategy}@{r.transport} {speedup_band_text(r)}" for r in rows if speedup_band_text(r) != "-")
    name, rule = SPEEDUP_BAND.split(": ", 1)
    return f"{name} (too wide for a column here): {said}; each {rule.replace('this run', 'the run')}."


def _table(frame: pd.DataFrame, width: int, column: bool) -> Table:
    """to_target_table's table, `width` wide where it fits, with the speedup band's column or not."""
    first = frame.iloc[0]
    rows = list(frame.itertuples(index=False))
    each = [notes(row) for row in rows]
    priced = [parts for row, parts in zip(rows, each) if math.isfinite(row.steps_to_target)]
    common = [part for part in priced[0] if all(part in other for other in priced[1:])] if len(priced) > 1 else []
    said = [f"every run priced: {'; '.join(common)}."] if common else []
    said += [f"{row.strategy}@{row.transport}: {'; '.join(p for p in parts if p not in common)}."
             for row, parts in zip(rows, each) if any(p not in common for p in parts)]
    if words := unfit_words(frame):  # what the mark beside those runs' names says
        said.append(f"{UNFIT} {words}.")
    said += lr_edge_lines(frame)
    whole = "run_s" in frame.columns and frame["run_s"].notna().any()  # --steps / --tokens: its table says it
    if not whole and frame.attrs.get("tokens_line"):
        said.append(frame.attrs["tokens_line"])
    band = any(band_text(r.time_to_target_lo_s, r.time_to_target_s, r.time_to_target_hi_s) != "-" for r in rows)
    speedups = any(speedup_band_text(r) != "-" for r in rows)
    table = Table(
        title=f"time to target at scale: {first['workers']:,} workers on {first['network']}, from {source_text(first)}",
        caption=(f"If convergence at scale behaves as it did there.{proxy_size(first)} steps: "
                 f"{first['to_target_baseline']}'s steps to target at scale "
                 f"({first['to_target_basis']}) x each run's steps to target relative to "
                 f"{first['to_target_baseline']}'s there"
                 + fitted_text(first)
                 + "time: a run of those steps priced with every phase it has. "
                 + ("band: the fits' residual spread. " if band else "")
                 + f"speedup: {first['baseline']}'s time to target / this run's; * that baseline."
                 + ((f" {SPEEDUP_BAND}." if column else f" {_speedup_bands_said(rows)}") if speedups else "")
                 + "".join("\n" + line for line in said)),
        caption_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    over = unfit(frame)
    mark = UNFIT if over else ""
    width = run_width([(strategy_text(r.strategy, getattr(r, ROUND_STEPS, 1), True) + mark, r.transport)
                       for r in rows], RUN_WIDTH)
    table.add_column("run", no_wrap=True, min_width=width, max_width=width)
    for name in ("steps", "time", *(["band"] if band else []), "speedup",
                 *(["speedup band"] if speedups and column else [])):
        table.add_column(name, justify="right", no_wrap=True)
    for row in rows:
        label = f"{row.strategy}@{row.transport}"
        speedup = speedup_text(row.to_target_speedup)
        spread = [band_text(row.time_to_target_lo_s, row.time_to_target_s, row.time_to_target_hi_s)] if band else []
        name = strategy_text(row.strategy, getattr(row, ROUND_STEPS, 1), label == row.baseline)
        table.add_row(fold_run(name + (UNFIT if label in over else ""), row.transport),
                      status(row), run_duration(row.time_to_target_s), *spread, speedup,
                      *([speedup_band_text(row)] if speedups and column else []))
    # at most the width the estimate's other tables take, where its notes wrap too (a speedup's band
    # column makes it wider than that on a wide terminal, where its run names then fold)
    return fill(fit(table, width))
