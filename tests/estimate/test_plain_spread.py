"""estimate's torch-free checks (lionsim.estimate.plain.check_plain) parse --compute-spread, and
resolve prices with what they parsed: a trace:FILE is read once a resolve, not once to check it and
again to price it. Reference: the same specs parsed on their own under the estimate's seed."""

from __future__ import annotations

import numpy as np

from lionsim.estimate import EstimateConfig, resolve
from lionsim.steptime.spread import ComputeSpread

WORKERS = 4  # counted_trace's trace (tests/conftest.py TRACE_WORKERS)


def test_resolve_reads_a_trace_once_and_prices_the_spread_under_its_seed(counted_trace):
    trace, reads = counted_trace
    specs = [f"trace:{trace}", "lognormal:0.3"]
    r = resolve(EstimateConfig(model="gpt2-124m", workers=WORKERS, network="10gbe", strategies=["adamw"],
                               compute_spread=specs, seed=3))
    assert reads == [trace]
    ref = ComputeSpread.parse(specs, 3)
    other = ComputeSpread.parse(specs, 0)
    assert r.spread.seed == 3
    for step in (1, 2, 3, 7):
        assert np.array_equal(r.spread.factors(step, WORKERS), ref.factors(step, WORKERS))
    # the seed matters: the default's draws differ, so the check above tells which seed priced it
    assert not np.array_equal(r.spread.factors(1, WORKERS), other.factors(1, WORKERS))
