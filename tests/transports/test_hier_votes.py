"""Hierarchical votes on the simulator: node groups, hier-exact against the flat vote, hier-1bit
against a plain vote of votes, bytes per level against closed forms."""

import itertools

import numpy as np
import pytest
import torch

from lionsim.aggregators import MajorityVote, MeanVote, TieBreak
from lionsim.backends import SimComm
from lionsim.backends.nodes import SimGroupComm
from lionsim.backends.sim import sim_nodes
from lionsim.errors import LionsimError
from lionsim.network import CollectiveCall, Link, Network, price
from lionsim.runs import parse_runs
from lionsim.transports import TRANSPORTS, Payload, PayloadSpec
from lionsim.transports.abstain import FLAG_CALL
from lionsim.transports.base import bits_on, plan_on
from tests.reference.impl import tie_coin, vote

HIER_EXACT, HIER_1BIT, INT8 = (TRANSPORTS.get(n)() for n in ("hier-exact", "hier-1bit", "int8-allreduce"))


@pytest.fixture(autouse=True)
def one_thread():
    """Small tensors: one thread (two threads on a busy 2-core machine ran 5-10x slower)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# --- node groups: index groups against plain loops ---------------------------------------

@pytest.mark.parametrize("nodes,size", [(1, 4), (3, 1), (3, 2), (2, 4)])
def test_sim_groups_equal_plain_loops(nodes, size):
    W = nodes * size
    x = torch.randint(-5, 6, (W, 3), generator=torch.Generator().manual_seed(W))
    members = {False: [[k * size + j for j in range(size)] for k in range(nodes)],  # intra: a node's slots
               True: [[k * size + j for k in range(nodes)] for j in range(size)]}  # inter: a slot's nodes
    for across, groups in members.items():
        comm = SimGroupComm(nodes, size, across=across)
        group_of = {i: grp for grp in groups for i in grp}
        total = comm.all_reduce(x)
        gathered = comm.all_gather(x)
        chunks = torch.randint(0, 9, (W, len(groups[0]), 2), generator=torch.Generator().manual_seed(1))
        swapped = comm.all_to_all(chunks)
        for i in range(W):
            grp = group_of[i]
            assert torch.equal(total[i], sum(x[p] for p in grp))
            assert torch.equal(gathered[i], torch.stack([x[p] for p in grp]))
            me = grp.index(i)
            assert torch.equal(swapped[i], torch.stack([chunks[p][me] for p in grp]))


def test_node_layout_must_fill_whole_nodes():
    assert sim_nodes(6, 8).size == 6 and sim_nodes(6, 8).count == 1  # fewer workers than a node: one node
    with pytest.raises(LionsimError, match="do not fill whole nodes"):
        sim_nodes(12, 8)


# --- hier-exact equals the flat vote --------------------------------------------------------

def flat_reference(votes: np.ndarray, rule: str, tie: str, step: int, seed: int) -> torch.Tensor:
    """The flat vote, vectorized over coordinates: the sum, then the rule (coins per coordinate)."""
    n_workers, n = votes.shape
    s = votes.sum(0)
    if rule == "avg":
        return torch.tensor(s / n_workers, dtype=torch.float32)
    out = np.sign(s).astype(np.float32)
    for j in np.flatnonzero((s == 0) & (votes != 0).any(0)):  # ties among votes cast
        out[j] = 0.0 if tie == "zero" else (1.0 if step % 2 else -1.0) if tie == "alternate" else tie_coin(seed, step, j)
    return torch.from_numpy(out)


def corner_votes(workers: int, n: int, seed: int, abstain: bool) -> torch.Tensor:
    """Random votes with forced exact ties; with abstain, coordinates nobody votes on, a lone voter
    and ties among a few voters (so odd N ties too)."""
    g = torch.Generator().manual_seed(seed)
    if abstain:
        votes = torch.randint(-1, 2, (workers, n), generator=g)
        votes[:, 0] = 0
        votes[:, 1] = 0
        votes[workers - 1, 1] = 1
        votes[:, 2] = 0
        votes[0, 2], votes[workers - 1, 2] = 1, -1
    else:
        votes = torch.randint(0, 2, (workers, n), generator=g) * 2 - 1
    half = workers // 2
    if workers % 2 == 0:
        votes[:half, 3], votes[half:, 3] = 1, -1
        votes[::2, 4], votes[1::2, 4] = 1, -1  # a tie that splits every node too
    return votes.to(torch.int8)


RULES = [("mavo", "zero"), ("mavo", "alternate"), ("mavo", "random"), ("avg", "zero")]


def rule_of(rule: str, tie: str, step: int, seed: int):
    return MeanVote() if rule == "avg" else MajorityVote(TieBreak(tie, seed=seed, step=step))


CASES = list(itertools.product(RULES, (False, True)))
FULL = {2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 24, 32, 64, 128, 256}
"""Worker counts that get every rule x abstention case; every other N gets one, in turn."""


@pytest.mark.parametrize("g", [2, 4, 8])
def test_hier_exact_equals_the_flat_vote_for_every_n_to_256(g):
    """N = 2..256 (whole nodes of g, or a part of one), forced ties, abstentions, every tie rule."""
    n = 37
    for workers in [w for w in range(2, 257) if w < g or w % g == 0]:
        cases = CASES if workers in FULL else [CASES[(workers // g) % len(CASES)]]
        for (rule, tie), abstain in cases:
            step = workers % 4 + 1
            votes = corner_votes(workers, n, seed=workers * 7 + g, abstain=abstain)
            spec = PayloadSpec(kind="votes", numel=n, rule=rule_of(rule, tie, step, seed=11))
            payload = Payload(spec, votes.clone())
            out = HIER_EXACT.aggregate(payload, SimComm(workers, g))
            expected = flat_reference(votes.numpy().astype(np.int64), rule, tie, step, seed=11)
            assert payload.spec.abstain == abstain
            assert torch.equal(out, expected.expand(workers, n)), (workers, g, rule, tie, abstain)


@pytest.mark.parametrize("workers,g", [(16, 8), (64, 8), (24, 4), (10, 2)])
def test_hier_exact_equals_every_flat_transport(workers, g):
    n = 203
    for (rule, tie), abstain in itertools.product(RULES, (False, True)):
        votes = corner_votes(workers, n, seed=workers, abstain=abstain)
        spec = PayloadSpec(kind="votes", numel=n, rule=rule_of(rule, tie, 3, seed=2))
        hier = HIER_EXACT.aggregate(Payload(spec, votes.clone()), SimComm(workers, g))
        for name, cls in TRANSPORTS.items():
            if "votes" in cls.carries and cls.exact and not cls.hierarchical:
                flat = cls().aggregate(Payload(spec, votes.clone()), SimComm(workers))
                assert torch.equal(hier, flat), (name, rule, tie, abstain)


# --- hier-1bit against a plain vote of votes -------------------------------------------------

def vote_of_votes(votes: np.ndarray, g: int, tie: str, step: int, seed: int) -> torch.Tensor:
    """Each node's majority (plain `vote`, ties by the rule), then the majority of the node votes."""
    n_workers, n = votes.shape
    out = []
    for j in range(n):
        nodes = [vote([float(v) for v in votes[k:k + g, j]], "mavo", tie, step, seed, j) for k in range(0, n_workers, g)]
        out.append(vote(nodes, "mavo", tie, step, seed, j))
    return torch.tensor(out)


