"""Real gloo groups of 3 and 4 ranks against the simulator (an odd world changes ties: 3 voters
never tie): every vote transport under every vote and tie rule, DistributedLion on the whole
world and on a subgroup without global rank 0 (the parameter server's root is then a group
rank, not a global one), and the stochastic quantizers (TernGrad, QSGD) drawing per virtual
worker, so a rank draws what the simulator draws for its workers."""

import pytest
import torch
import torch.distributed as dist

from lionsim.aggregators import MajorityVote, MeanVote, TieBreak
from lionsim.backends import ProcessGroupComm, SimComm
from lionsim.errors import LionsimError
from lionsim.optim import DistributedLion
from lionsim.transports import TRANSPORTS, Payload, PayloadSpec
from tests.backends.test_gloo import batch_for, make_model, zero_votes_for

VOTE_TRANSPORTS = [name for name, t in TRANSPORTS.items() if "votes" in t.carries]
RULES = [("mavo", "zero"), ("mavo", "alternate"), ("mavo", "random"), ("avg", "zero")]
STOCHASTIC = [("terngrad", "int8-allreduce"), ("qsgd", "allgather-levels")]
SUBGROUP = [1, 2]


def rule(name: str, tie: str):
    return MajorityVote(TieBreak(tie, seed=3, step=2)) if name == "mavo" else MeanVote()


def accepts(transport: str, spec: PayloadSpec) -> bool:
    """Whether the transport carries this vote rule (hier-1bit is a majority of majorities only:
    it refuses a mean vote with one line), tried on the simulator."""
    try:
        TRANSPORTS.get(transport)().aggregate(Payload(spec, torch.zeros(2, spec.numel, dtype=torch.int8)), SimComm(2))
    except LionsimError:
        return False
    return True


def stochastic_run(name: str, transport: str, comm, rows: range, steps: int = 3) -> torch.Tensor:
    """`name` on make_model's parameters from batch_for(worker, step) gradients, workers `rows` here."""
    from lionsim.engine import train_step
    from lionsim.strategies import STRATEGIES, StrategyConfig, flatten_parameters, gather_grads
    from lionsim.timing import Clock

    model = make_model()
    params, layout = flatten_parameters(model)
    strategy = STRATEGIES.get(name)(StrategyConfig(seed=5, lr=0.05), layout, comm)
    grads = torch.zeros(len(rows), layout.numel)
    for step in range(steps):
        for row, worker in enumerate(rows):
            model.zero_grad()
            model(batch_for(worker, step)).pow(2).mean().backward()
            gather_grads(model, grads[row])
        train_step(strategy, TRANSPORTS.get(transport)(), comm, grads, params, step + 1, Clock())
    return params.clone()


def lion_run(rank: int, group, transport: str) -> torch.Tensor:
    model = make_model()
    opt = DistributedLion(model.parameters(), lr=0.01, weight_decay=0.1, transport=transport, process_group=group)
    for step in range(3):
        opt.zero_grad()
        model(batch_for(rank, step)).pow(2).mean().backward()
        opt.step()
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def rank_main(rank: int, world: int):
    comm, results = ProcessGroupComm(), {}
    sub = dist.new_group(SUBGROUP)  # every rank creates it, members or not
    for name, tie in RULES:
        spec = PayloadSpec(kind="votes", numel=77, rule=rule(name, tie))
        for transport in filter(lambda t: accepts(t, spec), VOTE_TRANSPORTS):
            results[(transport, name, tie)] = TRANSPORTS.get(transport)().aggregate(
                Payload(spec, zero_votes_for(rank)), comm)[0]
    for transport in ("int8-allreduce", "param-server", "a2a-1bit"):
        results[("lion", transport)] = lion_run(rank, None, transport)
        if world == 3 and rank in SUBGROUP:
            results[("subgroup", transport)] = lion_run(rank, sub, transport)
    for name, transport in STOCHASTIC:
        results[name] = stochastic_run(name, transport, comm, range(rank, rank + 1))
    return results


@pytest.fixture(scope="session", params=[3, 4], ids=["3-ranks", "4-ranks"])
def world(request, gloo_group):
    world = request.param
    return world, gloo_group(world).run(rank_main, world)


def test_every_vote_transport_and_rule_equals_the_simulator(world):
    n, ranks = world
    votes = torch.cat([zero_votes_for(r) for r in range(n)])
    for name, tie in RULES:
        spec = PayloadSpec(kind="votes", numel=77, rule=rule(name, tie))
        for transport in filter(lambda t: accepts(t, spec), VOTE_TRANSPORTS):
            sim = TRANSPORTS.get(transport)().aggregate(Payload(spec, votes.clone()), SimComm(n))[0]
            for r in range(n):
                assert torch.equal(ranks[r][(transport, name, tie)], sim), (transport, name, tie, r)
    ties = (votes.sum(0) == 0) & (votes != 0).any(0)
    assert int(ties.sum()) >= 10  # the tie rules are exercised (3 voters tie where one abstains)


def simulated_dlion(workers: list[int], transport: str) -> torch.Tensor:
    """Algorithm 1 in one process for the given workers' batches (lionsim's dlion-mavo)."""
    from lionsim.engine import train_step
    from lionsim.strategies import STRATEGIES, StrategyConfig, flatten_parameters, gather_grads
    from lionsim.timing import Clock

    model = make_model()
    params, layout = flatten_parameters(model)
    comm = SimComm(len(workers))
    strategy = STRATEGIES.get("dlion-mavo")(StrategyConfig(lr=0.01, weight_decay=0.1), layout, comm)
    grads = torch.zeros(len(workers), layout.numel)
    for step in range(3):
        for row, worker in enumerate(workers):
            model.zero_grad()
            model(batch_for(worker, step)).pow(2).mean().backward()
            gather_grads(model, grads[row])
        train_step(strategy, TRANSPORTS.get(transport)(), comm, grads, params, step + 1, Clock())
    return params


@pytest.mark.parametrize("transport", ["int8-allreduce", "param-server", "a2a-1bit"])
def test_distributed_lion_on_the_world_and_on_a_subgroup_without_rank_0(world, transport):
    n, ranks = world
    expected = simulated_dlion(list(range(n)), transport)
    for r in range(n):
        assert torch.equal(ranks[r][("lion", transport)], expected), (transport, r)
    if n == 3:  # ranks 1 and 2 vote among themselves; the server's root is group rank 0 = global rank 1
        expected = simulated_dlion(SUBGROUP, transport)
        for r in SUBGROUP:
            assert torch.equal(ranks[r][("subgroup", transport)], expected), (transport, r)


@pytest.mark.parametrize("name,transport", STOCHASTIC)
def test_stochastic_quantizers_draw_per_worker_so_gloo_equals_the_simulator(world, name, transport):
    n, ranks = world
    expected = stochastic_run(name, transport, SimComm(n), range(n))
    for r in range(n):
        assert torch.equal(ranks[r][name], expected), (name, r)
