"""Every collective formula against hand-computed numbers, plus the pipeline optimum by brute force.

Link for the hand computations: alpha = 10 us, bandwidth 1 GB/s (beta = 1e-9 s/B),
reduce 2 GB/s (gamma = 0.5e-9 s/B); n = 1e6 bytes, so n beta = 1 ms and n gamma = 0.5 ms.
"""

from __future__ import annotations

import math

import pytest

from lionsim.network import COLLECTIVE_ALGORITHMS, Group, Link
from lionsim.network.collectives.base import best_chunks, ceil_log2, fold

LINK = Link.from_units(alpha_us=10.0, bandwidth_GBps=1.0, reduce_GBps=2.0)
N_BYTES = 1e6


def cost(algorithm: str, op: str, ranks: int, nbytes: float = N_BYTES, **group):
    return COLLECTIVE_ALGORITHMS.get(algorithm).cost(op, nbytes, Group(ranks=ranks, link=LINK, **group))


# (algorithm, op, ranks, expected seconds), each worked out by hand in the comment.
HAND = [
    # ring all-reduce: 2(p-1) a + 2(p-1)/p n b + (p-1)/p n g
    ("ring", "all_reduce", 2, 0.00127),  # 20us + 1ms + 0.25ms
    ("ring", "all_reduce", 3, 0.00170666667),  # 40us + 4/3 ms + 1/3 ms
    ("ring", "all_reduce", 6, 0.00218333333),  # 100us + 5/3 ms + 5/12 ms
    ("ring", "all_reduce", 8, 0.0023275),  # 140us + 1.75ms + 0.4375ms
    ("ring", "reduce_scatter", 8, 0.0013825),  # 70us + 0.875ms + 0.4375ms
    ("ring", "all_gather", 8, 0.000945),  # 70us + 0.875ms
    ("ring", "all_gather", 3, 0.000686666667),  # 20us + 2/3 ms
    # recursive doubling: log2 p' + 2 messages of n, log2 p' + 1 reductions (fold when p is not 2^k)
    ("recursive_doubling", "all_reduce", 2, 0.00151),  # 1 x (10us + 1ms + 0.5ms)
    ("recursive_doubling", "all_reduce", 8, 0.00453),  # 3 x 1.51ms
    ("recursive_doubling", "all_reduce", 3, 0.00403),  # p'=2: 3 x (10us + 1ms) + 2 x 0.5ms
    ("recursive_doubling", "all_reduce", 6, 0.00554),  # p'=4: 4 x (10us + 1ms) + 3 x 0.5ms
    # Rabenseifner: 2 log2 p' a + 2(p'-1)/p' n b + (p'-1)/p' n g, plus fold 2a + 2 n b + n g
    ("rabenseifner", "all_reduce", 2, 0.00127),  # 20us + 1ms + 0.25ms (= ring)
    ("rabenseifner", "all_reduce", 8, 0.0022475),  # 60us + 1.75ms + 0.4375ms
    ("rabenseifner", "all_reduce", 3, 0.00379),  # 40us + (1 + 2) ms + (0.25 + 0.5) ms
    ("rabenseifner", "all_reduce", 6, 0.004435),  # 60us + (1.5 + 2) ms + (0.375 + 0.5) ms
    # Bruck all-gather: ceil(log2 p) a + (p-1)/p n b
    ("bruck", "all_gather", 8, 0.000905),  # 30us + 0.875ms
    ("bruck", "all_gather", 6, 0.000863333333),  # 30us + 5/6 ms
    ("bruck", "all_gather", 3, 0.000686666667),  # 20us + 2/3 ms
    # pairwise all-to-all: (p-1) a + (p-1)/p n b
    ("pairwise", "all_to_all", 8, 0.000945),
    ("pairwise", "all_to_all", 3, 0.000686666667),
    # binomial: ceil(log2 p) (a + n b [+ n g])
    ("binomial", "broadcast", 2, 0.00101),
    ("binomial", "broadcast", 3, 0.00202),
    ("binomial", "broadcast", 6, 0.00303),
    ("binomial", "broadcast", 8, 0.00303),
    ("binomial", "reduce", 3, 0.00302),
    ("binomial", "reduce", 8, 0.00453),
    # chain broadcast, p = 8: k* = sqrt(6 x 1ms / 10us) = 24.5; k = 24 and 25 both give 30 x 51.67us = 31 x 50us
    ("ring", "broadcast", 8, 0.00155),
    ("ring", "broadcast", 2, 0.00101),  # one hop, one chunk
    # chain reduce, p = 8: k* = sqrt(6 x 1.5ms / 10us) = 30: 36 x (10us + 50us)
    ("ring", "reduce", 8, 0.00216),
    # double binary tree, p = 8: h = 3, step 20us + 2.5ms/k; k* = 15.8; k = 16: 18 x 176.25us
    ("tree", "all_reduce", 8, 0.0031725),
    # p = 2: h = 1, s = 1/2: one step 20us + 0.5 x 2.5ms (= ring)
    ("tree", "all_reduce", 2, 0.00127),
]


