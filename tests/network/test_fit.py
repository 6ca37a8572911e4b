"""Fitting a profile (a link plus the backend's traits) to measured collectives
(lionsim.network.fit): times generated here from the closed forms with known traits, then
the fit must find them again; its errors are those of the profile it returns."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from lionsim.errors import LionsimError
from lionsim.network import CollectiveCall, Link, Network, load_network, price
from lionsim.network.fit import Measured, error_summary, fit_profile, link_source, slow_mode
from lionsim.network.traits import SlowMode

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


def test_a_slow_mode_fitted_on_shared_cores_prices_the_host_it_ran_on_not_a_simulated_one(tmp_path):
    """A new user fitted two emulated hosts sharing 2 cores: its slow mode (a wait for a core) went
    into the profile as the link's, and the simulator, whose workers each have a host, priced a2a-1bit
    slower than fp32 all-reduce (0.87x; 1.81x without it). Marked shared_cores, it is kept for a gloo
    run (the host it was measured on) and left out on sim and in estimate, which say so."""
    from lionsim.network.fit import FitConfig
    from lionsim.network.profile import host_slow_line, network_for
    from lionsim.network.toml_out import profile_toml

    data = lab_data(slow=(0.25, 3.5e-3, 65_536), seed=3)
    shared, _ = fit_profile(data, workers=2, prior=PRIOR, backend="gloo", name="lab", description="t",
                            cfg=FitConfig(shared_cores=True))
    own, _ = fit_profile(data, workers=2, prior=PRIOR, backend="gloo", name="lab", description="t")
    assert shared.traits.slow == replace(own.traits.slow, shared_cores=True) and not own.traits.slow.shared_cores
    path = tmp_path / "lab.toml"
    path.write_text(profile_toml(shared, "t"))
    assert "shared_cores = true" in path.read_text()
    call = CollectiveCall("all_to_all", 4096, dtype="uint8")
    on_gloo, on_sim = network_for(path, backend="gloo"), network_for(path)
    assert on_gloo.traits.slow == shared.traits.slow  # the host it ran on pays it
    assert on_sim.traits.slow == SlowMode()
    slow = shared.traits.slow  # the mean a call pays: fast + P x extra (traits.py)
    assert price(call, 2, on_gloo).time_s == pytest.approx(price(call, 2, on_sim).time_s
                                                           + slow.probability * slow.extra_s, rel=1e-9)
    said = host_slow_line(path, "sim")
    assert said.startswith("lab.toml's slow mode (") and "shared a host's cores" in said
    assert host_slow_line(path, "gloo") == "" and host_slow_line("1gbe", "sim") == ""
    other = tmp_path / "own.toml"
    other.write_text(profile_toml(own, "t"))
    assert network_for(other).traits.slow == own.traits.slow and host_slow_line(other, "sim") == ""


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


# What makes a fitted profile: every share in (0, 1], a fast time that never falls with size,
# a bandwidth measured or said to be the prior's.

TEN_GBE = load_network("10gbe")


def ring_ar(n, floor, share, bandwidth=1.1e9, alpha=TEN_GBE.inter.alpha_s):
    """A ring all-reduce at 2 ranks: floor + 2 alpha + n / (B share) (REFERENCE.md 5: 2(p-1) steps of n/p)."""
    return floor + 2 * alpha + n / (bandwidth * share)


def fast_grid(net, op="all_reduce"):
    """The profile's fast time (slow mode left out) on sizes 1 B .. 64 MiB, 8 per octave and the
    regime bounds either side."""
    fast = Network(name="fast", inter=net.inter, traits=replace(net.traits, slow=SlowMode()))
    bounds = [r.max_bytes for r in net.traits.op(op).duplex if math.isfinite(r.max_bytes)]
    sizes = sorted({*np.unique(np.round(2 ** np.arange(0, 26.01, 0.125))), *bounds, *(b + 1 for b in bounds)})
    return [price(CollectiveCall(op, n), 2, fast).time_s for n in sizes]


def assert_physical(net):
    for name, op in net.traits.ops:
        assert all(0 < r.share <= 1 for r in op.duplex), (name, op.duplex)
        times = fast_grid(net, name)
        assert all(b >= a for a, b in zip(times, times[1:])), name


def test_an_alpha_beta_profile_with_a_regime_is_recovered_from_noisy_times():
    """Known truth: floor 100 us at half the link up to 128 KiB, then 250 us at the full link;
    2% noise per iteration. No broadcast: the link is all-reduce's rate, and the profile says so."""
    truth = ((128 * 2**10, 0.5, 100e-6), (math.inf, 1.0, 250e-6))
    sizes = [4**k * 1024 for k in range(8)]  # 1 KiB .. 16 MiB
    data = samples([(n, ring_ar(n, next(f for b, _, f in truth if n <= b), next(s for b, s, _ in truth if n <= b)))
                    for n in sizes], noise=0.02, seed=7)
    net, errors = fit_profile(points("all_reduce", "float32", data), workers=2, prior=TEN_GBE, backend="gloo",
                              name="t", description="t")
    assert net.inter.bandwidth_Bps == pytest.approx(1.1e9, rel=0.03)
    op = net.traits.op("all_reduce")
    assert [r.max_bytes for r in op.duplex] == [128 * 2**10, math.inf]
    assert op.duplex[0].share == pytest.approx(0.5, rel=0.05) and op.duplex[1].share == pytest.approx(1.0, rel=0.03)
    assert op.floor(1024) == pytest.approx(100e-6, rel=0.05) and op.floor(2**24) == pytest.approx(250e-6, rel=0.05)
    assert "measured: all_reduce's rate" in link_source(net) and "no broadcast measured" in link_source(net)
    assert errors.error.abs().max() < 0.03
    assert_physical(net)


