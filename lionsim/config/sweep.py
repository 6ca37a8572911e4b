"""SweepConfig: `lionsim sweep`'s grid and the bench options every cell shares, as the command
gathers them; `plan_sweep` checks it once and resolves it into the SweepPlan (lionsim.sweep.plan)
that the sweep's runner reads. `merged_plan` is the same for `lionsim sweep merge ROOT`, from
the records its shard parts wrote."""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path

from lionsim.config.bench import BenchConfig
from lionsim.config.planning import plan
from lionsim.config.sweep_plain import cell_bench, check_model_size, check_options
from lionsim.errors import LionsimError
from lionsim.frozen import frozen
from lionsim.plugin_load import is_spec
from lionsim.plan import MEASURED
from lionsim.reports.summary import SummaryRule
from lionsim.run_plugins import load_recorded
from lionsim.strategies.core.given import options_for
from lionsim.sweep.cells import Cell, Unit, grid_cells, grid_units
from lionsim.sweep.grid import Grid, each_once, lr_text
from lionsim.sweep.merge import merged_grid
from lionsim.sweep.plan import SweepPlan, UnitPlan
from lionsim.sweep.shards import PARTS_DIR, Shard, part_roots
from lionsim.sweep.store import SWEEP_FILE, CellStore

GRID_FIELDS = ("workload", "workers", "network", "seed", "strategies", "lr")
"""BenchConfig fields the grid sets per cell; every other field is the same for every cell (a
grid of one lr records it with them, as before lr was an axis: bench_options)."""


@dataclass(kw_only=True, slots=True)
class SweepConfig:
    """A grid of bench runs under one output root."""

    grid: Grid
    """The axes; a cell is one value of each."""
    bench: BenchConfig
    """Every other bench option, applied to every cell (its grid fields, --lr among them, are ignored)."""
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
        """Every check bench makes, over all of the grid's runs, before anything is written (those
        that need no torch, lionsim.config.sweep_plain's, the command makes first too)."""
        self.executor = check_options(self.jobs, self.executor, self.ray_address, self.bench.backend)
        self.check_lr_axis()
        lr = next((v for v in self.grid.lrs if v is not None), None)  # bench's --lr checks: a run that takes none
        whole = dataclasses.replace(self.bench, strategies=[r.label for r in self.grid.runs], transport=None, lr=lr)
        most = max(self.grid.workers)
        for workload in self.grid.workloads:  # each workload by its own rules (--eval-samples: what it holds out)
            for workers in self.grid.workers:  # and --compute-spread against every N (slow workers, a trace's)
                # hyperparameters, baseline, tie, ... every run; the model's fit and the workload's pieces
                cell_bench(whole, workload, workers, most).validate()
        check_model_size(self.bench.model_size, self.grid.workloads)
        grid_cells(self.grid)  # cell ids unique

    def check_lr_axis(self) -> None:
        """With several lrs, every run must train with each: a run's own hyper lr (which wins over
        --lr) or a strategy that takes no lr would make its cells one training over and over."""
        if len(self.grid.lrs) < 2:
            return
        shown = ",".join(map(lr_text, self.grid.lrs))
        for run in self.grid.runs:
            if "lr" in run.strategy_class.ignores:
                raise LionsimError(f"--lr {shown} sweeps lr, and {run.label} takes no lr: its cells would repeat one "
                                   "training; sweep it without --lr, or leave it out")
            for key in (run.label, run.strategy):
                if "lr" in self.bench.hyper.get(key, {}):
                    raise LionsimError(f"--lr {shown} sweeps every run's lr, and hyper.{key}.lr fixes {run.label}'s "
                                       "(it wins over --lr); accepted: an lr axis or a run's own lr, not both")
            for workload in self.grid.workloads if None in self.grid.lrs else ():
                own = run.strategy_class.defaults_for(workload).lr  # what `default` trains it with
                if own in self.grid.lrs:
                    raise LionsimError(f"bad --lr {shown}: {run.label}'s own lr on {workload} is {lr_text(own)}, so "
                                       f"default and {lr_text(own)} are one value given twice; "
                                       f"accepted: {each_once('--lr')}")

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

    def unit_config(self, unit: Unit, network: str) -> BenchConfig:
        """The bench of one unit alone: its one run, with the options that fit that run.

        Options that bench applies only to the runs they fit (and rejects when no run fits) are
        reset for a run they do not fit: a cell is a bench of its one run, replayable as such.
        Speedups against the baseline are the sweep's (per group), so a cell's own has none."""
        run, cfg = unit.run, self.bench
        ties = "tie" in run.strategy_class.reads  # the shared options a strategy reads, as it declares them
        syncs = run.strategy_class.has_momentum_sync
        buckets = bool(dataclasses.replace(cfg, workers=unit.workers).bucketed([run]))
        return dataclasses.replace(
            cfg, workload=unit.workload, workers=unit.workers, seed=unit.seed, network=network, lr=unit.lr,
            bucket_mb=cfg.bucket_mb if buckets else None,
            strategies=[run.label], transport=None, baseline=None,
            hyper={k: v for k, v in cfg.hyper.items() if k in (run.label, run.strategy)},
            model_size=cfg.model_size if not is_spec(unit.workload) else "small",  # a file builds its own model
            tie=cfg.tie if ties else "zero", momentum_sync=cfg.momentum_sync if syncs else "never",
            sync_tensors=cfg.sync_tensors if syncs else "all", options=options_for(cfg.options, run.strategy))

    def bench_options(self) -> dict:
        """Every bench option outside the grid, as JSON values (sweep.json's "bench"), and the lr
        of a grid of one (where every sweep recorded it before lr was an axis)."""
        options = {k: v for k, v in self.bench.to_dict().items() if k not in GRID_FIELDS}
        if len(self.grid.lrs) == 1:
            options["lr"] = self.grid.lrs[0]
        return json.loads(json.dumps(options))


