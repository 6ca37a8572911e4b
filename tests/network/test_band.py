"""The model's p10-p90 band of a step's small calls: the fast time's jitter, its fit, the band's
coverage in `python -m lionsim.perf fidelity`, and the in-step calibration's sizes.

References: the normal distribution's closed-form quantiles, a seeded Monte Carlo of the
mixture, percentiles of evenly spaced samples, and coverage counted by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from lionsim.network.fit import Measured, slow_mode
from lionsim.network.traits import SlowMode, Spread, Traits, sum_quantile

Z90 = 1.2815515655446004  # the standard normal's 90th percentile


def test_a_jittered_call_has_normal_quantiles():
    call = Spread(1e-3, jitter_s=1e-4)
    assert call.quantile(0.9) == pytest.approx(1e-3 + Z90 * 1e-4, rel=1e-9)
    assert call.quantile(0.1) == pytest.approx(1e-3 - Z90 * 1e-4, rel=1e-9)
    assert call.mean_s == 1e-3  # the jitter widens the band, not the mean


def test_jitters_of_one_steps_calls_move_together():
    calls = [Spread(1e-3, jitter_s=3e-4), Spread(2e-3, jitter_s=4e-4)]
    assert sum_quantile(calls, 0.9) == pytest.approx(3e-3 + Z90 * 7e-4, rel=1e-9)


def test_a_jittered_slow_mode_matches_a_monte_carlo():
    calls = [Spread(1e-3, 4e-3, 0.3, 2e-4), Spread(5e-4, 4e-3, 0.3, 1e-4)]
    rng = np.random.default_rng(0)
    n = 400_000
    shared = rng.standard_normal(n)  # one state of the machine per step
    total = sum(c.fast_s + c.jitter_s * shared + c.extra_s * (rng.random(n) < c.p) for c in calls)
    for q in (0.1, 0.5, 0.9):
        assert sum_quantile(calls, q) == pytest.approx(np.quantile(total, q), abs=3e-5)


def test_without_jitter_the_band_is_the_exact_two_mode_one():
    calls = [Spread(1e-3, 4e-3, 0.3), Spread(1e-3, 4e-3, 0.3)]
    # P(no slow call) = 0.49 < 0.9 and P(at most one) = 0.91: p90 is one slow call
    assert sum_quantile(calls, 0.9) == pytest.approx(2e-3 + 4e-3)
    assert sum_quantile(calls, 0.1) == pytest.approx(2e-3)


def test_the_lower_edge_takes_the_calm_share():
    """Three calls slow with probability 0.6 each: no call slow in 6.4% of steps, so p10 has one
    slow call; on a calm machine (0.1 each) 72.9% of steps have none."""
    loaded = [Spread(1e-3, 4e-3, 0.6)] * 3
    calm = [Spread(1e-3, 4e-3, 0.6, p_calm=0.1)] * 3
    assert sum_quantile(loaded, 0.1) == pytest.approx(3e-3 + 4e-3)
    assert sum_quantile(calm, 0.1) == pytest.approx(3e-3)
    assert sum_quantile(calm, 0.9) == sum_quantile(loaded, 0.9)  # the upper edge keeps the loaded share


def test_a_slow_extra_with_a_spread_has_its_normal_quantile():
    """Half the calls slow by 4 +- 1 ms: the 90th percentile is the slow mode's 80th."""
    call = Spread(1e-3, 4e-3, 0.5, extra_sd_s=1e-3)
    assert call.quantile(0.9) == pytest.approx(5e-3 + 0.8416212335729143e-3, rel=1e-6)


def test_the_fit_reads_the_jitter_off_the_fast_iterations():
    """11 fast iterations evenly from 0.9 to 1.1 ms (10th / 90th percentiles 0.92 and 1.08, mean 1)
    and 2 slow ones 5 ms longer, at two small sizes."""
    fast = np.linspace(0.9e-3, 1.1e-3, 11)
    times = tuple(np.concatenate([fast, [6e-3, 6e-3]]))
    slow, flags = slow_mode([Measured("all_reduce", "float32", 4, times), Measured("all_reduce", "float32", 4096, times)])
    assert slow.probability == pytest.approx(2 / 13)
    assert slow.jitter == pytest.approx((1.08 - 0.92) / 2.563, rel=1e-3)
    assert slow.extra_jitter == 0.0  # every slow iteration 5 ms over the typical time
    assert [int(f.sum()) for f in flags.values()] == [2, 2]


