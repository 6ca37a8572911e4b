"""`python -m lionsim.perf compute`: a worker's forward + backward timed per precision mode, beside
bench's modelled figure for a GPU preset (closed form; no timing is asserted)."""

import pytest

from lionsim.compute import DEVICES
from lionsim.perf.compute import bench_compute, modelled


def test_the_model_is_bf16_flops_at_mfu_and_float32_beside_it_each_floored_by_launches():
    h200 = DEVICES.get("h200")
    bf16, fp32 = modelled(1.06e12, 284, h200)
    assert bf16 == pytest.approx(max(1.06e12 / (989e12 * 0.4), 284 * 10e-6))
    assert fp32 == pytest.approx(1.06e12 / (67e12 * 0.4))  # 39.6 ms: the FLOPs bind
    assert modelled(1e6, 50, h200) == (pytest.approx(50 * 10e-6), pytest.approx(50 * 10e-6))


def test_a_cpu_run_times_each_mode_and_counts_the_pass():
    figures = bench_compute(repeats=1, cases=(("mlp", "tiny", 4),))
    got = {f.metric: f.value for f in figures}
    assert got["float32_seconds"] > 0 and got["bf16-autocast_seconds"] > 0 and "tf32_seconds" not in got
    assert got["TFLOP"] > 0 and got["kernels"] > 0 and "modelled_seconds" not in got  # no CPU preset