@pytest.mark.parametrize(("algorithm", "op", "ranks", "expected"), HAND)
def test_formula_against_hand_computation(algorithm, op, ranks, expected):
    assert cost(algorithm, op, ranks).time_s == pytest.approx(expected, rel=1e-8)


@pytest.mark.parametrize(("algorithm", "op"), [(a, op) for a, algo in COLLECTIVE_ALGORITHMS.items() for op in algo.ops])
def test_one_rank_costs_nothing(algorithm, op):
    terms = cost(algorithm, op, 1)
    assert (terms.time_s, terms.sent_bytes) == (0.0, 0.0)


def test_parameter_server_hand_computed():
    # alpha + max(c, p/k) n beta each way
    assert cost("param_server", "ps_push", 8, servers=1).time_s == pytest.approx(0.00801)
    assert cost("param_server", "ps_push", 8, servers=4).time_s == pytest.approx(0.00201)
    assert cost("param_server", "ps_pull", 8, servers=16).time_s == pytest.approx(0.00101)  # max(1, 1/2)
    assert cost("param_server", "ps_pull", 3, servers=2).time_s == pytest.approx(0.00151)
    assert cost("param_server", "ps_push", 8, servers=4, ranks_per_link=4).time_s == pytest.approx(0.00401)
    assert cost("param_server", "ps_push", 8, servers=4).sent_bytes == N_BYTES
    assert cost("param_server", "ps_pull", 8, servers=4).sent_bytes == 0.0


def test_sent_bytes_closed_forms():
    assert cost("ring", "all_reduce", 8).sent_bytes == pytest.approx(1.75e6)
    assert cost("rabenseifner", "all_reduce", 8).sent_bytes == pytest.approx(1.75e6)
    assert cost("rabenseifner", "all_reduce", 6).sent_bytes == pytest.approx(2.5e6)  # 1.5n + n back
    assert cost("recursive_doubling", "all_reduce", 6).sent_bytes == pytest.approx(3e6)  # 2 rounds + send back
    assert cost("binomial", "broadcast", 8).sent_bytes == pytest.approx(3e6)  # the root sends 3 times
    assert cost("binomial", "reduce", 8).sent_bytes == pytest.approx(1e6)
    assert cost("bruck", "all_gather", 8).sent_bytes == pytest.approx(0.875e6)
    assert cost("tree", "all_reduce", 8).sent_bytes == pytest.approx(2e6)


def test_terms_split_latency_bandwidth_reduce():
    terms = cost("ring", "all_reduce", 8)
    assert terms.latency_s == pytest.approx(140e-6)
    assert terms.bandwidth_s == pytest.approx(1.75e-3)
    assert terms.reduce_s == pytest.approx(0.4375e-3)


@pytest.mark.parametrize("stages", [1, 2, 3, 7, 12])
@pytest.mark.parametrize(("alpha", "transfer", "nbytes"), [(1e-5, 1e-3, 1e6), (5e-5, 2e-6, 300), (0.0, 1e-4, 50), (1e-6, 0.0, 0)])
def test_best_chunks_is_the_brute_force_optimum(stages, alpha, transfer, nbytes):
    def pipeline(k):
        return (stages + k - 1) * (alpha + transfer / k)

    k_max = max(1, int(nbytes))
    brute = min(pipeline(k) for k in range(1, min(k_max, 5000) + 1))
    assert pipeline(best_chunks(stages, alpha, transfer, nbytes)) == pytest.approx(brute, rel=1e-12)


def test_best_chunks_of_an_infinite_transfer_is_the_finest_not_a_crash():
    """An inf transfer (a link of 1e-308 GB/s) made k* inf and math.floor raise OverflowError; the
    pipeline then gains from every chunk it can cut (k_max), and inf over inf (nan) takes one."""
    assert best_chunks(4, 1e-6, math.inf, 1e6) == 1_000_000
    assert best_chunks(4, math.inf, math.inf, 1e6) == 1
    assert best_chunks(4, 1e-6, 1.0, 10) == 10  # k* = 1,732, finite but past k_max: clamped as before


def test_helpers():
    assert [ceil_log2(p) for p in (1, 2, 3, 4, 5, 8, 9)] == [0, 1, 2, 2, 3, 3, 4]
    assert [fold(p) for p in (1, 2, 3, 6, 8, 12)] == [(1, 0), (2, 0), (2, 1), (4, 2), (8, 0), (8, 4)]


def test_every_op_has_an_algorithm():
    from lionsim.network import OPS, algorithms_for

    for op in OPS:
        assert algorithms_for(op), op
