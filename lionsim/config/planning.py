"""plan(cfg): a BenchConfig checked once and resolved into the BenchPlan (lionsim.plan) that is
the only thing the command passes below it."""

from __future__ import annotations

import dataclasses

from typing import TYPE_CHECKING

from lionsim.config.bench import BenchConfig
from lionsim.frozen import frozen

if TYPE_CHECKING:
    from lionsim.plan import BenchPlan


def plan(cfg: BenchConfig) -> BenchPlan:
    """Validate `cfg` (loading its plug-ins first) and resolve every run: its strategy's config,
    hyperparameters, options and memory; under modelled compute, that each run declares the memory
    passes it is timed by; that each run's transport answers for every payload the run sends
    (lionsim.config.sends). Every problem is one LionsimError line, before anything is built or
    trained; `cfg` is not read again."""
    runs, spread = cfg.checked()
    from lionsim.plan import RunPlan, build  # torch: after the checks that need none (BenchConfig.check_plain)

    resolved = []
    for run in runs:
        strategy = cfg.strategy_config(run)
        strategy = dataclasses.replace(strategy, options=frozen(strategy.options))  # read-only below
        cls = run.strategy_class
        resolved.append(RunPlan(run=run, strategy=strategy, hyper=cls.resolve_hyper(strategy),
                                options=cls.resolve_options(strategy), extra_rows=cls.extra_rows(strategy)))
    bench = build(cfg.to_dict(), tuple(resolved), cfg.options, spread=spread)  # the spread as the checks parsed it
    if bench.compute.device is not None:  # modelled compute prices every pass from what the modules declare
        from lionsim.steptime.undeclared import check_declared

        for r in resolved:
            cls = r.run.strategy_class
            check_declared(cls, r.run.transport, bench.workload.workers, cls.steps_per_sync(r.strategy))
    from lionsim.config.sends import check_sends

    check_sends(bench)  # what booking will ask each transport, asked now rather than after the training
    return bench
