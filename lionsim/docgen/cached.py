"""A docs block's cached real run: a bench trained once by `python -m lionsim.docgen --refresh
CACHE`, its files (steps.csv, summary.csv, run.json) kept in reports/readme/CACHE/ with the CPU,
torch, date and wall time it ran with (provenance.json), and the check that this code still
models what the cache holds (the modelled columns of its first steps, rerun now)."""

from __future__ import annotations

import datetime
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from lionsim.docgen.blocks import cache_dir
from lionsim.errors import LionsimError

PROVENANCE = "provenance.json"
MODELLED = ["compute_s", "encode_s", "comm_s", "comm_exposed_s", "decode_s", "update_s", "step_s", "sim_time_s",
            "wire_bytes", "bits_per_param_up", "bits_per_param_down"]
"""Columns that are a function of the configuration alone (modelled for the device)."""


@dataclass(frozen=True, slots=True)
class CachedRun:
    """What a cache holds."""

    steps: pd.DataFrame
    """steps.csv: every run's steps."""
    meta: dict
    """run.json: the configuration (and so the summary rule) the run was trained with."""
    facts: dict
    """provenance.json: cpu, cpu_capability, torch, date, wall_s."""


def machine_facts(wall_s: float) -> dict:
    """The CPU, torch and date a cached run was trained with today, and its wall time."""
    from lionsim.regress.fingerprint import fingerprint

    fp = fingerprint()
    return {"cpu": fp["cpu"], "cpu_flags": fp["cpu_flags"], "cpu_capability": fp["cpu_capability"],
            "torch": fp["torch"], "date": datetime.date.today().isoformat(), "wall_s": round(wall_s)}


def cache_run(cache: str, run: Callable[[], Any]) -> Path:
    """Train for real (`run`: a bench's result, with steps, summary and meta) and keep it in the
    cache with the machine's facts; the cache's folder."""
    from lionsim.reports import write_run

    started = time.time()
    result = run()
    where = cache_dir(cache)
    write_run(where, result.steps, result.summary, result.meta)
    facts = machine_facts(time.time() - started)
    (where / PROVENANCE).write_text(json.dumps(facts, indent=1) + "\n", encoding="utf-8")
    return where


def load_cached(cache: str) -> CachedRun:
    """The cache's run; an error naming the command that makes it where there is none."""
    from lionsim.reports import load_run

    where = cache_dir(cache)
    if not (where / PROVENANCE).is_file():
        raise LionsimError(f"no cached run in {where}: `python -m lionsim.docgen --refresh {cache}` makes it")
    steps, _, meta = load_run(where)
    return CachedRun(steps, meta or {}, json.loads((where / PROVENANCE).read_text(encoding="utf-8")))


def other_platform(cache: str) -> str:
    """How this machine differs from the one the cache was trained on (CPU, the kernels torch
    dispatches to, torch), or "" where it does not. On another platform the first steps' data-dependent
    modelled columns may differ from the cache's although the code is the same: a gradient entry
    that rounds to exactly 0 on one CPU and not on another makes a worker abstain there, and a 1-bit
    vote then carries its voted bitmap too (2 bits a parameter: lionsim.transports.abstain). A VM may
    call every generation "AMD EPYC": the CPU's flags tell them apart, where the cache recorded them
    (machine_facts does since 2026-11-29; an older cache compares the rest). A cache without the CPU
    or torch it ran on is an error, not a skip: it could never be checked."""
    from lionsim.regress.fingerprint import fingerprint

    facts, now = load_cached(cache).facts, fingerprint()
    missing = [key for key in ("cpu", "cpu_capability", "torch") if key not in facts]
    if missing:
        raise LionsimError(f"the cache {cache} records no {', '.join(missing)}: `python -m lionsim.docgen "
                           f"--refresh {cache}` trains it again with them")
    keys = ("cpu", *(("cpu_flags",) if "cpu_flags" in facts else ()), "cpu_capability", "torch")
    return "; ".join(f"{key} {facts[key]} -> {now[key]}" for key in keys if facts[key] != now[key])


def first_steps_differ(cache: str, plan_now: Any, rerun: Callable[[], pd.DataFrame]) -> list[str]:
    """The runs whose modelled columns differ between the cache and `rerun` (the cached
    configuration's first steps trained now), or the configuration's differences from `plan_now`
    (the plan the page's command makes now, compared as --resume compares them); empty: the cache
    still describes this code."""
    from lionsim.reports.columns import run_label
    from lionsim.training.record import resolved_config
    from lionsim.training.resume import config_differences

    cached = load_cached(cache)
    differ = config_differences(cached.meta["config"], resolved_config(plan_now))
    if differ:
        return [f"configuration: {d}" for d in differ]
    fresh = rerun()
    steps = int(fresh["step"].max())
    differ = []
    for (strategy, transport), rows in fresh.groupby(["strategy", "transport"], sort=False):
        old = cached.steps[(cached.steps.strategy == strategy) & (cached.steps.transport == transport)
                           & (cached.steps.step <= steps)]
        if not old[MODELLED].reset_index(drop=True).equals(rows[MODELLED].reset_index(drop=True)):
            differ.append(run_label(strategy, transport))
    return differ
