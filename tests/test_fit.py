"""Fitting a network profile (lionsim.network.fit) and pricing by fitted regimes
(lionsim.network.fitted): synthetic data from the formulas, closed-form prices, round trips."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from lionsim.errors import LionsimError
from lionsim.network import NETWORKS, CollectiveCall, load_network, network_from_dict, price
from lionsim.network.fit import FitConfig, error_summary, fit_collective, fit_line, fit_network
from lionsim.network.toml_out import profile_toml

SIZES = np.array([64_000 * 2 ** (i / 2) for i in range(21)]).round()  # 64 KB .. 65.5 MB, x sqrt(2)


def ring_all_reduce(n, alpha, gbps, workers=2):
    """2(N-1) alpha + 2(N-1)/N n / bandwidth (REFERENCE.md 5), written out independently."""
    return 2 * (workers - 1) * alpha + 2 * (workers - 1) / workers * n / (gbps * 1e9)


def pairwise_all_to_all(n, alpha, gbps, workers=2):
    return (workers - 1) * alpha + (workers - 1) / workers * n / (gbps * 1e9)


def regime_data(formula, regimes, sizes=SIZES):
    """Times from `formula` with (max_bytes, alpha_s, GB/s) per regime."""
    out = []
    for n in sizes:
        _, alpha, gbps = next(r for r in regimes if n <= r[0])
        out.append(formula(n, alpha, gbps))
    return np.array(out)


def link_values(regime):
    return regime.link.alpha_s, regime.link.bandwidth_Bps / 1e9


def test_one_line_recovers_alpha_and_beta():
    times = ring_all_reduce(SIZES, 250e-6, 1.3)
    fc = fit_collective("all_reduce", 2, SIZES, times)
    assert len(fc.regimes) == 1 and math.isinf(fc.regimes[0].max_bytes)
    alpha, gbps = link_values(fc.regimes[0])
    assert alpha == pytest.approx(250e-6, rel=1e-4) and gbps == pytest.approx(1.3, rel=1e-4)
    assert (fc.algorithm, fc.fitted_workers) == ("ring", 2)


def test_regimes_and_breakpoints_are_found():
    truth = [(1.0e6, 300e-6, 1.2), (9.0e6, 120e-6, 2.5), (math.inf, 40e-6, 0.9)]
    times = regime_data(pairwise_all_to_all, truth)
    fc = fit_collective("all_to_all", 2, SIZES, times)
    assert len(fc.regimes) == 3
    for got, (bound, alpha, gbps) in zip(fc.regimes, truth):
        a, g = link_values(got)
        assert a == pytest.approx(alpha, rel=1e-4, abs=1e-9) and g == pytest.approx(gbps, rel=1e-4)
        if not math.isinf(bound):  # the cut lies between the last size below and the first above
            below, above = SIZES[SIZES <= bound].max(), SIZES[SIZES > bound].min()
            assert below <= got.max_bytes < above
    assert math.isinf(fc.regimes[-1].max_bytes)


def test_no_regime_is_added_for_a_straight_line_with_noise():
    rng = np.random.default_rng(0)
    times = ring_all_reduce(SIZES, 200e-6, 1.0) * (1 + 0.01 * rng.standard_normal(len(SIZES)))
    assert len(fit_collective("all_reduce", 2, SIZES, times).regimes) == 1


def test_line_fit_is_relative_and_robust_to_one_outlier():
    x = np.stack([np.full(len(SIZES), 2.0), SIZES], axis=1)  # ring all-reduce at N = 2: (2 alpha, n beta)
    times = x @ np.array([100e-6, 1e-9])
    times[3] *= 3  # one size disturbed by a busy machine
    alpha, beta = fit_line(x, times, irls_steps=30)
    assert alpha == pytest.approx(100e-6, rel=1e-3) and beta == pytest.approx(1e-9, rel=1e-3)
    assert fit_line(x, times * 0 + 1e-3)[1] > 0  # flat data: beta stays positive (bandwidth finite)


def test_fit_network_errors_are_of_the_priced_profile():
    times = regime_data(ring_all_reduce, [(2e6, 300e-6, 1.2), (math.inf, 100e-6, 2.0)])
    frame = pd.DataFrame({"collective": "all_reduce", "workers": 2, "bytes": SIZES.astype(int), "time_s": times})
    net, errors = fit_network(frame, name="lab", description="synthetic")
    assert net.fitted("all_reduce") is not None and net.fitted("all_gather") is None
    summary = error_summary(errors).set_index("collective")
    assert summary.loc["all_reduce", "worst_abs_error"] < 1e-4
    assert errors.fitted_s.tolist() == pytest.approx(
        [price(CollectiveCall("all_reduce", int(n)), 2, net).time_s for n in SIZES])


PROFILE = {
    "inter": {"alpha_us": 20.0, "bandwidth_GBps": 1.0},
    "collectives": {
        "all_reduce": {"fitted_workers": 2, "regimes": [
            {"max_bytes": 1_000_000, "alpha_us": 300.0, "bandwidth_GBps": 1.2},
            {"alpha_us": 100.0, "bandwidth_GBps": 2.5}]},
        "all_to_all": {"regimes": [{"alpha_us": 50.0, "bandwidth_GBps": 4.0}]},
        "broadcast": {"regimes": [{"alpha_us": 10.0, "bandwidth_GBps": 2.0}]},
    },
}


@pytest.mark.parametrize(("op", "n", "workers", "expected"), [
    ("all_reduce", 1_000_000, 4, 6 * 300e-6 + 1.5 * 1e6 / 1.2e9),  # n == max_bytes: the first regime
    ("all_reduce", 1_000_001, 4, 6 * 100e-6 + 1.5 * 1_000_001 / 2.5e9),
    ("all_reduce", 64_000, 2, 2 * 300e-6 + 64_000 / 1.2e9),
    ("all_to_all", 8_000_000, 8, 7 * 50e-6 + 7 / 8 * 8e6 / 4e9),
    ("broadcast", 1_000_000, 8, 3 * (10e-6 + 1e6 / 2e9)),  # binomial: ceil(log2 8) rounds
])
def test_fitted_pricing_closed_form(op, n, workers, expected):
    net = network_from_dict(PROFILE, source="test", default_name="lab")
    cost = price(CollectiveCall(op, n), workers, net)
    assert cost.time_s == pytest.approx(expected, rel=1e-12)
    assert [p.scope for p in cost.phases] == ["fitted"]


def test_ops_without_an_entry_use_the_links():
    net = network_from_dict(PROFILE, source="test", default_name="lab")
    cost = price(CollectiveCall("all_gather", 1_000_000), 4, net, "ring")
    assert cost.time_s == pytest.approx(3 * 20e-6 + 0.75 * 1e6 / 1e9, rel=1e-12)
    assert [p.scope for p in cost.phases] == ["inter"]


def test_a_named_algorithm_takes_the_fitted_link():
    net = network_from_dict(PROFILE, source="test", default_name="lab")
    cost = price(CollectiveCall("all_reduce", 64_000), 8, net, "recursive_doubling")
    assert cost.time_s == pytest.approx(3 * (300e-6 + 64_000 / 1.2e9), rel=1e-12)  # log2 N (alpha + n beta)


def test_profile_round_trip_prices_the_same(tmp_path):
    net = network_from_dict(PROFILE, source="test", default_name="lab")
    path = tmp_path / "lab.toml"
    path.write_text(profile_toml(net, "a comment\nover two lines"))
    back = load_network(str(path))
    assert back == net
    for op in ("all_reduce", "all_gather", "all_to_all", "broadcast", "reduce", "ps_push"):
        for n in (1000, 999_999, 1_000_000, 5_000_000):
            for workers in (2, 3, 8):
                call = CollectiveCall(op, n)
                assert price(call, workers, back).time_s == price(call, workers, net).time_s


def test_presets_and_old_profiles_are_unchanged():
    for _, preset in NETWORKS.items():
        assert "collectives" not in preset.to_dict() and preset.collectives == ()
    old = network_from_dict({"inter": {"alpha_us": 10.0, "bandwidth_GBps": 1.0}}, source="t", default_name="old")
    ring = price(CollectiveCall("all_reduce", 1_000_000), 8, old, "ring")
    assert ring.time_s == pytest.approx(14 * 10e-6 + 1.75e6 / 1e9)


@pytest.mark.parametrize(("collectives", "message"), [
    ({"allreduce": {"regimes": [{"alpha_us": 1.0, "bandwidth_GBps": 1.0}]}}, "unknown key 'collectives.allreduce'"),
    ({"all_reduce": {"regimes": []}}, "non-empty array"),
    ({"all_reduce": {"regimes": [{"alpha_us": 1.0, "bandwidth_GBps": 1.0, "max_bytes": 10}]}}, "the last none"),
    ({"all_reduce": {"regimes": [{"alpha_us": 1.0, "bandwidth_GBps": 1.0},
                                 {"alpha_us": 1.0, "bandwidth_GBps": 1.0}]}}, "needs max_bytes"),
    ({"all_reduce": {"regimes": [{"max_bytes": 10, "alpha_us": 1.0, "bandwidth_GBps": 1.0},
                                 {"max_bytes": 5, "alpha_us": 1.0, "bandwidth_GBps": 1.0},
                                 {"alpha_us": 1.0, "bandwidth_GBps": 1.0}]}}, "must increase"),
    ({"all_reduce": {"algorithm": "pairwise", "regimes": [{"alpha_us": 1.0, "bandwidth_GBps": 1.0}]}},
     "does not implement all_reduce"),
    ({"all_reduce": {"regimes": [{"alpha_us": 1.0, "bandwidth_GBps": 0.0}]}}, "bandwidth_GBps"),
])
def test_bad_fitted_entries_are_one_clear_error(collectives, message):
    with pytest.raises(LionsimError, match=message.replace("(", r"\(")):
        network_from_dict({"inter": {"alpha_us": 1.0, "bandwidth_GBps": 1.0}, "collectives": collectives},
                          source="bad.toml", default_name="bad")


def test_fit_config_is_checked():
    with pytest.raises(LionsimError, match="unknown fit objective"):
        FitConfig(objective="rms")
