"""`lionsim bench` as a library call: a BenchConfig planned once (lionsim.config), its runs
trained on the simulator (lionsim.training.runner) and booked (lionsim.training.results).

    from lionsim.bench import BenchConfig, run_bench
    result = run_bench(BenchConfig(workload="mlp", workers=4, steps=20, strategies=["adamw", "dlion-mavo"]))
    result.summary  # summary.csv's rows; result.steps, result.meta (run.json)

docs/architecture.md draws the layers this walks through.
"""

from __future__ import annotations

from lionsim.config.bench import DEFAULT_STRATEGIES, BenchConfig
from lionsim.config.planning import plan
from lionsim.plan import MEASURED, BenchPlan
from lionsim.reports.columns import EXTRA_STEP_COLUMNS
from lionsim.training.loop import StepFn
from lionsim.training.results import BenchResult, Results
from lionsim.training.runner import Runner

__all__ = ["BenchConfig", "BenchPlan", "BenchResult", "DEFAULT_STRATEGIES", "EXTRA_STEP_COLUMNS", "MEASURED",
           "plan", "run_bench", "run_plan"]


def run_plan(bench: BenchPlan, progress: StepFn | None = None) -> BenchResult:
    """Train every run of a plan in this process and book them."""
    runner = Runner(bench)
    runner.run(progress)
    return Results(runner).result()


def run_bench(cfg: BenchConfig, progress: StepFn | None = None) -> BenchResult:
    """Train every strategy in cfg on the simulator; return the records, summary and run record."""
    return run_plan(plan(cfg), progress)
