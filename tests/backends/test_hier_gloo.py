"""Hierarchical votes on a real gloo group of 4 ranks, grouped as if on nodes, against the
simulator (the reference, exact for votes): the node groups, hier-exact and hier-1bit for every
way ranks and workers can sit in nodes, and DistributedLion as 2 nodes of 2."""

import pytest
import torch

from lionsim.aggregators import MajorityVote, MeanVote, TieBreak
from lionsim.backends import ProcessGroupComm, SimComm
from lionsim.engine import train_step
from lionsim.optim import DistributedLion
from lionsim.strategies import STRATEGIES, StrategyConfig, flatten_parameters, gather_grads
from lionsim.timing import Clock
from lionsim.transports import TRANSPORTS, Payload, PayloadSpec

WORLD = 4
LAYOUTS = [(1, 2), (1, 4), (1, 1), (2, 4), (2, 2), (2, 1)]
"""(workers per rank, workers per node): 2 nodes of 2 ranks, one node, every rank a node; 2 ranks
per node of 4 workers, a rank per node of 2, 2 nodes in every rank."""
N = 53
STEPS = 3
HYPER = dict(lr=0.01, weight_decay=0.1, betas=(0.9, 0.99))


def votes(rank: int, rows: int, zeros: bool) -> torch.Tensor:
    g = torch.Generator().manual_seed(10 * rank + rows + zeros)
    v = torch.randint(-1, 2, (rows, N), generator=g) if zeros else torch.randint(0, 2, (rows, N), generator=g) * 2 - 1
    return v.to(torch.int8)


def grid(rank: int, rows: int, width: int) -> torch.Tensor:
    return torch.arange(rows * width, dtype=torch.int32).reshape(rows, width) + 1000 * rank


SPECS = {"mavo-random": MajorityVote(TieBreak("random", seed=3, step=2)),
         "mavo-zero": MajorityVote(), "avg": MeanVote()}


def batch(rank: int, step: int) -> torch.Tensor:
    return torch.randn(6, 5, generator=torch.Generator().manual_seed(100 * step + rank))


def model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))


def rank_main(rank: int):
    results = {}
    for w, per_node in LAYOUTS:
        comm = ProcessGroupComm(None, local_workers=w, workers_per_node=per_node)
        nodes = comm.nodes()
        results[(w, per_node, "place")] = (nodes.node, nodes.slot)
        for level in ("intra", "inter"):
            group = getattr(nodes, level)
            size = group.world_size
            results[(w, per_node, level)] = (group.all_reduce(grid(rank, w, 3)), group.all_gather(grid(rank, w, 3)),
                                             group.all_to_all(grid(rank, w, size * 2).reshape(w, size, 2)))
        for name in ("hier-exact", "hier-1bit"):
            for key, rule in SPECS.items():
                if name == "hier-1bit" and key == "avg":
                    continue
                for zeros in (False, True):
                    payload = Payload(PayloadSpec(kind="votes", numel=N, rule=rule), votes(rank, w, zeros))
                    results[(w, per_node, name, key, zeros)] = TRANSPORTS.get(name)().aggregate(payload, comm)
        results[(w, per_node, "log")] = {c.scope for c in comm.take_log()}
    for transport in ("int8-allreduce", "hier-exact", "hier-1bit"):
        net = model()
        opt = DistributedLion(net.parameters(), transport=transport, workers_per_node=2, **HYPER)
        for step in range(STEPS):
            opt.zero_grad()
            net(batch(rank, step)).pow(2).mean().backward()
            opt.step()
        results[transport] = torch.cat([p.detach().reshape(-1) for p in net.parameters()])
    return results


@pytest.fixture(scope="session")
def ranks(gloo_group):
    return gloo_group(WORLD).run(rank_main)


@pytest.mark.parametrize("w,per_node", LAYOUTS)
def test_node_groups_over_gloo_equal_the_simulator(ranks, w, per_node):
    W = WORLD * w
    sim = SimComm(W, per_node).nodes()
    assert torch.equal(torch.cat([ranks[r][(w, per_node, "place")][0] for r in range(WORLD)]), sim.node)
    assert torch.equal(torch.cat([ranks[r][(w, per_node, "place")][1] for r in range(WORLD)]), sim.slot)
    for level in ("intra", "inter"):
        group = getattr(sim, level)
        size = group.world_size
        x = torch.cat([grid(r, w, 3) for r in range(WORLD)])
        chunks = torch.cat([grid(r, w, size * 2) for r in range(WORLD)]).reshape(W, size, 2)
        expected = (group.all_reduce(x), group.all_gather(x), group.all_to_all(chunks))
        for what, want in zip(("all_reduce", "all_gather", "all_to_all"), expected):
            got = torch.cat([ranks[r][(w, per_node, level)][("all_reduce", "all_gather", "all_to_all").index(what)]
                             for r in range(WORLD)])
            assert torch.equal(got, want), (level, what)


@pytest.mark.parametrize("w,per_node", LAYOUTS)
def test_hierarchical_transports_over_gloo_equal_the_simulator(ranks, w, per_node):
    W = WORLD * w
    for name in ("hier-exact", "hier-1bit"):
        for key, rule in SPECS.items():
            if name == "hier-1bit" and key == "avg":
                continue
            for zeros in (False, True):
                v = torch.cat([votes(r, w, zeros) for r in range(WORLD)])
                spec = PayloadSpec(kind="votes", numel=N, rule=rule)
                sim = TRANSPORTS.get(name)().aggregate(Payload(spec, v.clone()), SimComm(W, per_node))
                got = torch.cat([ranks[r][(w, per_node, name, key, zeros)] for r in range(WORLD)])
                assert torch.equal(got, sim), (name, key, zeros)
                if name == "hier-exact":  # and the flat vote
                    flat = TRANSPORTS.get("int8-allreduce")().aggregate(Payload(spec, v.clone()), SimComm(W))
                    assert torch.equal(got, flat), (key, zeros)
    g = min(per_node, W)  # real intra calls when a node spans ranks, real inter calls when there are nodes to cross
    scopes = {"world"} | ({"intra"} if g > w else set()) | ({"inter"} if W > g else set())
    assert ranks[0][(w, per_node, "log")] == scopes  # real calls logged with their group's scope


def simulated(transport: str) -> torch.Tensor:
    """dlion-mavo in one process on the ranks' batches, 4 workers as 2 nodes of 2."""
    net = model()
    params, layout = flatten_parameters(net)
    comm = SimComm(WORLD, 2)
    strategy = STRATEGIES.get("dlion-mavo")(StrategyConfig(**HYPER), layout, comm)
    grads = torch.zeros(WORLD, layout.numel)
    for step in range(STEPS):
        for rank in range(WORLD):
            net.zero_grad()
            net(batch(rank, step)).pow(2).mean().backward()
            gather_grads(net, grads[rank])
        train_step(strategy, TRANSPORTS.get(transport)(), comm, grads, params, step + 1, Clock())
    return params


def test_distributed_lion_as_two_nodes_of_two(ranks):
    """hier-exact equals the flat int8 all-reduce bit for bit; hier-1bit equals the simulator's
    vote of votes; every rank holds the same replica."""
    for transport in ("int8-allreduce", "hier-exact", "hier-1bit"):
        for r in range(WORLD):
            assert torch.equal(ranks[r][transport], ranks[0][transport]), (transport, r)
        assert torch.equal(ranks[0][transport], simulated(transport)), transport
    assert torch.equal(ranks[0]["hier-exact"], ranks[0]["int8-allreduce"])
