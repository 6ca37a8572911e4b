"""price / comm_time / wire_bytes: auto selection, topology, oversubscription, closed forms."""

from __future__ import annotations

import itertools

import pytest

from lionsim.errors import LionsimError
from lionsim.network import (
    COLLECTIVE_ALGORITHMS,
    CollectiveCall,
    Link,
    Network,
    algorithms_for,
    comm_time,
    load_network,
    price,
    wire_bytes,
)

FLAT = Network(name="flat", inter=Link.from_units(alpha_us=10.0, bandwidth_GBps=1.0, reduce_GBps=2.0))


def two_level(*, intra_GBps: float, inter_GBps: float, intra_us: float = 1.0, inter_us: float = 10.0, g: int = 4) -> Network:
    return Network(
        name="two-level",
        inter=Link.from_units(alpha_us=inter_us, bandwidth_GBps=inter_GBps),
        intra=Link.from_units(alpha_us=intra_us, bandwidth_GBps=intra_GBps),
        workers_per_node=g,
    )


def test_one_worker_costs_nothing():
    for op in ("all_reduce", "all_gather", "ps_push", "broadcast"):
        cost = price(CollectiveCall(op, 10**6), 1, FLAT)
        assert (cost.time_s, cost.sent_bytes, cost.algorithm) == (0.0, 0.0, "none")


def test_explicit_algorithm_matches_its_formula():
    cost = price(CollectiveCall("all_reduce", 10**6), 8, FLAT, "ring")
    assert cost.algorithm == "ring"
    assert cost.time_s == pytest.approx(0.0023275)  # 140us + 1.75ms + 0.4375ms
    assert (cost.latency_s, cost.bandwidth_s, cost.reduce_s) == pytest.approx((140e-6, 1.75e-3, 0.4375e-3))


