"""One resolved plan per bench: the command's configuration checked once and turned into what
training, booking and the run record read.

    command (CLI flags, TOML, run.json -> BenchConfig) -> plan(cfg) -> Bench (training loop,
    booking) -> files (steps.csv, summary.csv, run.json)

`plan` validates the BenchConfig once (loading its plug-ins first) and resolves every run: its
strategy's config, hyperparameters, options and memory. Nothing below calls back into
BenchConfig (its `validate`, `strategy_config` or `workload_config`): a run's strategy is built
from `RunPlan.strategy`, the workload from `BenchPlan.workload`, run.json's runs from the
RunPlans. The plan is frozen; `settings` is the validated BenchConfig, kept for its scalar
options (steps, eval_every, compute, ...), which nothing may change after `plan`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from lionsim.runs import RunSpec
from lionsim.strategies.base import Hyper, StrategyConfig
from lionsim.workloads import WorkloadConfig


@dataclass(frozen=True, slots=True)
class RunPlan:
    """One run (strategy@transport) as it trains."""

    run: RunSpec
    strategy: StrategyConfig
    """What its strategy is built with: the common options, its hyper table, its own options given."""
    hyper: Hyper
    """The hyperparameters it trains with (given, else tuned for the workload, else the defaults)."""
    options: object
    """Its strategy's resolved Options (given, else tuned, else the defaults; checked)."""
    extra_rows: int
    """fp32 [w, P] rows its strategy holds beyond the ones every strategy holds (the memory guard)."""

    @property
    def label(self) -> str:
        return self.run.label

    def options_dict(self) -> dict:
        """Its options as run.json records them."""
        return dataclasses.asdict(self.options)


@dataclass(frozen=True, slots=True)
class BenchPlan:
    """A bench, resolved: the validated settings, the workload and every run."""

    settings: object
    """The validated BenchConfig (its scalar options; never validated or resolved again)."""
    workload: WorkloadConfig
    runs: tuple[RunPlan, ...]

    @property
    def specs(self) -> list[RunSpec]:
        return [r.run for r in self.runs]

    @property
    def extra_rows(self) -> int:
        """The hungriest run's extra [w, P] rows (the memory guard sizes the bench by it)."""
        return max((r.extra_rows for r in self.runs), default=0)


def plan(cfg) -> BenchPlan:
    """Validate `cfg` (a BenchConfig) once and resolve every run; every problem is one LionsimError line."""
    runs = cfg.validate()
    resolved = []
    for run in runs:
        strategy = cfg.strategy_config(run)
        cls = run.strategy_class
        resolved.append(RunPlan(run=run, strategy=strategy, hyper=cls.resolve_hyper(strategy),
                                options=cls.resolve_options(strategy), extra_rows=cls.extra_rows(strategy)))
    return BenchPlan(settings=cfg, workload=cfg.workload_config(), runs=tuple(resolved))
