"""A sweep, resolved: what the sweep's runner, merge and workers read (never its SweepConfig,
which lives with the command: lionsim.config.sweep).

A SweepPlan holds the grid, the bench options every cell shares as sweep.json records them, the
summary rule of its tables, how and where it runs, and one BenchPlan per training unit of this
process (lionsim.sweep.cells.Unit), planned on the unit's first network; a unit books its other
networks with BenchPlan.with_network. A merge plans no units: it trains nothing.
"""

from __future__ import annotations

import datetime
import itertools
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import torch

import lionsim
from lionsim.errors import LionsimError
from lionsim.frozen import thawed
from lionsim.plan import BenchPlan
from lionsim.plugins import plugin_digests
from lionsim.reports.summary import SummaryRule
from lionsim.sweep.cells import Cell, Unit, cell_id, grid_cells
from lionsim.sweep.grid import Grid, check_grows, lr_tag, recorded_grid, start_over
from lionsim.sweep.shards import Shard
from lionsim.sweep.store import CellStore

RESUME_FREE = ("threads", "timeout")
"""Bench options a resumed sweep may change: they set how fast a cell runs, not what it computes
(as may --jobs, --executor and --shard, which are not bench options)."""
AXIS_OPTIONS = ("lr",)
"""Bench options that are an axis of the grid where given several values: "bench" records one
(lionsim.sweep.grid.recorded_grid). A resume where the sweep on disk or the command has several
compares them as axes (check_grows); between two sweeps of one lr, as the option they always were."""


@dataclass(frozen=True, slots=True)
class UnitPlan:
    """One training unit and the bench that trains it (its one run, on its first network)."""

    unit: Unit
    plan: BenchPlan


