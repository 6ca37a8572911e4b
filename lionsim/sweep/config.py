"""A sweep's configuration: the grid, the bench options every cell shares, and how to run it."""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import torch

import lionsim
from lionsim.bench import BenchConfig
from lionsim.errors import LionsimError
from lionsim.sweep.cells import Cell, Unit, grid_cells, grid_units
from lionsim.sweep.execute import canonical_executor
from lionsim.sweep.grid import Grid, check_grows
from lionsim.sweep.shards import Shard
from lionsim.training.memory import check_model_fits
from lionsim.workloads import check_workload
from lionsim.strategies.given import options_for

GRID_FIELDS = ("workload", "workers", "network", "seed", "strategies")
"""BenchConfig fields the grid sets per cell; every other field is the same for every cell."""
RESUME_FREE = ("threads", "timeout")
"""Bench options a resumed sweep may change: they set how fast a cell runs, not what it computes
(as may --jobs, --executor and --shard, which are not bench options)."""


@dataclass(kw_only=True, slots=True)
class SweepConfig:
    """A grid of bench runs under one output root."""

    grid: Grid
    """The axes; a cell is one value of each."""
    bench: BenchConfig
    """Every other bench option, applied to every cell (its grid fields are ignored)."""
    jobs: int | None = None
    """Training units run at once, each in its own process with `bench.threads` torch threads
    (None: 1 on the local executor; on Ray, as many as the cluster's CPUs take)."""
    out: Path = Path("reports/sweep")
    """The sweep root: sweep.json, cells/, sweep_steps.csv, sweep_summary.csv."""
    executor: str = "local"
    """Where units train: local (this machine) or ray (lionsim.sweep.execute)."""
    ray_address: str | None = None
    """--executor ray: the cluster's head, HOST:PORT (None: RAY_ADDRESS, else a Ray started here)."""
    shard: Shard | None = None
    """Run only this shard's units, into out/parts/shard-I-of-N (lionsim.sweep.shards)."""

    def validate(self) -> None:
        """Every check bench makes, over all of the grid's runs, before anything is written."""
        if self.jobs is not None and self.jobs < 1:
            raise LionsimError(f"bad --jobs {self.jobs}; accepted: an integer >= 1")
        self.executor = canonical_executor(self.executor)
        if self.ray_address is not None and self.executor != "ray":
            raise LionsimError(f"--ray-address {self.ray_address} needs --executor ray (the executor is {self.executor})")
        if self.bench.backend != "sim":
            raise LionsimError(f"lionsim sweep runs on the sim backend only, not {self.bench.backend}; "
                               "use `lionsim bench --backend gloo|nccl` for real collectives")
        whole = dataclasses.replace(self.bench, strategies=[r.label for r in self.grid.runs], transport=None)
        for workers in self.grid.workers:  # and --compute-spread against every N (slow workers, a trace's)
            dataclasses.replace(whole, workers=workers).validate()  # hyperparameters, baseline, tie, ... every run
        for workload in self.grid.workloads:
            biggest = dataclasses.replace(whole, workload=workload, workers=max(self.grid.workers))
            check_model_fits(biggest.workload_config())  # a user's model, counted on meta, before it is built
            check_workload(dataclasses.replace(whole, workload=workload).workload_config())  # size, split, a plugin's pieces
        if self.bench.data is not None and not Path(self.bench.data).exists():
            raise LionsimError(f"bad --data {self.bench.data}: not found")
        grid_cells(self.grid)  # cell ids unique

    def check_memory(self) -> None:
        """The memory guard on the grid's hungriest unit (per workload, the most workers), --jobs of
        them at once, before anything is written (lionsim.training.memory)."""
        from lionsim.training.memory import check_memory

        if self.executor == "ray" and (self.ray_address or os.environ.get("RAY_ADDRESS")):
            return  # the cluster's nodes train, not this machine (Ray's memory monitor guards them)
        default = (os.cpu_count() or 1) if self.executor == "ray" else 1  # a Ray started here uses every core
        at_once = min(self.jobs or default, max(1, len(self.units)))
        for workload in self.grid.workloads:
            biggest = dataclasses.replace(self.bench, workload=workload, workers=max(self.grid.workers))
            check_memory(biggest.workload_config(), processes=at_once,
                         what=f"the sweep's largest cell ({workload}, {biggest.workers} workers)")

    @property
    def cells(self) -> list[Cell]:
        return grid_cells(self.grid)

    @property
    def units(self) -> list[Unit]:
        """The units this process trains: the grid's, or its shard's."""
        units = grid_units(self.grid)
        if self.shard is None:
            return units
        mine = self.shard.select([(u.key, u.cost) for u in units])
        return [u for u in units if u.key in mine]

    @property
    def root(self) -> Path:
        """Where this process writes: the sweep root, or its shard's part under it."""
        return self.out if self.shard is None else self.shard.root(self.out)

    def unit_config(self, unit: Unit, network: str) -> BenchConfig:
        """The bench of one unit alone: its one run, with the options that fit that run.

        Options that bench applies only to the runs they fit (and rejects when no run fits) are
        reset for a run they do not fit: a cell is a bench of its one run, replayable as such.
        Speedups against the baseline are the sweep's (per group), so a cell's own has none."""
        run, cfg = unit.run, self.bench
        mavo = run.strategy == "dlion-mavo"
        syncs = run.strategy_class.has_momentum_sync
        return dataclasses.replace(
            cfg, workload=unit.workload, workers=unit.workers, seed=unit.seed, network=network,
            strategies=[run.label], transport=None, baseline=None,
            hyper={k: v for k, v in cfg.hyper.items() if k in (run.label, run.strategy)},
            tie=cfg.tie if mavo else "zero", momentum_sync=cfg.momentum_sync if syncs else "never",
            sync_tensors=cfg.sync_tensors if syncs else "all", options=options_for(cfg.options, run.strategy))

    def bench_options(self) -> dict:
        """Every bench option outside the grid, as JSON values (sweep.json's "bench")."""
        options = {k: v for k, v in self.bench.to_dict().items() if k not in GRID_FIELDS}
        return json.loads(json.dumps(options))

    def record(self, previous: dict | None) -> dict:
        """sweep.json: the grid, the bench options, argv, first start, versions, cell count."""
        from lionsim.training.record import git_commit

        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        return {"kind": "sweep", "grid": self.grid.to_dict(), "bench": self.bench_options(), "jobs": self.jobs,
                "executor": self.executor, "shard": None if self.shard is None else str(self.shard), "argv": sys.argv, "started": (previous or {}).get("started", now),
                "versions": {"python": sys.version.split()[0], "torch": torch.__version__,
                             "lionsim": lionsim.__version__, "git_commit": git_commit()},
                "cells": len(self.cells)}  # the grid's (a shard trains its share of them)

    def check_resume(self, previous: dict, where: Path) -> None:
        """Resuming is safe when every finished cell is one this command would compute: the
        same bench options (but --threads) and a grid that only grows. Anything else fails
        naming the first option that differs, before anything is written."""
        if previous.get("kind") != "sweep" or not isinstance(previous.get("bench"), dict):
            raise LionsimError(f"{where} is not a sweep record; use a new --out")
        now = self.bench_options()
        defaults = json.loads(json.dumps(BenchConfig().to_dict()))
        for key in sorted(set(now) | set(previous["bench"])):
            if key not in previous["bench"] and now.get(key) == defaults.get(key):
                continue  # an option added since that sweep began, at its default: the same cells
            if key not in RESUME_FREE and previous["bench"].get(key) != now.get(key):
                raise LionsimError(f"--{key.replace('_', '-')} differs from the sweep in {where} "
                                   f"({_shown(previous['bench'].get(key))} there, {_shown(now.get(key))} now); rerun with the "
                                   "same options to resume, or use a new --out")
        check_grows(previous.get("grid", {}), self.grid.to_dict(), str(where))


def _shown(value) -> str:
    """An option's value in a resume message: None (not given) is the default."""
    return "default" if value is None else repr(value)
