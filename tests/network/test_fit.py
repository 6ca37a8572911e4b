"""Fitting a profile (a link plus the backend's traits) to measured collectives
(lionsim.network.fit): times generated here from the closed forms with known traits, then
the fit must find them again; its errors are those of the profile it returns."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lionsim.errors import LionsimError
from lionsim.network import CollectiveCall, Link, Network, load_network, price
from lionsim.network.fit import Measured, error_summary, fit_profile, slow_mode

PRIOR = load_network("1gbe")  # alpha 50 us: the fit keeps the prior's alpha
ALPHA = PRIOR.inter.alpha_s
BANDWIDTH = 119.5e6  # B/s, the link the data is generated on
SIZES = [4**k for k in range(0, 13)] + [2**25]  # 1 B .. 16 MiB, then 32 MiB


def pairwise_a2a(n, floor, share, p=2):
    """floor + (p-1) alpha + (p-1)/p n / (B share) (REFERENCE.md 5, pairwise exchange)."""
    return floor + (p - 1) * ALPHA + (p - 1) / p * n / (BANDWIDTH * share)


def broadcast(n, floor, p=2):
    """floor + alpha + n / B: one hop at 2 ranks."""
    return floor + ALPHA + n / BANDWIDTH


def samples(fast, *, iters=20, noise=0.0, slow=(0.0, 0.0, 0), seed=0):
    """Iterations around `fast`: relative noise, and a slow mode (probability, extra, max bytes)."""
    rng = np.random.default_rng(seed)
    out = []
    for n, t in fast:
        times = t * (1 + noise * rng.standard_normal(iters))
        if n <= slow[2]:
            times = times + slow[1] * (rng.random(iters) < slow[0])
        out.append((n, tuple(times)))
    return out


def points(op, dtype, data):
    return [Measured(op, dtype, n, times) for n, times in data]


def share_of(n, regimes):
    return next(s for bound, s in regimes if n <= bound)


def lab_data(seed=0, noise=0.0, slow=(0.0, 0.0, 0)):
    """all_to_all with a duplex cut at 2 MiB, broadcast at the full link."""
    regimes = ((2 * 2**20, 1.0), (math.inf, 0.6))
    a2a = samples([(n, pairwise_a2a(n, 110e-6, share_of(n, regimes))) for n in SIZES if n >= 2], noise=noise,
                  slow=slow, seed=seed)
    bc = samples([(n, broadcast(n, 250e-6)) for n in SIZES], noise=noise, slow=slow, seed=seed + 1)
    return points("all_to_all", "uint8", a2a) + points("broadcast", "uint8", bc)


def test_floors_duplex_regimes_and_the_link_are_found():
    net, errors = fit_profile(lab_data(), workers=2, prior=PRIOR, backend="gloo", name="lab", description="t")
    assert net.inter.bandwidth_Bps == pytest.approx(BANDWIDTH, rel=1e-4)  # broadcast: one direction, the link
    assert net.inter.alpha_s == PRIOR.inter.alpha_s  # the prior's
    a2a = net.traits.op("all_to_all")
    assert a2a.floor_s == pytest.approx(110e-6, rel=1e-3)
    assert len(a2a.duplex) == 2 and a2a.duplex[1][1] == pytest.approx(0.6, rel=1e-3)
    assert 2 * 2**20 <= a2a.duplex[0][0] < 4 * 2**20 and a2a.duplex[0][1] == pytest.approx(1.0, rel=1e-3)
    assert net.traits.op("broadcast").floor_s == pytest.approx(250e-6, rel=1e-3)
    ps, bc = net.traits.op("ps_pull"), net.traits.op("broadcast")  # the parameter server's calls: by its formula
    assert (ps.floor_s, ps.duplex, ps.algorithm, bc.algorithm) == (bc.floor_s, bc.duplex, "param_server", "ring")
    assert net.traits.backend == "gloo" and errors.error.abs().max() < 1e-3


def test_errors_are_those_of_the_written_profile():
    data = lab_data(noise=0.05)
    net, errors = fit_profile(data, workers=2, prior=PRIOR, backend="gloo", name="lab", description="t")
    for p, row in zip(data, errors.itertuples(index=False)):
        model = price(CollectiveCall(p.op, p.nbytes, dtype=p.dtype), 2, net).time_s
        assert row.fitted_s == model and row.measured_s == pytest.approx(np.mean(p.times))
        assert row.error == pytest.approx(model / np.mean(p.times) - 1)
    summary = error_summary(errors)
    assert set(summary.collective) == {"all_to_all", "broadcast"} and (summary.points > 10).all()


def test_slow_mode_is_found_and_kept_out_of_the_lines():
    slow = (0.25, 3.5e-3, 65_536)
    data = lab_data(slow=slow, seed=3)
    found, flags = slow_mode(data)
    assert found.probability == pytest.approx(0.25, abs=0.06) and found.extra_s == pytest.approx(3.5e-3, rel=0.02)
    assert found.max_bytes == 65_536
    net, _ = fit_profile(data, workers=2, prior=PRIOR, backend="gloo", name="lab", description="t")
    assert net.traits.op("all_to_all").floor_s == pytest.approx(110e-6, rel=1e-3)  # the lines see fast calls only
    assert net.traits.slow == found


def test_no_slow_mode_without_one():
    found, _ = slow_mode(lab_data(noise=0.02))
    assert found.probability == 0 and not found.applies(0)


def test_one_disturbed_size_does_not_drag_the_line():
    data = lab_data()
    hit = next(i for i, p in enumerate(data) if p.op == "all_to_all" and p.nbytes == 4**9)
    data[hit] = Measured(data[hit].op, data[hit].dtype, data[hit].nbytes, tuple(3 * t for t in data[hit].times))
    net, _ = fit_profile(data, workers=2, prior=PRIOR, backend="gloo", name="lab", description="t")
    a2a = net.traits.op("all_to_all")
    assert a2a.floor_s == pytest.approx(110e-6, rel=0.02) and a2a.duplex[-1][1] == pytest.approx(0.6, rel=0.02)


def test_no_regime_is_added_for_noise():
    data = samples([(n, broadcast(n, 250e-6)) for n in SIZES], noise=0.01, seed=5)
    net, _ = fit_profile(points("broadcast", "uint8", data), workers=2, prior=PRIOR, backend="gloo", name="lab",
                         description="t")
    assert len(net.traits.op("broadcast").duplex) == 1


def test_a_dtype_that_sums_slower_gets_a_reduction_rate():
    def ring(n, gamma):  # at 2 ranks: floor + 2 alpha + n / B + n / 2 gamma (what price picks is the fit's own)
        return 150e-6 + 2 * ALPHA + n / BANDWIDTH + n / 2 * gamma

    f32 = samples([(n, ring(n, 0.0)) for n in SIZES if n >= 4])
    i8 = samples([(n, ring(n, 1 / 0.2e9)) for n in SIZES])
    net, errors = fit_profile(points("all_reduce", "float32", f32) + points("all_reduce", "int8", i8), workers=2,
                              prior=PRIOR, backend="gloo", name="lab", description="t")
    assert dict(net.traits.reduce_GBps)["int8"] == pytest.approx(0.2, rel=0.02)
    assert "float32" not in dict(net.traits.reduce_GBps)
    assert errors.error.abs().max() < 0.02


def test_fewer_than_two_sizes_is_one_clear_line():
    with pytest.raises(LionsimError, match="at least 2 measured sizes of all_to_all"):
        fit_profile([Measured("all_to_all", "uint8", 1024, (1e-3, 1e-3))], workers=2, prior=PRIOR, backend="gloo",
                    name="x", description="t")
    with pytest.raises(LionsimError, match="none were measured"):
        fit_profile([], workers=2, prior=PRIOR, backend="gloo", name="x", description="t")


def test_the_fit_predicts_another_link_through_its_traits():
    """Traits fitted on one link, put on a link 10x slower: the floors stay, the bytes slow down."""
    net, _ = fit_profile(lab_data(), workers=2, prior=PRIOR, backend="gloo", name="lab", description="t")
    slow_link = Network(name="slow", inter=Link(alpha_s=ALPHA, bandwidth_Bps=BANDWIDTH / 10), traits=net.traits)
    for n in (1024, 8 * 2**20):
        share = 1.0 if n <= 2 * 2**20 else 0.6
        expected = 110e-6 + ALPHA + 0.5 * n / (BANDWIDTH / 10 * share)
        assert price(CollectiveCall("all_to_all", n), 2, slow_link).time_s == pytest.approx(expected, rel=2e-3)
