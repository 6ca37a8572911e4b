"""`python -m lionsim.perf newton-schulz`: Muon's orthogonalisation timed per matrix shape of a model
and set beside estimate's price of it, checked against closed forms (no timing is asserted)."""

import pytest

import lionsim.perf.newton_schulz as ns
from lionsim.compute import MODELS
from lionsim.perf.__main__ import main


class _Tiny:
    name = "tiny-test"
    tensor_shapes = [(8, 4), (8, 4), (4, 8), (16,), (2, 3, 5)]


@pytest.fixture
def tiny_model(monkeypatch):
    real = MODELS.get
    monkeypatch.setattr(MODELS, "get", lambda name: _Tiny if name == "tiny-test" else real(name))


def _by(figures, case, metric):
    return next(f.value for f in figures if f.case == case and f.metric == metric)


def test_each_matrix_shape_is_counted_once_with_its_tensors():
    counts = ns.shape_counts(_Tiny.tensor_shapes)
    assert counts == {(8, 4): 2, (4, 8): 1, (2, 3, 5): 1}  # the vector is no matrix
    names = ["blocks.0", "head.weight", "blocks.1", "norm", "blocks.2"]  # a head is no hidden matrix
    assert ns.shape_counts(_Tiny.tensor_shapes, names) == {(8, 4): 1, (4, 8): 1, (2, 3, 5): 1}


def test_a_cpu_run_times_every_shape_and_the_step_is_their_sum(tiny_model):
    figures = ns.bench_newton_schulz(["tiny-test"], repeats=1)
    one = _by(figures, "tiny-test 8x4 (x2), one", "seconds")
    other = _by(figures, "tiny-test 4x8 (x1), one", "seconds")
    batch = _by(figures, "tiny-test 2x3x5 (x1), one", "seconds")
    assert _by(figures, "tiny-test step, all 4", "seconds") == pytest.approx(2 * one + other + batch)
    # 5 iterations of 4 m^2 n + 2 m^3 (m = 4, n = 8); the 3-dim tensor is 2 matrices of m = 3, n = 5
    assert _by(figures, "tiny-test 8x4 (x2), one", "TFLOPs") == pytest.approx(5 * (4 * 16 * 8 + 2 * 64) * 1e-12 / one)
    assert _by(figures, "tiny-test 2x3x5 (x1), one", "TFLOPs") == pytest.approx(
        2 * 5 * (4 * 9 * 5 + 2 * 27) * 1e-12 / batch)
    assert not [f for f in figures if f.metric == "modelled_seconds"]  # a CPU has no preset to model


def test_a_gpu_run_sets_each_time_beside_estimates_price(tiny_model, monkeypatch):
    """The model column is estimate's: FLOPs / (989 TFLOP/s x 0.4) on an H200, at least the launches."""
    monkeypatch.setattr("lionsim.perf.kernels.gpu_device", lambda: ("h200", "an H200", None))
    monkeypatch.setattr(ns, "time_shape", lambda shape, count, device, repeats, sync: 1e-3)
    figures = ns.bench_newton_schulz(["tiny-test"], repeats=1, device="cuda")
    flops = 2 * 5 * (4 * 16 * 8 + 2 * 64) + 5 * (4 * 16 * 8 + 2 * 64) + 2 * 5 * (4 * 9 * 5 + 2 * 27)
    assert _by(figures, "tiny-test step, all 4", "flops_seconds") == pytest.approx(flops / (989e12 * 0.4))
    # as estimate prices it: at least 44 kernels a matrix at 10 us each, which a tiny matrix is
    assert _by(figures, "tiny-test step, all 4", "modelled_seconds") == pytest.approx(4 * 44 * 10e-6)
    assert _by(figures, "tiny-test step, all 4", "seconds") == pytest.approx(4e-3)
    assert _by(figures, "tiny-test step, all 4", "share_of_peak") == pytest.approx(flops / 4e-3 / 989e12)


@pytest.mark.parametrize("value", ["bogus", " , ", "gpt2-124m,nope"])
def test_an_unknown_model_is_one_line_before_anything_runs(tmp_path, capsys, value):
    with pytest.raises(SystemExit) as raised:
        main(["newton-schulz", "--ns-models", value, "--csv", str(tmp_path / "p.csv")])
    err = capsys.readouterr().err.strip().splitlines()
    assert raised.value.code == 2 and len(err) == 1 and "bad --ns-models" in err[0] and "llama-7b" in err[0]
    assert not (tmp_path / "p.csv").exists()