@pytest.mark.parametrize("workers,g", [(4, 2), (6, 2), (8, 4), (12, 4), (16, 8), (24, 8), (9, 3), (8, 8), (4, 8)])
@pytest.mark.parametrize("tie", ["zero", "alternate", "random"])
def test_hier_1bit_equals_a_plain_vote_of_votes(workers, g, tie):
    n = 45
    for abstain in (False, True):
        votes = corner_votes(workers, n, seed=workers + g, abstain=abstain)
        spec = PayloadSpec(kind="votes", numel=n, rule=MajorityVote(TieBreak(tie, seed=4, step=3)))
        out = HIER_1BIT.aggregate(Payload(spec, votes.clone()), SimComm(workers, g))
        expected = vote_of_votes(votes.numpy(), min(g, workers), tie, step=3, seed=4)
        assert torch.equal(out, expected.expand(workers, n)), (workers, g, tie, abstain)


def test_hier_1bit_differs_from_the_flat_vote_where_node_majorities_do():
    """Node 0 votes +1 8-0, nodes 1 and 2 vote -1 5-3: the flat sum is +4, the nodes' vote -1."""
    column = [1] * 8 + [-1] * 5 + [1] * 3 + [-1] * 5 + [1] * 3
    votes = torch.tensor(column, dtype=torch.int8)[:, None].repeat(1, 9)
    spec = PayloadSpec(kind="votes", numel=9, rule=MajorityVote())
    assert (INT8.aggregate(Payload(spec, votes.clone()), SimComm(24)) == 1).all()
    assert (HIER_1BIT.aggregate(Payload(spec, votes.clone()), SimComm(24, 8)) == -1).all()