@pytest.mark.parametrize("op", ["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "ps_push"])
def test_auto_picks_the_cheapest_by_brute_force(op):
    for workers, nbytes in itertools.product((2, 3, 5, 6, 8, 16), (1, 1000, 10**6, 10**9)):
        call = CollectiveCall(op, nbytes)
        explicit = {name: price(call, workers, FLAT, name).time_s for name in algorithms_for(op)}
        best = min(explicit.values())
        auto = price(call, workers, FLAT)
        assert auto.time_s == best
        first_best = next(name for name, t in explicit.items() if t == best)  # ties: registration order
        assert auto.algorithm == first_best


def test_explicit_algorithm_that_lacks_the_op_is_rejected_with_the_valid_list():
    with pytest.raises(LionsimError, match=r"'tree' does not implement all_gather; choose from: auto, ring, bruck"):
        price(CollectiveCall("all_gather", 1000), 4, FLAT, "tree")
    with pytest.raises(LionsimError, match="unknown collective algorithm 'nope'; choose from: ring"):
        price(CollectiveCall("all_gather", 1000), 4, FLAT, "nope")


@pytest.mark.parametrize("workers", [0, -1, 2.5, True])
def test_bad_worker_counts(workers):
    with pytest.raises(LionsimError, match="workers"):
        price(CollectiveCall("all_reduce", 1000), workers, FLAT)


def test_efficiency_and_oversubscription_divide_bandwidth():
    call = CollectiveCall("all_reduce", 10**6)
    # ring, N = 4, alpha 10us, effective 0.5 GB/s: 6 x 10us + 1.5 x 1e6 x 2e-9 = 3.06 ms
    slow_eff = Network(name="e", inter=Link.from_units(alpha_us=10.0, bandwidth_GBps=1.0, efficiency=0.5))
    oversub = Network(name="o", inter=Link.from_units(alpha_us=10.0, bandwidth_GBps=1.0), oversubscription=2.0)
    for net in (slow_eff, oversub):
        assert price(call, 4, net, "ring").time_s == pytest.approx(0.00306)


def test_hierarchical_all_reduce_hand_computed():
    # G = 4, N = 8 (2 nodes); intra 1us / 100 GB/s; inter 10us / 1 GB/s per node, shared by 4.
    net = two_level(intra_GBps=100.0, inter_GBps=1.0)
    cost = price(CollectiveCall("all_reduce", 10**6), 8, net)
    # intra reduce-scatter (ring): 3 x 1us + 0.75e6 x 1e-11 = 10.5us
    # inter all-reduce of 2.5e5 B among 2 nodes at 0.25 GB/s: recursive doubling 10us + 1ms
    # intra all-gather (Bruck): 2 x 1us + 7.5us = 9.5us
    # (the flat ring through all 8 would be 14 x 10us + 1.75 x 1e6 x 1e-9 = 1.89 ms)
    assert cost.algorithm == "hier:ring+recursive_doubling+bruck"
    assert cost.time_s == pytest.approx(10.5e-6 + 1.01e-3 + 9.5e-6)
    assert [(p.op, p.scope, p.ranks, p.nbytes) for p in cost.phases] == [
        ("reduce_scatter", "intra", 4, 1e6),
        ("all_reduce", "inter", 2, 2.5e5),
        ("all_gather", "intra", 4, 1e6),
    ]
    ring = price(CollectiveCall("all_reduce", 10**6), 8, net, "ring")  # a named ring is flat over all 8: 1.89 ms
    assert (ring.algorithm, ring.time_s) == ("ring", pytest.approx(1.89e-3))


def test_flat_ring_wins_when_the_inter_link_is_as_fast_as_intra():
    # G = 2, N = 4; both links 10 GB/s. n = 1e8.
    # hierarchical: 2 x (1us + 5ms) intra + inter RD (1us + 5e7 x 2e-10 = 10ms) = 20.003 ms
    # flat ring, slowest hop 1us / 10 GB/s: 6us + 1.5 x 1e8 x 1e-10 = 15.006 ms
    net = two_level(intra_GBps=10.0, inter_GBps=10.0, inter_us=1.0, g=2)
    cost = price(CollectiveCall("all_reduce", 10**8), 4, net)
    assert cost.algorithm == "ring"
    assert cost.phases[0].scope == "intra+inter"
    assert cost.time_s == pytest.approx(0.015006)
    with_rd = price(CollectiveCall("all_reduce", 10**8), 4, net, "recursive_doubling")  # may not take the flat ring
    assert with_rd.algorithm == "hier:ring+recursive_doubling+ring"
    assert with_rd.time_s == pytest.approx(0.020003)


def test_hierarchical_all_gather_and_all_to_all_hand_computed():
    net = two_level(intra_GBps=100.0, inter_GBps=1.0)
    # all_gather: inter AG of 2.5e5 among 2 at 0.25 GB/s: 10us + 0.5ms; intra Bruck 9.5us
    gather = price(CollectiveCall("all_gather", 10**6), 8, net)
    assert gather.algorithm == "hier:ring+bruck"
    assert gather.time_s == pytest.approx(0.5195e-3)
    # all_to_all (2DH): intra pairwise 3us + 7.5us; inter pairwise of 1e6 among 2 at 0.25 GB/s: 10us + 2ms
    a2a = price(CollectiveCall("all_to_all", 10**6), 8, net)
    assert a2a.algorithm == "hier:pairwise+pairwise"
    assert a2a.time_s == pytest.approx(2.0205e-3)


def test_parameter_server_shares_the_node_link():
    net = Network(
        name="ps",
        inter=Link.from_units(alpha_us=10.0, bandwidth_GBps=1.0),
        intra=Link.from_units(alpha_us=1.0, bandwidth_GBps=100.0),
        workers_per_node=4,
        ps_servers=4,
    )
    # 4 workers push through one node link: max(4, 8/4) = 4 -> 10us + 4ms
    assert price(CollectiveCall("ps_push", 10**6), 8, net).time_s == pytest.approx(0.00401)


def test_workers_in_one_node_use_the_intra_link_only():
    net = two_level(intra_GBps=100.0, inter_GBps=1.0, g=8)
    cost = price(CollectiveCall("all_reduce", 10**6), 4, net, "ring")
    assert cost.time_s == pytest.approx(6e-6 + 1.5e6 * 1e-11)  # 6 x 1us + 1.5 x 1e6 / 100 GB/s
    assert cost.phases[0].scope == "intra"


def test_workers_that_do_not_fill_whole_nodes_are_rejected():
    net = two_level(intra_GBps=100.0, inter_GBps=1.0)
    with pytest.raises(LionsimError) as refused:  # Network.nodes: in the words bench's and estimate's --workers use
        price(CollectiveCall("all_reduce", 1000), 6, net)
    assert str(refused.value) == (f"bad --workers 6: 6 workers do not fill whole nodes of {net.name} (4 a node); "
                                  "accepted: at most 4 (one node) or a multiple of 4")


def test_comm_time_sums_the_calls():
    calls = [CollectiveCall("all_gather", 10**6), CollectiveCall("all_reduce", 10**6)]
    expected = sum(price(c, 8, FLAT, "ring").time_s for c in calls)
    assert comm_time(calls, 8, FLAT, "ring") == pytest.approx(expected)
    assert comm_time(calls, 8, FLAT, "ring") == pytest.approx(0.000945 + 0.0023275)
    assert comm_time([], 8, FLAT) == 0.0


@pytest.mark.parametrize(
    ("op", "workers", "expected"),
    [
        ("all_reduce", 8, 1750.0),  # 2(N-1)/N n
        ("all_reduce", 3, 4000 / 3),
        ("all_reduce", 2, 1000.0),
        ("all_gather", 8, 875.0),  # (N-1)/N n
        ("reduce_scatter", 6, 5000 / 6),
        ("all_to_all", 8, 875.0),
        ("broadcast", 8, 1000.0),
        ("reduce", 8, 1000.0),
        ("ps_push", 8, 1000.0),
        ("ps_pull", 8, 0.0),
        ("all_reduce", 1, 0.0),
        ("ps_push", 1, 0.0),
    ],
)
def test_wire_bytes_closed_forms(op, workers, expected):
    assert wire_bytes(CollectiveCall(op, 1000), workers) == pytest.approx(expected)


def test_wire_bytes_of_the_sign_transports_in_reference():
    n, workers = 8_000_000, 16  # parameters
    # packed 1-bit all-gather: (N-1)/N * N * n/8 (grows with N)
    assert wire_bytes(CollectiveCall("all_gather", workers * n // 8), workers) == pytest.approx((workers - 1) * n / 8)
    # int8 all-reduce: 2(N-1)/N n
    assert wire_bytes(CollectiveCall("all_reduce", n), workers) == pytest.approx(2 * 15 / 16 * n)


def _sent_closed_form(algorithm: str, op: str, n: int, p: int) -> float:
    """Bytes the busiest worker sends, from each algorithm's paper (Thakur, Rabenseifner & Gropp
    2005; Sanders et al. 2009; REFERENCE.md 5), written out here; p' = the largest power of 2 <= p."""
    p2 = 1 << (p.bit_length() - 1)
    folded = 1 if p2 != p else 0
    forms = {
        ("ring", "all_reduce"): 2 * (p - 1) / p * n, ("ring", "all_gather"): (p - 1) / p * n,
        ("ring", "reduce_scatter"): (p - 1) / p * n, ("ring", "broadcast"): n, ("ring", "reduce"): n,
        ("recursive_doubling", "all_reduce"): ((p2.bit_length() - 1) + folded) * n,
        ("rabenseifner", "all_reduce"): (2 * (p2 - 1) / p2 + folded) * n,
        ("tree", "all_reduce"): 2 * (0.5 if p == 2 else 1.0) * n,
        ("bruck", "all_gather"): (p - 1) / p * n, ("pairwise", "all_to_all"): (p - 1) / p * n,
        ("binomial", "broadcast"): (p - 1).bit_length() * n, ("binomial", "reduce"): n,
        ("param_server", "ps_push"): n, ("param_server", "ps_pull"): 0.0,
    }
    return forms[(algorithm, op)]


@pytest.mark.parametrize("workers", [2, 3, 4, 6, 8, 16])
def test_every_algorithms_sent_bytes_equal_its_closed_form(workers):
    """Not only ring: every (algorithm, op) lionsim implements sends what its paper says."""
    checked = 0
    for name, algorithm in COLLECTIVE_ALGORITHMS.items():
        for op in algorithm.ops:
            call = CollectiveCall(op, 12345)
            assert price(call, workers, FLAT, name).sent_bytes == pytest.approx(
                _sent_closed_form(name, op, 12345, workers)), (name, op, workers)
            checked += 1
    assert checked >= 14


def test_presets_price_end_to_end():
    # 10gbe ring all-reduce of 1 GB among 8: 14 x 25us + 1.75e9 / 1.17e9 s
    cost = price(CollectiveCall("all_reduce", 10**9), 8, load_network("10gbe"), "ring")
    assert cost.time_s == pytest.approx(14 * 25e-6 + 1.75e9 / 1.17e9)
    assert len(COLLECTIVE_ALGORITHMS) >= 8
