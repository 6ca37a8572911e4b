"""Transports and DistributedLion over a real gloo process group (2 ranks) against the
simulator, which is the reference: exact for votes."""

import pytest
import torch

from lionsim.aggregators import VOTE_RULES, MajorityVote, TieBreak
from lionsim.backends import ProcessGroupComm, SimComm
from lionsim.optim import DistributedLion
from lionsim.transports import TRANSPORTS, Payload, PayloadSpec

WORLD = 2
VOTE_TRANSPORTS = [name for name, t in TRANSPORTS.items() if "votes" in t.carries]
CARRIERS = {"mavo": VOTE_TRANSPORTS, "avg": [n for n in VOTE_TRANSPORTS if n != "hier-1bit"]}
"""hier-1bit votes by majority only."""


TIES = ("zero", "alternate", "random")
WIDE_LOCAL = 64  # virtual workers per rank for the wide run: W = 128 > 127, past the int8 container


def votes_for(rank: int, n: int = 77, rows: int = 1) -> torch.Tensor:
    g = torch.Generator().manual_seed(100 + rank)
    return (torch.randint(0, 2, (rows, n), generator=g) * 2 - 1).to(torch.int8)


def zero_votes_for(rank: int, n: int = 77) -> torch.Tensor:
    """+1/0/-1 votes: abstentions, ties among the voters, coordinates nobody votes on."""
    g = torch.Generator().manual_seed(200 + rank)
    votes = torch.randint(-1, 2, (1, n), generator=g)
    votes[:, :3] = 0
    return votes.to(torch.int8)


def batch_for(rank: int, step: int) -> torch.Tensor:
    return torch.randn(8, 5, generator=torch.Generator().manual_seed(10 * step + rank))


def make_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))


def rank_main(rank: int):
    results = {}
    comm = ProcessGroupComm()
    for rule_name in ("mavo", "avg"):
        spec = PayloadSpec(kind="votes", numel=77, rule=VOTE_RULES.get(rule_name)())
        for name in CARRIERS[rule_name]:
            results[(name, rule_name)] = TRANSPORTS.get(name)().aggregate(Payload(spec, votes_for(rank)), comm)[0]
        wide = ProcessGroupComm(local_workers=WIDE_LOCAL)
        results[("int8-allreduce@128", rule_name)] = TRANSPORTS.get("int8-allreduce")().aggregate(
            Payload(spec, votes_for(rank, rows=WIDE_LOCAL)), wide)
    for tie in TIES:
        spec = PayloadSpec(kind="votes", numel=77, rule=MajorityVote(TieBreak(tie, seed=3, step=2)))
        for name in VOTE_TRANSPORTS:
            results[(name, "zeros", tie)] = TRANSPORTS.get(name)().aggregate(Payload(spec, zero_votes_for(rank)), comm)[0]
    for key, kw in (("params", {}), ("params-random", {"tie": "random", "tie_seed": 4, "transport": "pbit-allreduce"})):
        model = make_model()
        opt = DistributedLion(model.parameters(), lr=0.01, weight_decay=0.1, **{"transport": "a2a-1bit", **kw})
        for step in range(3):
            opt.zero_grad()
            model(batch_for(rank, step)).pow(2).mean().backward()
            opt.step()
        results[key] = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    from tests.aggregators.test_abstaining_votes import Embedder, batches

    model = Embedder()  # identical batches on both ranks, embedding rows nobody uses
    opt = DistributedLion(model.parameters(), lr=0.01, weight_decay=0.5, transport="a2a-1bit", tie="alternate")
    for idx in batches(6):
        opt.zero_grad()
        model(idx).pow(2).mean().backward()
        opt.step()
    results["embedding"] = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    return results


@pytest.fixture(scope="session")
def gloo_results(gloo_group):
    return gloo_group(WORLD).run(rank_main)


def test_every_vote_transport_over_gloo_equals_the_simulator(gloo_results):
    votes = torch.cat([votes_for(r) for r in range(WORLD)])
    for rule_name in ("mavo", "avg"):
        spec = PayloadSpec(kind="votes", numel=77, rule=VOTE_RULES.get(rule_name)())
        for name in CARRIERS[rule_name]:
            sim = TRANSPORTS.get(name)().aggregate(Payload(spec, votes), SimComm(WORLD))[0]
            for rank in range(WORLD):
                assert torch.equal(gloo_results[rank][(name, rule_name)], sim), (name, rule_name, rank)


def test_int8_allreduce_past_127_workers_over_gloo_equals_the_simulator(gloo_results):
    """W = 128 (64 virtual workers on each of 2 ranks): the container widens to a dtype gloo sums."""
    votes = torch.cat([votes_for(r, rows=WIDE_LOCAL) for r in range(WORLD)])  # [128, 77]
    for rule_name in ("mavo", "avg"):
        spec = PayloadSpec(kind="votes", numel=77, rule=VOTE_RULES.get(rule_name)())
        sim = TRANSPORTS.get("int8-allreduce")().aggregate(Payload(spec, votes), SimComm(WORLD * WIDE_LOCAL))
        for rank in range(WORLD):
            got = gloo_results[rank][("int8-allreduce@128", rule_name)]  # [64, 77]: one row per local worker
            assert torch.equal(got, sim[:WIDE_LOCAL]), (rule_name, rank)


def test_zero_votes_and_tie_rules_over_gloo_equal_the_simulator(gloo_results):
    votes = torch.cat([zero_votes_for(r) for r in range(WORLD)])
    for tie in TIES:
        spec = PayloadSpec(kind="votes", numel=77, rule=MajorityVote(TieBreak(tie, seed=3, step=2)))
        for name in VOTE_TRANSPORTS:
            sim = TRANSPORTS.get(name)().aggregate(Payload(spec, votes.clone()), SimComm(WORLD))[0]
            assert (sim[:3] == 0).all()  # nobody voted there
            for rank in range(WORLD):
                assert torch.equal(gloo_results[rank][(name, "zeros", tie)], sim), (name, tie, rank)


def test_distributed_lion_over_gloo_with_unused_embedding_rows_is_lion(gloo_results):
    from tests.aggregators.test_abstaining_votes import lion_reference

    for rank in range(WORLD):
        assert torch.equal(gloo_results[rank]["embedding"], lion_reference(6)), rank


@pytest.mark.parametrize("key,transport,cfg", [("params", "a2a-1bit", {}),
                                               ("params-random", "pbit-allreduce", {"tie": "random", "seed": 4})])
def test_distributed_lion_over_gloo_equals_simulated_dlion(gloo_results, key, transport, cfg):
    """Replicas stay identical across ranks and equal Algorithm 1 run in one process."""
    from lionsim.engine import train_step
    from lionsim.strategies import STRATEGIES, StrategyConfig, flatten_parameters, gather_grads
    from lionsim.timing import Clock

    assert torch.equal(gloo_results[0][key], gloo_results[1][key])
    model = make_model()
    params, layout = flatten_parameters(model)
    comm = SimComm(WORLD)
    strategy = STRATEGIES.get("dlion-mavo")(StrategyConfig(lr=0.01, weight_decay=0.1, **cfg), layout, comm)
    grads = torch.zeros(WORLD, layout.numel)
    for step in range(3):
        for rank in range(WORLD):
            model.zero_grad()
            model(batch_for(rank, step)).pow(2).mean().backward()
            gather_grads(model, grads[rank])
        train_step(strategy, TRANSPORTS.get(transport)(), comm, grads, params, step + 1, Clock())
    torch.testing.assert_close(gloo_results[0][key], params, rtol=0, atol=1e-6)
