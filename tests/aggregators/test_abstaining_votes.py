"""Abstaining votes: a coordinate whose c is exactly zero on every worker
moves by weight decay only, for every N and every transport, in the simulator and in
DistributedLion; a worker whose own c is zero adds nothing to the vote."""

import pytest
import torch

from lionsim.backends import SimComm
from lionsim.engine import train_step
from lionsim.optim import DistributedLion
from lionsim.optim.functional import sign_votes
from lionsim.strategies import STRATEGIES, StrategyConfig, flatten_parameters, gather_grads, valid_transports
from lionsim.strategies.core.layout import ParamLayout
from lionsim.timing import Clock
from lionsim.transports import TRANSPORTS
from tests.reference.impl import lion_pytorch_update_, lion_step

VOTING = ("dlion-mavo", "dlion-avg")


def simulate(name, transport, grads_per_step, params, **cfg):
    comm = SimComm(grads_per_step[0].shape[0])
    layout = ParamLayout.of([("x", torch.zeros(params.numel()))])
    strategy = STRATEGIES.get(name)(StrategyConfig(**cfg), layout, comm)
    sent = [train_step(strategy, TRANSPORTS.get(transport)(), comm, g.clone(), params, step, Clock())
            for step, g in enumerate(grads_per_step, 1)]
    return sent


@pytest.mark.parametrize("workers", [1, 2, 3, 4])
@pytest.mark.parametrize("name", VOTING)
def test_issue_reproduction_untouched_coordinate_stays_put(workers, name):
    """The gradient [1, -1, 0] on every worker, 5 steps at lr 0.1, wd 0: [-0.5, 0.5, 0.0] for
    every N (it was [-0.5, 0.5, 0.5] at N = 2 and 3: the zero voted -1)."""
    for transport in valid_transports(STRATEGIES.get(name)):
        x = torch.zeros(3)
        grads = [torch.tensor([[1.0, -1.0, 0.0]]).expand(workers, 3)] * 5
        simulate(name, transport, grads, x, lr=0.1, weight_decay=0.0)
        assert x.tolist() == pytest.approx([-0.5, 0.5, 0.0], abs=1e-6), (transport, workers)


@pytest.mark.parametrize("name", VOTING)
def test_untouched_coordinate_moves_by_weight_decay_only(name):
    x0 = torch.tensor([0.5, -2.0, 3.0])
    ref, mom = x0.tolist(), [0.0] * 3
    for _ in range(4):
        ref, mom = lion_step(ref, [1.0, -1.0, 0.0], mom, 0.1, 0.5, 0.9, 0.99)
    for transport in valid_transports(STRATEGIES.get(name)):
        x = x0.clone()
        simulate(name, transport, [torch.tensor([[1.0, -1.0, 0.0]] * 3)] * 4, x, lr=0.1, weight_decay=0.5)
        assert x.tolist() == pytest.approx(ref, abs=1e-6), transport
        assert x[2].item() == pytest.approx(3.0 * (1 - 0.1 * 0.5) ** 4)


def test_a_worker_with_zero_c_abstains():
    """Workers [+1, 0, 0] vote +1 (the abstainers do not out-vote it); [+1, -1, 0] is a tie."""
    grads = [torch.tensor([[1.0, 1.0], [0.0, -1.0], [0.0, 0.0]])]
    for transport in valid_transports(STRATEGIES.get("dlion-mavo")):
        x = torch.zeros(2)
        simulate("dlion-mavo", transport, grads, x, lr=0.1, weight_decay=0.0)
        assert x.tolist() == pytest.approx([-0.1, 0.0]), transport


def test_sign_votes_abstain_on_exact_zero_for_every_n():
    x = torch.tensor([[0.5, 0.0, -0.0, -2.0]])
    for workers in (1, 2, 1000):
        assert sign_votes(x, workers).tolist() == [[1, 0, 0, -1]]


class Embedder(torch.nn.Module):
    """An embedding with rows no batch uses (and a padding row), then a linear head."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.emb = torch.nn.Embedding(12, 4, padding_idx=0)
        self.head = torch.nn.Linear(4, 1)

    def forward(self, idx):
        return self.head(self.emb(idx)).squeeze(-1)


def batches(steps):
    g = torch.Generator().manual_seed(3)
    return [torch.randint(0, 6, (8,), generator=g) for _ in range(steps)]  # rows 6..11 never used


def lion_reference(steps):
    model = Embedder()
    moms = [torch.zeros_like(p) for p in model.parameters()]
    for idx in batches(steps):
        model.zero_grad()
        model(idx).pow(2).mean().backward()
        with torch.no_grad():
            for p, m in zip(model.parameters(), moms):
                lion_pytorch_update_(p, p.grad, m, 0.01, 0.5, 0.9, 0.99)
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


@pytest.mark.parametrize("workers", [2, 3, 4])
def test_identical_batches_equal_lion_with_unused_embedding_rows(workers):
    expected = lion_reference(6)
    for name in VOTING:
        for transport in valid_transports(STRATEGIES.get(name)):
            model = Embedder()
            params, layout = flatten_parameters(model)
            comm = SimComm(workers)
            strategy = STRATEGIES.get(name)(StrategyConfig(lr=0.01, weight_decay=0.5), layout, comm)
            grads = torch.zeros(workers, layout.numel)
            for step, idx in enumerate(batches(6), 1):
                model.zero_grad()
                model(idx).pow(2).mean().backward()
                gather_grads(model, grads[0])
                grads[1:] = grads[0]
                train_step(strategy, TRANSPORTS.get(transport)(), comm, grads.clone(), params, step, Clock())
            assert torch.equal(params, expected), (name, transport, workers)


def test_distributed_lion_alone_is_lion_with_unused_rows():
    expected = lion_reference(6)
    model = Embedder()
    opt = DistributedLion(model.parameters(), lr=0.01, weight_decay=0.5)
    for idx in batches(6):
        opt.zero_grad()
        model(idx).pow(2).mean().backward()
        opt.step()
    assert torch.equal(torch.cat([p.detach().reshape(-1) for p in model.parameters()]), expected)


def test_abstention_steps_are_priced_with_the_bitmap():
    """The step whose votes hold a zero sends the voted plane; a step without sends none."""
    x = torch.zeros(16)
    full = torch.ones(3, 16)
    holed = full.clone()
    holed[:, 5] = 0.0  # an untouched coordinate on every worker: c = 0 at step 1
    sent = simulate("dlion-mavo", "a2a-1bit", [holed, full], x, lr=0.1, weight_decay=0.0)
    assert sent[0].spec.abstain and not sent[1].spec.abstain  # step 2: momentum makes c non-zero
    t = TRANSPORTS.get("a2a-1bit")()
    assert t.plan(sent[0].spec, 3)[1].nbytes == 2 * t.plan(sent[1].spec, 3)[1].nbytes
