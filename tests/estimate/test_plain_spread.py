"""estimate's torch-free checks (lionsim.estimate.plain.check_plain) parse --compute-spread, and
resolve prices with what they parsed: a trace:FILE is read once a resolve, not once to check it and
again to price it. Reference: the same specs parsed on their own under the estimate's seed."""

from __future__ import annotations

import numpy as np

from lionsim.estimate import EstimateConfig, resolve
from lionsim.steptime import spread as spread_module
from lionsim.steptime.spread import ComputeSpread

WORKERS = 4


def test_resolve_reads_a_trace_once_and_prices_the_spread_under_its_seed(tmp_path, monkeypatch):
    trace = tmp_path / "t.csv"
    rows = [f"{s},{w},{1.0 + s * w / 10}" for s in (1, 2, 3) for w in range(WORKERS)]
    trace.write_text("step,worker,compute_s\n" + "\n".join(rows) + "\n")
    reads = []
    real = spread_module.load_trace
    monkeypatch.setattr(spread_module, "load_trace", lambda text, path: reads.append(path) or real(text, path))
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
