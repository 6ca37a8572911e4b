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
import shlex
from pathlib import Path

from lionsim.errors import LionsimError
from lionsim.estimate.config import Resolved
from lionsim.estimate.defaults import DEFAULT_STRATEGIES
from lionsim.estimate.from_run import Measured
from lionsim.estimate.table import estimate_rows
from lionsim.numbers import ms_text
from lionsim.option_paths import absolute, launched_by_lionsim
from lionsim.reports.files import META_FILE
from lionsim.reports.md import command_line
from lionsim.runs import parse_runs

PLAIN_BASELINE = DEFAULT_STRATEGIES[0]
"""A plain estimate's baseline (no -s, no --from-run)."""
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
    # the estimate's own point: in a sweep's report the other points differ, so it is named
    return (f": {ms_text(row['step_s'] * 1e3)} ms a step at {r.workers:,} workers on {r.network.name}, so a step's "
            f"speedup against it is {row['step_s'] / step_s:.2f}x the table's there")


def train_command(measured: Measured) -> str:
    """How to train PLAIN_BASELINE beside DIR's runs, into DIR, after them (so DIR's baseline and
    targets stay): a bench cannot add a run to a finished one (--resume continues only an unfinished
    one), so DIR's own configuration (--config DIR/run.json: every option that trains, each path
    absolute) trains every run it recorded again with it; a sweep's own command, with it added to
    its strategies, trains only the new cells. In words where neither can be given."""
    where = absolute(measured.path)
    if measured.kind == "sweep":
        return _sweep_command(measured, where)
    if not measured.strategies:
        return (f"rerun its `lionsim bench` command with -s naming the runs it trained and {PLAIN_BASELINE}, "
                f"--out {where} and --overwrite (every run trained again)")
    line = shlex.join(["lionsim", "bench", "--config", str(Path(where) / META_FILE),
                       "-s", ",".join(measured.strategies), "-s", PLAIN_BASELINE, "--out", where, "--overwrite"])
    return f"`{line}` (every run trained again)"


def _sweep_command(measured: Measured, where: str) -> str:
    """The sweep's recorded command into DIR with PLAIN_BASELINE added to its runs: appended to the
    -s it typed, else after every run it trained (its default set, resolved: no --transport then);
    in words where it cannot be rerun as recorded (none recorded, a shard's, a merge's, -s left to a
    --config file)."""
    argv = list(measured.argv)
    command = argv[1] if len(argv) > 1 and launched_by_lionsim(argv) else None
    sharded = "merge" in argv[2:3] or bool(_given(argv, SHARD))
    typed = bool(_given(argv, STRATEGY))
    if command != "sweep" or sharded or not (typed or (measured.strategies and not _given(argv, CONFIG))):
        return f"rerun its `lionsim sweep` command with -s {PLAIN_BASELINE} added (only the new cells train)"
    runs = ",".join(_short(label) for label in measured.strategies)
    kept = _without(argv, OUT) if typed else [*_without(argv, OUT, TRANSPORT), "-s", runs]
    line = command_line([*kept, "-s", PLAIN_BASELINE, "--out", where], cwd=measured.cwd)
    return f"`{line}` (only the new cells train)"


def _short(label: str) -> str:
    """A run as -s names it without --transport: its strategy alone where it ran on its default."""
    from lionsim.strategies import STRATEGIES

    name, _, transport = label.partition("@")
    known = name in STRATEGIES.names() and STRATEGIES.get(name).default_transport == transport
    return name if known else label


# options of a recorded command line, each by its flags (long, short)
STRATEGY, TRANSPORT, OUT = ("--strategy", "-s"), ("--transport",), ("--out", "-o")
SHARD, CONFIG = ("--shard",), ("--config",)


def _given(argv: list[str], flags: tuple[str, ...]) -> list[int]:
    """Where in argv each of `flags` is given (`--out X`, `--out=X`, `-oX`)."""
    return [i for i, a in enumerate(argv) if a in flags or a.startswith(tuple(f + "=" for f in flags if f[1] == "-"))
            or (a[:2] in flags and a[1] != "-" and len(a) > 2)]


def _without(argv: list[str], *options: tuple[str, ...]) -> list[str]:
    """argv without `options` and their values."""
    flags = tuple(f for option in options for f in option)
    drop = {j for i in _given(argv, flags) for j in ((i, i + 1) if argv[i] in flags else (i,))}
    return [a for i, a in enumerate(argv) if i not in drop]
