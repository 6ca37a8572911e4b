"""bench's checks (BenchConfig.check_plain) parse --compute-spread, and the plan runs with what
they parsed: a trace:FILE is read once a plan, not once to check it and again to build the plan
(lionsim.plan.build parsed it a second time). Reference: the same specs parsed on their own under
the bench's seed; a plan rebuilt from its record (a rank's) reads it once there too."""

from __future__ import annotations

import numpy as np

from lionsim.config.bench import BenchConfig
from lionsim.config.planning import plan
from lionsim.plan import BenchPlan
from lionsim.steptime.spread import ComputeSpread

WORKERS = 4  # counted_trace's trace (tests/conftest.py TRACE_WORKERS)


def test_a_bench_plan_reads_a_trace_once_and_runs_the_spread_under_its_seed(counted_trace):
    trace, reads = counted_trace
    specs = [f"trace:{trace}", "lognormal:0.3"]
    bench = plan(BenchConfig(workload="mlp", model_size="tiny", workers=WORKERS, steps=3, strategies=["adamw"],
                             compute_spread=specs, seed=3))
    assert reads == [trace]  # was twice: the check, then the plan
    ref, other = ComputeSpread.parse(specs, 3), ComputeSpread.parse(specs, 0)
    reads.clear()
    rebuilt = BenchPlan.from_record(bench.record())  # as a rank rebuilds it: its own parse, once
    assert reads == [trace]
    for spread in (bench.compute.spread, rebuilt.compute.spread):
        assert spread.seed == 3 and [s.text for s in spread.specs] == specs
        for step in (1, 2, 3, 7):
            assert np.array_equal(spread.factors(step, WORKERS), ref.factors(step, WORKERS))
    # the seed matters: the default's draws differ, so the check above tells which seed it runs under
    assert not np.array_equal(bench.compute.spread.factors(1, WORKERS), other.factors(1, WORKERS))


def test_no_spread_plans_none():
    assert plan(BenchConfig(workload="mlp", model_size="tiny", workers=2, steps=2, strategies=["adamw"])).compute.spread is None
