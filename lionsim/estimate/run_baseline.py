"""The step table's line on its baseline where `estimate --from-run DIR` priced DIR's runs for want of -s.

A plain estimate's baseline is AdamW's bf16 all-reduce (DEFAULT_STRATEGIES' first: what large-model
trainers run). Without -s, --from-run prices the runs DIR trained over the transports they were
trained on, its baseline first (lionsim.estimate.config.default_strategies), and bench trains adamw
over fp32: an all-reduce of twice the bytes, so on a comm-bound step every speedup reads about twice
a plain estimate's. The line names the baseline priced and why, prices the plain one's step for
scale, and says how to get a figure against it: a bf16 all-reduce rounds what it sums, so it borrows
no other run's convergence (lionsim.estimate.to_target) and needs a trained run of its own.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from lionsim.errors import LionsimError
from lionsim.estimate.config import Resolved
from lionsim.estimate.defaults import DEFAULT_STRATEGIES
from lionsim.estimate.from_run import Measured
from lionsim.estimate.table import estimate_rows
from lionsim.numbers import ms_text
from lionsim.reports.md import command_line
from lionsim.runs import parse_runs

PLAIN_BASELINE = DEFAULT_STRATEGIES[0]
"""A plain estimate's baseline (no -s, no --from-run)."""
LAUNCHERS = ("lionsim", "__main__.py")
"""argv[0] of a recorded lionsim command (the script, or `python -m lionsim`): argv[1] is its command."""


def run_baseline_note(r: Resolved, measured: Measured, baseline: str, step_s: float) -> str:
    """The caption's line where the estimate's `baseline` (its row's step `step_s`), taken from DIR
    for want of -s, is not a plain estimate's; "" where it is."""
    if baseline == PLAIN_BASELINE:
        return ""
    head = (f"Baseline: {baseline}, the baseline {measured.path} trained (without -s, --from-run prices its runs "
            f"over the transports they were trained on), not a plain estimate's {PLAIN_BASELINE} (AdamW's bf16 "
            f"gradients all-reduced, as large-model trainers run it{_priced(r, step_s)}).")
    then = f"--baseline {PLAIN_BASELINE} to this estimate"
    if PLAIN_BASELINE in measured.labels:
        return f"{head} {measured.path} trained {PLAIN_BASELINE} too: add {then} for that baseline."
    return (f"{head} For that baseline, train {PLAIN_BASELINE} beside its runs: {train_command(measured)}; "
            f"then add {then}.")


def _priced(r: Resolved, step_s: float) -> str:
    """The plain baseline's step on this cluster and what it makes of the step speedups, "" where it
    cannot be priced here."""
    try:
        runs = parse_runs([PLAIN_BASELINE])
        (row,) = estimate_rows(dataclasses.replace(r, runs=runs, baseline=None, convergence=None, run_steps=None,
                                                   run_tokens=None), r.workers, r.network)
    except LionsimError:
        return ""
    return (f": {ms_text(row['step_s'] * 1e3)} ms a step here, so a step's speedup against it is "
            f"{row['step_s'] / step_s:.2f}x the table's")


def train_command(measured: Measured) -> str:
    """The command that trains PLAIN_BASELINE beside DIR's runs: DIR's own, recorded, with it added
    (after the others, so DIR's baseline and targets stay); in words where none was recorded, or the
    record is a shard's or a merge's."""
    argv = list(measured.argv)
    command = argv[1] if len(argv) > 1 and Path(argv[0]).name in LAUNCHERS else None
    sharded = "merge" in argv[2:3] or any(a == "--shard" or a.startswith("--shard=") for a in argv)
    if measured.kind == "sweep":
        if command != "sweep" or sharded:
            return f"rerun its `lionsim sweep` command with -s {PLAIN_BASELINE} added (only the new cells train)"
        return f"`{command_line([*argv, '-s', PLAIN_BASELINE])}` (only the new cells train)"
    if command != "bench":
        return f"rerun its `lionsim bench` command with -s {PLAIN_BASELINE} --overwrite added"
    return f"`{command_line([*argv, '-s', PLAIN_BASELINE, '--overwrite'])}` (every run trained again)"
