"""DistributedLion with several parameter groups over 2 gloo ranks against the simulator under
--tie random: the coins are drawn at each coordinate's place in the whole model, so splitting
the model into groups (or skipping a parameter no rank used) changes nothing."""

import pytest
import torch
from torch import nn

from lionsim.backends import SimComm
from lionsim.engine import train_step
from lionsim.optim import DistributedLion
from lionsim.strategies import STRATEGIES, StrategyConfig, flatten_parameters, gather_grads
from lionsim.timing import Clock
from lionsim.transports import TRANSPORTS

WORLD = 2
STEPS = 3
SEED = 5
HYPER = dict(lr=0.01, weight_decay=0.1, betas=(0.9, 0.99))
VOTE_TRANSPORTS = [name for name, t in TRANSPORTS.items() if "votes" in t.carries]


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.body = nn.Linear(5, 8)
        self.spare = nn.Linear(3, 3)  # no rank uses it: skipped, yet it keeps its place in the flat model
        self.head = nn.Linear(8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.tanh(self.body(x)))


def loss_of(model: Net, rank: int, step: int) -> torch.Tensor:
    x = torch.randn(8, 5, generator=torch.Generator().manual_seed(10 * step + rank))
    return model(x).pow(2).mean()


def groups(model: Net) -> list[dict]:
    """Two groups that split the model in its own order, the unused layer inside the first."""
    return [{"params": [*model.body.parameters(), *model.spare.parameters()]},
            {"params": list(model.head.parameters())}]


def rank_main(rank: int):
    results = {}
    for transport in VOTE_TRANSPORTS:
        model = Net()
        opt = DistributedLion(groups(model), transport=transport, tie="random", tie_seed=SEED, **HYPER)
        for step in range(STEPS):
            opt.zero_grad()
            loss_of(model, rank, step).backward()
            opt.step()
        results[transport] = {name: p.detach().clone() for name, p in model.named_parameters()}
    return results


@pytest.fixture(scope="session")
def rank_params(gloo_group) -> list[dict]:
    return gloo_group(WORLD).run(rank_main)


def simulated(transport: str, tie: str) -> dict[str, torch.Tensor]:
    """The simulator on the ranks' batches: one flat vector of the whole model, one vote."""
    model = Net()
    params, layout = flatten_parameters(model)
    comm = SimComm(WORLD)
    strategy = STRATEGIES.get("dlion-mavo")(StrategyConfig(tie=tie, seed=SEED, **HYPER), layout, comm)
    grads = torch.zeros(WORLD, layout.numel)
    for step in range(STEPS):
        for rank in range(WORLD):
            model.zero_grad()
            loss_of(model, rank, step).backward()
            gather_grads(model, grads[rank])
        train_step(strategy, TRANSPORTS.get(transport)(), comm, grads, params, step + 1, Clock())
    return {name: p.detach() for name, p in model.named_parameters()}


@pytest.mark.parametrize("transport", VOTE_TRANSPORTS)
def test_two_param_groups_equal_the_simulator_under_random_ties(rank_params, transport):
    expected = simulated(transport, "random")
    assert any(not torch.equal(expected[n], p) for n, p in simulated(transport, "zero").items()), "no tie was broken"
    initial = dict(Net().named_parameters())
    for rank in range(WORLD):
        for name, p in rank_params[rank][transport].items():
            if name.startswith("spare"):  # used nowhere: DistributedLion skips it (the simulator decays it)
                assert torch.equal(p, initial[name]), name
            else:
                assert torch.equal(p, expected[name]), f"rank {rank}: {name} differs from the simulator"