def plan_sweep(cfg: SweepConfig, train: bool = True) -> SweepPlan:
    """Check `cfg` once and resolve it; `train`: every unit of this process planned too (a merge
    trains nothing, and checks only that its parts agree)."""
    if train:
        cfg.validate()
    units = ()
    if train:
        units = tuple(UnitPlan(u, plan(cfg.unit_config(u, next(n for n in cfg.grid.networks if u.trains_on(n)))))
                      for u in cfg.units)
    bench = cfg.bench
    return SweepPlan(grid=cfg.grid, bench=frozen(cfg.bench_options()),
                     defaults=frozen(json.loads(json.dumps(BenchConfig().to_dict()))),
                     rule=SummaryRule(baseline=bench.baseline, target_loss=bench.target_loss,
                                      warmup_steps=bench.warmup_steps),
                     steps=bench.steps, measured=bench.compute == MEASURED, out=Path(cfg.out), jobs=cfg.jobs,
                     executor=cfg.executor, ray_address=cfg.ray_address, shard=cfg.shard, units=units)


def merged_config(out: Path, parts: list[Path]) -> SweepConfig:
    """The sweep the parts (and the root, if it has a sweep.json) belong to: their bench options,
    which must agree, over their grids merged (lionsim.sweep.merge.merged_grid)."""
    root_record = CellStore(out).read_record()
    part_records = {p: CellStore(p).read_record() for p in parts}
    records = [(out / SWEEP_FILE, root_record)] if root_record is not None else []
    records += [(p / SWEEP_FILE, record) for p, record in part_records.items()]
    for where, record in records:
        if record.get("kind") != "sweep" or not isinstance(record.get("grid"), dict):
            raise LionsimError(f"{where} is not a sweep record")
    union = merged_grid(out, root_record, part_records)
    first_where, first = records[0]
    bench = {k: v for k, v in first["bench"].items() if k not in GRID_FIELDS}
    # the plug-ins it trained with, as --resume and --from-run load them: their options are bench's
    load_recorded(first_where.parent, flag="sweep merge")
    try:
        options = BenchConfig.from_dict(bench)
    except TypeError as e:
        raise LionsimError(f"{first_where} holds options this lionsim does not know ({e}); merge with the "
                           "lionsim version that ran the sweep") from None
    grid = Grid.parse(workload=union["workload"], workers=union["workers"], network=union["network"],
                      seed=union["seed"], strategies=union["runs"], transport=None,
                      lr=[lr_text(v) for v in union["lr"]])
    cfg = SweepConfig(grid=grid, bench=options, out=Path(out))
    merged = plan_sweep(cfg, train=False)
    for where, record in records:
        merged.check_resume(record, where)  # the same bench options everywhere
    return cfg


def merged_plan(out: Path) -> SweepPlan:
    """`lionsim sweep merge ROOT`: the plan its shard parts agree on (one line if there are none,
    or if they disagree)."""
    out = Path(out)
    if out.exists() and not out.is_dir():  # a file holds no parts/: naming parts/ under it would mislead
        raise LionsimError(f"{out} is a file, not a sweep folder; accepted: the --out of `lionsim sweep --shard I/N "
                           "--out ROOT`, whose parts/ holds the shards' parts")
    parts = part_roots(out)
    if not parts:
        raise LionsimError(f"no shard parts in {out}: {out / PARTS_DIR}/shard-I-of-N/ is what "
                           f"`lionsim sweep --shard I/N --out {out}` writes; nothing to merge")
    return plan_sweep(merged_config(out, parts), train=False)