def test_hier_1bit_is_a_majority_vote_only():
    with pytest.raises(LionsimError, match="hier-1bit is a majority vote"):
        HIER_1BIT.aggregate(Payload(PayloadSpec(kind="votes", numel=3, rule=MeanVote()), torch.ones(4, 3, dtype=torch.int8)),
                            SimComm(4, 2))
    with pytest.raises(LionsimError, match="valid transports: .*hier-exact"):
        parse_runs(["dlion-avg@hier-1bit"])
    assert [r.label for r in parse_runs(["dlion-mavo@hier-1bit", "dlion-avg@hier-exact"])] == [
        "dlion-mavo@hier-1bit", "dlion-avg@hier-exact"]


# --- bytes per level ------------------------------------------------------------------------

NET = Network(name="two-level", inter=Link.from_units(alpha_us=20.0, bandwidth_GBps=1.0),
              intra=Link.from_units(alpha_us=1.0, bandwidth_GBps=100.0), workers_per_node=8)


def level_bytes(transport, spec, workers: int, network: Network = NET) -> tuple[float, float]:
    """(intra, inter) bytes one worker sends, by the priced phases."""
    return call_bytes(plan_on(transport, spec, workers, network.workers_per_node), workers, network)


def call_bytes(calls, workers: int, network: Network = NET) -> tuple[float, float]:
    intra = inter = 0.0
    for call in calls:
        for phase in price(call, workers, network).phases:
            if phase.scope == "intra":
                intra += phase.terms.sent_bytes
            else:
                inter += phase.terms.sent_bytes
    return intra, inter


@pytest.mark.parametrize("workers", [16, 64, 512])
@pytest.mark.parametrize("tie,abstain", [("zero", False), ("alternate", False), ("zero", True)])
def test_bytes_per_level_match_closed_forms(workers, tie, abstain):
    g, m = 8, workers // 8
    n = 8 * workers * 1000  # whole bytes in every block
    rule = MajorityVote(TieBreak(tie))
    spec = PayloadSpec(kind="votes", numel=n, rule=rule, abstain=abstain)
    down = 1 if tie != "zero" and not abstain else 2  # even N: sign(0) = 0 needs a third level
    planes = 2 if abstain else 1
    exact_bits = 5 if abstain else 4  # ceil(log2(2g + 1)) with abstentions, ceil(log2(g + 1)) without
    node_bits = 2 if abstain or tie == "zero" else 1  # a node of 8 can tie: 3 levels under sign(0) = 0
    top_down = 2 if abstain or tie == "zero" else (1 if m % 2 or tie != "zero" else 2)
    flag_intra, flag_inter = call_bytes([FLAG_CALL], workers)  # the 1-byte abstention flag, every step
    for transport, up_bits, down_bits in ((HIER_EXACT, exact_bits, down), (HIER_1BIT, node_bits, top_down)):
        intra, inter = level_bytes(transport, spec, workers)
        # intra: all-to-all of the votes (g-1)/g n/8 per plane, all-gather of the result (g-1)/g n d/8
        assert intra - flag_intra == pytest.approx((g - 1) / g * n / 8 * planes + (g - 1) / g * n * down_bits / 8)
        # inter, each worker its 1/g share: all-to-all (M-1)/M n b/(8g), all-gather (M-1)/M n d/(8g)
        assert inter - flag_inter == pytest.approx((m - 1) / m * n / g * (up_bits + down_bits) / 8)
    assert transport.bits_per_param(spec, workers, workers_per_node=g) == (planes + node_bits / g, float(top_down))