def test_the_users_sweep_gives_no_share_above_the_link_nor_a_time_that_falls():
    """Four sizes, the two small ones slower than the line through the two large ones (a busy
    host): a regime fitted on 1 and 16 KiB alone had no byte cost (share 856,900 of the link)
    and a floor above the next regime's, so 64 KiB + 1 B cost less than 64 KiB."""
    fast = {1024: 400e-6, 16384: 400e-6, 262144: ring_ar(262144, 250e-6, 1.0), 4 * 2**20: ring_ar(4 * 2**20, 250e-6, 1.0)}
    data = samples(list(fast.items()), noise=0.01, seed=1)
    net, _ = fit_profile(points("all_reduce", "float32", data), workers=2, prior=TEN_GBE, backend="gloo", name="t",
                         description="t")
    assert_physical(net)


def test_one_large_size_beside_small_ones_sets_the_link():
    """1, 16 and 256 KiB flat at a busy host's 400 us, 4 MiB at 0.5 GB/s: the robust line takes
    the one large size for a disturbed one; the rate is read at that size, and the profile prices it
    (256 KiB moved faster than that rate allows: no share above the link can follow it)."""
    fast = {n: 400e-6 for n in (1024, 16384, 262144)} | {4 * 2**20: ring_ar(4 * 2**20, 400e-6, 1.0, bandwidth=0.5e9)}
    data = samples(list(fast.items()), noise=0.02, seed=4)
    net, errors = fit_profile(points("all_reduce", "float32", data), workers=2, prior=TEN_GBE, backend="gloo",
                              name="t", description="t")
    assert net.inter.bandwidth_Bps == pytest.approx(0.5e9, rel=0.03) and "4 MiB" in link_source(net)
    assert abs(errors.error.iloc[-1]) < 0.05
    assert_physical(net)


@pytest.mark.parametrize("seed", range(12))
def test_noisy_few_sizes_give_a_physical_profile(seed):
    """Times drawn at random (0.2-5 ms, no line through them) on 3-5 sizes: a profile all the same."""
    rng = np.random.default_rng(seed)
    sizes = sorted(rng.choice([2**k for k in range(8, 25)], size=int(rng.integers(3, 6)), replace=False))
    data = [(int(n), tuple(np.exp(rng.uniform(np.log(2e-4), np.log(5e-3))) * (1 + 0.05 * rng.standard_normal(20))))
            for n in sizes]
    net, _ = fit_profile(points("all_reduce", "float32", data) + points("broadcast", "uint8", data), workers=2,
                         prior=TEN_GBE, backend="gloo", name="t", description="t")
    assert_physical(net)


def test_small_sizes_only_keep_the_prior_bandwidth_and_say_so():
    """Up to 8 KiB at ~1 GB/s the bytes are 2% of a 400 us call: no rate can be read from them;
    nor from times that rise by noise alone (a busy host's 1-64 kB calls read as 8 MB/s)."""
    data = samples([(n, ring_ar(n, 400e-6, 1.0)) for n in (1, 64, 1024, 8192)], noise=0.03, seed=2)
    net, _ = fit_profile(points("all_reduce", "float32", data), workers=2, prior=TEN_GBE, backend="gloo", name="t",
                         description="t")
    assert net.inter.bandwidth_Bps == TEN_GBE.inter.bandwidth_Bps * TEN_GBE.inter.efficiency
    assert link_source(net).startswith("bandwidth 10gbe's, not measured") and "8 KiB" in link_source(net)
    assert_physical(net)
    rising = samples([(n, 300e-6 + n / 8e6) for n in (1000, 4000, 16000, 64000)], noise=0.03, seed=2)
    net, _ = fit_profile(points("all_gather", "float32", rising), workers=2, prior=TEN_GBE, backend="gloo", name="t",
                         description="t")
    assert net.inter.bandwidth_Bps == TEN_GBE.inter.bandwidth_Bps and "not measured" in link_source(net)
    assert_physical(net)
