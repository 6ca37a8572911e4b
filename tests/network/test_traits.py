"""A collective library's traits on top of the link (lionsim.network.traits): the model's
structure against closed forms written out here (per-call floor, duplex share, host cap,
per-dtype reduction rate, the slow mode's mean and spread), the profile file's [traits], and
which traits a run gets. Never a timing."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from lionsim.errors import LionsimError
from lionsim.network import (IDEAL, NETWORKS, TRAITS, CollectiveCall, Link, Network, OpTraits, SlowMode, Spread,
                             Traits, load_network, network_for, network_from_dict, price)
from lionsim.network.toml_out import profile_toml
from lionsim.network.traits import sum_quantile

ALPHA, GBPS = 40e-6, 0.12
LINK = Link.from_units(alpha_us=ALPHA * 1e6, bandwidth_GBps=GBPS)


def net(traits: Traits) -> Network:
    return Network(name="lab", inter=LINK, traits=traits)


def ring_all_reduce(n, p, alpha, bandwidth, gamma=0.0):
    """2(p-1) alpha + 2(p-1)/p n / bandwidth + (p-1)/p n gamma (REFERENCE.md 5)."""
    return 2 * (p - 1) * alpha + 2 * (p - 1) / p * n / bandwidth + (p - 1) / p * n * gamma


def pairwise_all_to_all(n, p, alpha, bandwidth):
    return (p - 1) * alpha + (p - 1) / p * n / bandwidth


def test_ideal_traits_leave_every_price_unchanged():
    for _, preset in NETWORKS.items():  # flat presets: the ideal library; GPU clusters: NCCL's model
        if preset.workers_per_node == 1:
            assert preset.traits == IDEAL and preset.traits.ideal and "traits" not in preset.to_dict()
        else:
            assert preset.traits.model == "nccl" and preset.to_dict()["traits"]["model"] == "nccl"
    plain = Network(name="lab", inter=LINK)
    for op, n, p in itertools.product(("all_reduce", "all_gather", "all_to_all", "broadcast", "ps_push"),
                                      (1, 10_000, 10**7), (2, 5, 16)):
        cost = price(CollectiveCall(op, n), p, plain)
        assert cost.time_s == cost.modes.fast_s and cost.modes.p == 0 and cost.floor_s == 0


def test_floor_is_added_once_per_call():
    traits = Traits(name="t", ops=(("all_to_all", OpTraits(floor_s=300e-6)),))
    for n, p in itertools.product((8, 65_536, 4 * 2**20), (2, 3, 8)):
        got = price(CollectiveCall("all_to_all", n), p, net(traits), "pairwise").time_s
        assert got == pytest.approx(300e-6 + pairwise_all_to_all(n, p, ALPHA, GBPS * 1e9), rel=1e-12)
    # an op without an entry pays no floor
    plain = price(CollectiveCall("all_gather", 10_000), 4, net(traits), "ring").time_s
    assert plain == pytest.approx(3 * ALPHA + 0.75 * 10_000 / (GBPS * 1e9), rel=1e-12)


def test_duplex_share_divides_the_bandwidth_by_size_regime():
    half_above = OpTraits(duplex=((2 * 2**20, 1.0), (math.inf, 0.5)))
    traits = Traits(name="t", ops=(("all_gather", half_above),))
    for n, share in ((2**20, 1.0), (2 * 2**20, 1.0), (2 * 2**20 + 1, 0.5), (64 * 2**20, 0.5)):
        got = price(CollectiveCall("all_gather", n), 2, net(traits), "ring").time_s
        assert got == pytest.approx(ALPHA + 0.5 * n / (GBPS * 1e9 * share), rel=1e-12)


def test_host_cap_binds_only_above_it():
    fast = Link.from_units(alpha_us=0.0, bandwidth_GBps=10.0)
    for cap, expected_bw in ((1.0, 1.0), (20.0, 10.0)):
        n = Network(name="fast", inter=fast, traits=Traits(name="t", host_GBps=cap))
        got = price(CollectiveCall("all_reduce", 10**8), 2, n, "ring").time_s
        assert got == pytest.approx(ring_all_reduce(10**8, 2, 0.0, expected_bw * 1e9), rel=1e-12)
    shared = Network(name="s", inter=fast, traits=Traits(name="t", host_GBps=1.0,
                                                         ops=(("all_reduce", OpTraits(duplex=((math.inf, 0.05),))),)))
    assert price(CollectiveCall("all_reduce", 10**8), 2, shared, "ring").time_s == pytest.approx(
        ring_all_reduce(10**8, 2, 0.0, 0.5e9), rel=1e-12)  # 10 GB/s x 0.05 is below the cap


def test_reduce_rate_is_per_dtype():
    traits = Traits(name="t", reduce_GBps=(("int8", 0.5),))
    for dtype, gamma in (("int8", 1 / 0.5e9), ("float32", 0.0)):
        got = price(CollectiveCall("all_reduce", 10**6, dtype=dtype), 4, net(traits), "ring").time_s
        assert got == pytest.approx(ring_all_reduce(10**6, 4, ALPHA, GBPS * 1e9, gamma), rel=1e-12)
    # gathers combine nothing: the rate does not touch them
    got = price(CollectiveCall("all_gather", 10**6, dtype="int8"), 4, net(traits), "ring").time_s
    assert got == pytest.approx(3 * ALPHA + 0.75e6 / (GBPS * 1e9), rel=1e-12)


def test_slow_mode_mean_and_quantiles():
    slow = SlowMode(probability=0.25, extra_s=3.5e-3, max_bytes=65_536)
    traits = Traits(name="t", slow=slow)
    small = price(CollectiveCall("all_reduce", 1024), 2, net(traits), "ring")
    fast = ring_all_reduce(1024, 2, ALPHA, GBPS * 1e9)
    assert small.modes.fast_s == pytest.approx(fast) and small.time_s == pytest.approx(fast + 0.25 * 3.5e-3)
    assert small.modes.quantile(0.1) == pytest.approx(fast) and small.modes.quantile(0.5) == pytest.approx(fast)
    assert small.modes.quantile(0.9) == pytest.approx(fast + 3.5e-3)  # 25% slow: p90 is in the slow mode
    large = price(CollectiveCall("all_reduce", 65_537), 2, net(traits), "ring")
    assert large.time_s == large.modes.fast_s and large.modes.p == 0


@pytest.mark.parametrize("probs", [(0.25,), (0.05, 0.3, 0.6), (0.1, 0.1, 0.1, 0.1, 0.1)])
def test_sum_quantile_equals_a_large_sample(probs):
    calls = [Spread(1e-3 * (i + 1), 2e-3 + 1e-4 * i, p) for i, p in enumerate(probs)]
    rng = np.random.default_rng(0)
    draws = sum(c.fast_s + c.extra_s * (rng.random(200_000) < c.p) for c in calls)
    for q in (0.1, 0.5, 0.9):
        exact = sum_quantile(calls, q)
        # the sample's quantile sits on one of the same discrete totals, up to sampling at an edge
        assert exact == pytest.approx(np.quantile(draws, q), abs=1e-4 + 1e-12) or abs(
            np.mean(draws <= exact) - q) < 0.01
    assert sum_quantile(calls, 0.999999) == pytest.approx(sum(c.fast_s + c.extra_s for c in calls))


def test_traits_round_trip_through_a_profile(tmp_path):
    traits = TRAITS.get("gloo")
    original = Network(name="lab", inter=LINK, traits=traits, measured={"backend": "gloo", "hosts": 2})
    path = tmp_path / "lab.toml"
    path.write_text(profile_toml(original, "comment"))
    back = load_network(str(path))
    assert back.traits == traits and back.measured == {"backend": "gloo", "hosts": 2}
    for op, n, dtype in itertools.product(("all_reduce", "all_gather", "all_to_all", "ps_push"), (1, 70_000, 5 * 2**20),
                                          ("float32", "int8")):
        call = CollectiveCall(op, n, dtype=dtype)
        assert price(call, 2, back).time_s == price(call, 2, original).time_s


def test_a_profile_may_name_built_in_traits():
    n = network_from_dict({"inter": {"alpha_us": 50.0, "bandwidth_GBps": 0.117}, "traits": "gloo"}, source="t",
                          default_name="mine")
    assert n.traits == TRAITS.get("gloo")


@pytest.mark.parametrize(("traits", "message"), [
    ("gpu", "unknown traits 'gpu'"),
    ({}, "[traits] is empty; accepted: a built-in name"),  # it priced as ideal under the profile's name
    ({"backend": "mpi"}, "'traits.backend' = 'mpi'"),
    ({"ops": {"allreduce": {}}}, "unknown op 'traits.ops.allreduce'"),
    ({"ops": {"all_reduce": {"duplex": [{"share": 1.0, "max_bytes": 5}]}}}, "the last none"),
    ({"ops": {"all_reduce": {"duplex": [{"share": 0.0}]}}}, "share"),
    ({"ops": {"all_reduce": {"floor_us": -1.0}}}, "floor_us"),
    ({"slow": {"probability": 1.5, "extra_us": 1.0, "max_bytes": 10}}, "probability"),
    ({"reduce_GBps": {"int4": 1.0}}, "unknown key 'traits.reduce_GBps.int4'"),
    ({"host_GBps": 0}, "host_GBps"),
])
def test_bad_traits_are_one_clear_error(traits, message):
    with pytest.raises(LionsimError, match=message.replace("(", r"\(").replace("[", r"\[")):
        network_from_dict({"inter": {"alpha_us": 1.0, "bandwidth_GBps": 1.0}, "traits": traits}, source="bad.toml",
                          default_name="bad")


def test_profiles_of_the_old_regime_format_say_how_to_refit():
    with pytest.raises(LionsimError, match="refit it: lionsim comm --backend gloo --fit"):
        network_from_dict({"inter": {"alpha_us": 1.0, "bandwidth_GBps": 1.0},
                           "collectives": {"all_reduce": {"regimes": [{"alpha_us": 1.0, "bandwidth_GBps": 1.0}]}}},
                          source="old.toml", default_name="old")


def test_which_traits_a_run_gets(tmp_path):
    assert network_for("1gbe").traits == IDEAL
    assert network_for("1gbe", backend="gloo").traits == TRAITS.get("gloo")
    assert network_for("1gbe", backend="nccl").traits == TRAITS.get("nccl")
    assert network_for("1gbe", traits="gloo").traits == TRAITS.get("gloo")
    fitted = Network(name="fit", inter=LINK, traits=Traits(name="fit", backend="gloo", host_GBps=1.0))
    path = tmp_path / "fit.toml"
    path.write_text(profile_toml(fitted))
    assert network_for(str(path), backend="gloo").traits == fitted.traits  # the profile's own win
    assert network_for(str(path)).traits == fitted.traits  # sim models the cluster it was fitted on
    with pytest.raises(LionsimError, match="carries traits measured on gloo, but this run uses nccl"):
        network_for(str(path), backend="nccl")