def test_a_flat_network_makes_hier_exact_a2a_1bit():
    """g = 1: no intra phase; the node sums are single votes in 1 bit: a2a-1bit's calls and bytes."""
    flat = Network(name="flat", inter=Link.from_units(alpha_us=20.0, bandwidth_GBps=1.0))
    spec = PayloadSpec(kind="votes", numel=8 * 16 * 50, rule=MajorityVote())
    a2a = TRANSPORTS.get("a2a-1bit")()
    hier = level_bytes(HIER_EXACT, spec, 16, flat)
    assert hier == level_bytes(a2a, spec, 16, flat) and hier[0] == 0
    assert bits_on(HIER_EXACT, spec, 16) == a2a.bits_per_param(spec, 16)


def test_scoped_calls_price_on_their_own_link():
    """An intra call among g workers on the intra link; an inter call among M nodes, its g copies
    sharing the node's link (each sees 1/g of it)."""
    n, workers, g, m = 8 * 10**6, 32, 8, 4
    intra = price(CollectiveCall("all_gather", n, scope="intra"), workers, NET)
    inter = price(CollectiveCall("all_gather", n, scope="inter"), workers, NET)
    beta_intra, beta_inter = 1 / 100e9, g / 1e9
    assert intra.bandwidth_s == pytest.approx((g - 1) / g * n * beta_intra)
    assert inter.bandwidth_s == pytest.approx((m - 1) / m * n * beta_inter)
    assert (intra.phases[0].ranks, inter.phases[0].ranks) == (g, m)
    assert price(CollectiveCall("all_gather", n, scope="inter"), 8, NET).time_s == 0.0  # one node: nobody across


# --- one worker a node: the levels collapse, and the note says what that costs ---------------

@pytest.mark.parametrize("tie", ["zero", "alternate", "random"])
def test_on_nodes_of_one_hier_1bit_is_the_flat_vote(tie):
    """What the collapse note says: a vote of one-worker nodes is the flat vote."""
    workers, n = 6, 45
    for abstain in (False, True):
        votes = corner_votes(workers, n, seed=workers, abstain=abstain)
        spec = PayloadSpec(kind="votes", numel=n, rule=MajorityVote(TieBreak(tie, seed=4, step=3)))
        out = HIER_1BIT.aggregate(Payload(spec, votes.clone()), SimComm(workers, 1))
        expected = flat_reference(votes.numpy().astype(np.int64), "mavo", tie, step=3, seed=4)
        assert torch.equal(out, expected.expand(workers, n)), (tie, abstain)


def test_on_nodes_of_one_the_vote_transports_say_the_levels_collapse_and_why_they_cost_more_than_a2a_1bit():
    """hier:a2a-1bit said its levels collapse on a flat network; hier-1bit and hier-exact said
    nothing, and their local work (encode + decode) read twice a2a-1bit's, unexplained. The note
    says both; the priced figures are checked against a2a-1bit's, the same vote flat."""
    from lionsim.estimate import EstimateConfig, estimate

    frame = estimate(EstimateConfig(model="gpt2-124m", workers=16, network="10gbe",
                                    strategies=["dlion-mavo@a2a-1bit", "dlion-mavo@hier-1bit",
                                                "dlion-mavo@hier-exact"]))
    local = dict(zip(frame["transport"], frame["encode_s"] + frame["decode_s"]))
    spec = PayloadSpec(kind="votes", numel=1000, rule=MajorityVote())
    for name, transport in (("hier-1bit", HIER_1BIT), ("hier-exact", HIER_EXACT)):
        assert local[name] > local["a2a-1bit"]
        note = transport.footnote(spec, 16, 1)
        assert note.startswith(f"{name}: one worker per node on this network, so the two levels collapse to one")
        assert "cost more than a2a-1bit's" in note
        assert transport.footnote(spec, 16, 8) == "" and transport.footnote(spec, 1, 1) == ""