@dataclass(frozen=True, slots=True)
class SweepPlan:
    """A grid of bench runs under one output root, resolved (module doc)."""

    grid: Grid
    """The axes; a cell is one value of each."""
    bench: Mapping[str, Any]
    """Every bench option outside the grid, as JSON values (sweep.json's "bench")."""
    defaults: Mapping[str, Any]
    """Every bench option's default, as JSON values: an option a resumed sweep's record lacks
    (added since) matches only at its default."""
    rule: SummaryRule
    """How each group of cells is summarised (the grid's baseline, --target-loss)."""
    steps: int
    """Training steps per cell (progress)."""
    measured: bool
    """Compute was measured (times differ run to run: a merge compares cells without them)."""
    out: Path
    """The sweep root: sweep.json, cells/, sweep_steps.csv, sweep_summary.csv."""
    jobs: int | None = None
    """Training units run at once (None: 1 on the local executor; on Ray, what the cluster takes)."""
    executor: str = "local"
    """Where units train: local or ray (lionsim.sweep.execute)."""
    ray_address: str | None = None
    """--executor ray: the cluster's head, HOST:PORT (None: RAY_ADDRESS, else a Ray started here)."""
    shard: Shard | None = None
    """Run only this shard's units, into out/parts/shard-I-of-N (lionsim.sweep.shards)."""
    units: tuple[UnitPlan, ...] = ()
    """The units this process trains (the grid's, or its shard's), each planned; none for a merge."""

    @property
    def cells(self) -> list[Cell]:
        return grid_cells(self.grid)

    @property
    def root(self) -> Path:
        """Where this process writes: the sweep root, or its shard's part under it."""
        return self.out if self.shard is None else self.shard.root(self.out)

    @property
    def plugins(self) -> list[str]:
        """The plug-in files its bench options load (resolved paths)."""
        return [p for p in (thawed(self.bench).get("plugins") or []) if isinstance(p, str)]

    def record(self, previous: dict | None) -> dict:
        """sweep.json: the grid, the bench options, argv, first start, versions, cell count."""
        from lionsim.training.record import git_commit

        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        return {"kind": "sweep", "grid": self.grid.to_dict(), "bench": thawed(self.bench), "jobs": self.jobs,
                "executor": self.executor, "shard": None if self.shard is None else str(self.shard), "argv": sys.argv,
                "cwd": os.getcwd(),  # where argv's relative paths are (a report runs it from there)
                "started": (previous or {}).get("started", now),
                "versions": {"python": sys.version.split()[0], "torch": torch.__version__,
                             "lionsim": lionsim.__version__, "git_commit": git_commit()},
                "cells": len(self.cells),  # the grid's (a shard trains its share of them)
                **({"plugin_sha256": plugin_digests(self.plugins)} if self.plugins else {})}

    def check_resume(self, previous: dict, where: Path) -> None:
        """Resuming is safe when every finished cell is one this command would compute: the
        same bench options (but RESUME_FREE) and a grid that keeps every value a finished cell
        holds (check_grows). Anything else fails naming every option that differs, before
        anything is written."""
        if previous.get("kind") != "sweep" or not isinstance(previous.get("bench"), dict):
            raise LionsimError(f"{where} is not a sweep record; use a new --out")
        from lionsim.training.resume import drop_inert_defaults

        now, defaults = thawed(self.bench), thawed(self.defaults)
        then = drop_inert_defaults(dict(previous["bench"]))  # what an older lionsim recorded where it could not act
        axes = AXIS_OPTIONS if len(self.grid.lrs) > 1 or "lr" in (previous.get("grid") or {}) else ()
        # (an option added since that sweep began, at its default, computes the same cells)
        differ = [key for key in sorted(set(now) | set(then))
                  if not (key not in then and now.get(key) == defaults.get(key))
                  and key not in (*RESUME_FREE, *axes)
                  and _resolved(key, then.get(key)) != _resolved(key, now.get(key))]
        if differ:
            values = [f"{_shown(then.get(key))} there, {_shown(now.get(key))} now" for key in differ]
            said = (values[0] if len(differ) == 1
                    else "; ".join(f"{_flag(key)}: {value}" for key, value in zip(differ, values)))
            retarget = (f"; to re-target its finished cells without training: lionsim estimate -m MODEL "
                        f"--from-run {where.parent} --target-loss {_shown(now.get('target_loss'))}"
                        if differ == ["target_loss"] and now.get("target_loss") is not None else "")
            raise LionsimError(f"{', '.join(map(_flag, differ))} {'differs' if len(differ) == 1 else 'differ'} from "
                               f"the sweep in {where} ({said}); {start_over(where)}{retarget}")
        self._check_plugins(previous, where)
        grid = recorded_grid(previous)
        check_grows(grid, self.grid.axes(), str(where), held_values(grid, where.parent))

    def _check_plugins(self, previous: dict, where: Path) -> None:
        """A plug-in file edited since the sweep's cells trained (its recorded SHA-256 differs, the
        file matched by path, else by name) is refused: those cells ran the earlier code, and a
        rerun that took them for this code's would mix the two in one table without a word."""
        then = previous.get("plugin_sha256")
        if not isinstance(then, dict) or not self.plugins:
            return
        now = plugin_digests(self.plugins)
        by_name = {Path(path).name: digest for path, digest in now.items()}
        changed = [path for path, digest in then.items()
                   if now.get(path, by_name.get(Path(str(path)).name, digest)) != digest]
        if changed:
            files = ", ".join(changed)
            raise LionsimError(f"--plugin {files} changed since the sweep in {where} trained its cells (they ran "
                               "the earlier file); use a new --out for this code, or put the earlier file back to "
                               f"resume (lionsim sweep never clears a sweep root: delete {where.parent} to start "
                               "it over)")


def held_values(grid: dict, root: Path) -> dict[str, set]:
    """Axis -> the values of `grid` (a sweep.json's, with "lr": recorded_grid) that the finished
    cells under `root` hold, each cell's id as that grid names it."""
    axes = ("workload", "workers", "network", "seed", "runs", "lr")  # cell_id's order, then its lr
    lrs = grid.get("lr") or [None]
    points = {cell_id(*values[:5], lr_tag(values[5], lrs)): values
              for values in itertools.product(*(grid.get(axis, []) for axis in axes[:5]), lrs)}
    held: dict[str, set] = {axis: set() for axis in axes}
    for finished in CellStore(root).finished(list(points)):
        for axis, value in zip(axes, points[finished]):
            held[axis].add(value)
    return held


def _resolved(key: str, value):
    """An option's value as it computes: --bucket-mb not given is DDP's 25 MB (a sweep begun while
    that was the recorded default records 25.0, one begun since null: the same cells)."""
    from lionsim.steptime.overlap import DEFAULT_BUCKET_MB

    return DEFAULT_BUCKET_MB if key == "bucket_mb" and value is None else value


def _flag(key: str) -> str:
    """A bench option's flag: bucket_mb -> --bucket-mb."""
    return f"--{key.replace('_', '-')}"


def _shown(value) -> str:
    """An option's value in a resume message: None (not given) is the default."""
    return "default" if value is None else repr(value)