def test_a_profile_keeps_its_jitter(tmp_path):
    from lionsim.network.traits_file import traits_from_value

    traits = Traits(name="t", backend="gloo", slow=SlowMode(probability=0.2, extra_s=3e-3, max_bytes=4096, jitter=0.25,
                                                            extra_jitter=0.5, calm_probability=0.05))
    assert traits_from_value(traits.to_dict(), source="test", default_name="t").slow == traits.slow
    assert "jitter" not in Traits(name="t", slow=SlowMode(probability=0.2, extra_s=3e-3, max_bytes=4096)).to_dict()["slow"]


def test_bad_jitter_is_one_line():
    from lionsim.errors import LionsimError
    from lionsim.network.traits_file import traits_from_value

    with pytest.raises(LionsimError, match="jitter"):
        traits_from_value({"name": "t", "backend": "gloo", "slow": {"probability": 0.1, "extra_us": 1.0,
                                                                    "max_bytes": 10, "jitter": -1}},
                          source="test", default_name="t")


def test_in_step_keeps_the_small_sizes():
    from lionsim.measure.calibrate import in_step
    from lionsim.network.fit import SLOW_MAX_BYTES

    cases = [("all_reduce", "float32", [1, 4096, SLOW_MAX_BYTES, SLOW_MAX_BYTES + 1]), ("all_gather", "uint8", [2**24])]
    assert in_step(cases) == [("all_reduce", "float32", [1, 4096, SLOW_MAX_BYTES])]


def _run_dir(tmp_path, measured_ms: list[float]):
    """A run of one 100-byte all-reduce a step priced on a profile whose fast call is 1 ms with a
    10% jitter and no slow mode: its band is 1 ms +- 1.2816 x 0.1 ms."""
    profile = ("[inter]\nalpha_us = 0.0\nbandwidth_GBps = 1000.0\n[traits]\nname = \"t\"\nbackend = \"gloo\"\n"
               "[traits.slow]\nprobability = 0.0\nextra_us = 0.0\nmax_bytes = 1000\njitter = 0.1\n"
               "[traits.ops.all_reduce]\nfloor_us = 1000.0\nalgorithm = \"ring\"\n")
    run = tmp_path / "run"
    run.mkdir()
    (run / "calibration.toml").write_text(profile)
    (tmp_path / "fit.toml").write_text(profile)
    (run / "run.json").write_text(json.dumps({"hosts": {"ranks": 2}}))
    rows = ["strategy,transport,step,call,collective,dtype,bytes,time_s"]
    rows += [f"adamw,fp32-allreduce,{step},0,all_reduce,float32,100,{ms / 1e3}" for step, ms in
             enumerate([9.0] + measured_ms, start=1)]  # step 1: the warm-up, left out
    (run / "calls.csv").write_text("\n".join(rows) + "\n")
    (run / "calibration.csv").write_text("collective,dtype,bytes,measured_median_s,iterations\n"
                                         "all_reduce,float32,100,0.001,12\n")
    return run


def test_fidelity_counts_the_steps_inside_the_band(tmp_path):
    from lionsim.perf.fidelity import compare

    # the band is 0.872-1.128 ms (the 100 bytes add 0.1 ns): in, in, out above, out below, in
    run = _run_dir(tmp_path, [1.0, 1.12, 1.2, 0.85, 0.95])
    figures = {f.metric: f.value for f in compare(run, tmp_path / "fit.toml", "1gbe", "here", warmup=1)
               if f.case == "here adamw@fp32-allreduce"}
    assert figures["in-run calibration coverage"] == pytest.approx(3 / 5)
    assert figures["separate fit coverage"] == pytest.approx(3 / 5)
    assert figures["measured_ms"] == pytest.approx(np.mean([1.0, 1.12, 1.2, 0.85, 0.95]))
    assert math.isfinite(figures["uncalibrated coverage"])
