"""PowerSGD when a compressed matrix's M is exactly zero on a step, against a plain loop written
from the algorithm (per worker, per matrix; Gram-Schmidt by columns):

  - a zero gradient on the first compressed step (the error is still 0, so M = 0): P = 0, and
    Q = M^T P would be 0, from which every later P, Q and approximation stays 0 while the
    error grows without bound. The rule: a P that is exactly zero keeps the previous Q.
  - a tensor no worker has a gradient for (a branch not taken): the step leaves it and its
    state (Q, error, optimizer) as they were, as torch.optim skips a parameter whose grad is None.
"""

import pytest
import torch

from lionsim.backends import SimComm
from lionsim.runs import RunSpec
from lionsim.strategies import StrategyConfig
from lionsim.training.loop import Place, train_run

WORKERS, STEPS, WARMUP, RANK, LR, SEED, EPS = 2, 7, 2, 2, 0.05, 3, 1e-8


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.trunk = torch.nn.Linear(8, 16)    # [16, 8]: compressed at rank 2 ((16 + 8) 2 2 < 128)
        self.branch = torch.nn.Linear(16, 16)  # [16, 16]: compressed
        self.head = torch.nn.Linear(16, 1)     # [1, 16]: sent whole

    def forward(self, x, trunk_scale: float, use_branch: bool):
        h = torch.tanh(self.trunk(x) * trunk_scale)
        if use_branch:
            h = h + torch.tanh(self.branch(h))
        return self.head(h).squeeze(-1)


def batch(step: int, worker: int) -> torch.Tensor:
    return torch.randn(6, 8, generator=torch.Generator().manual_seed(100 * step + worker))


def loss(model, x, step: int, zero_trunk: tuple, skip_branch: tuple):
    """1-based step; trunk_scale 0 makes the trunk's gradient exactly zero (not None)."""
    return (model(x, 0.0 if step in zero_trunk else 1.0, step not in skip_branch) - 1).pow(2).mean()


class Workload:
    gradients = "loop"

    def __init__(self, zero_trunk, skip_branch) -> None:
        self.model, self.zero_trunk, self.skip_branch = Net(), zero_trunk, skip_branch

    def batches(self, step, workers, device=None):
        return [(batch(step, w), torch.tensor(step + 1)) for w in workers]

    def loss(self, model, x, step):
        return loss(model, x, int(step), self.zero_trunk, self.skip_branch)

    def evaluate(self, model):
        return {}


def gram_schmidt(m: torch.Tensor) -> torch.Tensor:
    m = m.clone()
    for i in range(m.shape[1]):
        m[:, i] /= m[:, i].norm() + EPS
        for j in range(i + 1, m.shape[1]):
            m[:, j] -= (m[:, i] @ m[:, j]) * m[:, i]
    return m


def reference(zero_trunk=(), skip_branch=()) -> tuple[dict, dict]:
    """Plain PowerSGD + plain SGD; returns the parameters and the last step's error norms."""
    model = Net()
    params = dict(model.named_parameters())
    draws = torch.Generator().manual_seed(SEED)
    qs = {name: torch.randn(p.shape[1], RANK, generator=draws) for name, p in params.items()
          if name in ("trunk.weight", "branch.weight")}
    errors = {(w, name): torch.zeros_like(params[name]) for w in range(WORKERS) for name in qs}
    for step in range(1, STEPS + 1):
        grads = []
        for w in range(WORKERS):
            model.zero_grad()
            loss(model, batch(step - 1, w), step, zero_trunk, skip_branch).backward()
            grads.append({n: (None if p.grad is None else p.grad.clone()) for n, p in params.items()})
        with torch.no_grad():
            for name, p in params.items():
                if grads[0][name] is None:  # no worker has a gradient: left alone, state and all
                    continue
                if step <= WARMUP or name not in qs:
                    mean = sum(g[name] for g in grads) / WORKERS
                else:
                    ms = [grads[w][name] + errors[(w, name)] for w in range(WORKERS)]
                    q = gram_schmidt(qs[name])
                    pm = gram_schmidt(sum(m @ q for m in ms))
                    q_new = sum(m.T @ pm for m in ms) / WORKERS
                    if bool(pm.any()):
                        qs[name] = q_new
                    else:
                        qs[name] = q  # a zero P keeps the previous Q
                    mean = pm @ q_new.T
                    for w in range(WORKERS):
                        errors[(w, name)] = ms[w] - mean
                p -= LR * mean
    return ({n: p.detach().clone() for n, p in params.items()},
            {n: max(float(errors[(w, n)].norm()) for w in range(WORKERS)) for n in qs})


def lionsim(zero_trunk=(), skip_branch=()) -> dict:
    wl = Workload(zero_trunk, skip_branch)
    initial = {k: v.clone() for k, v in wl.model.state_dict().items()}
    cfg = StrategyConfig(lr=LR, weight_decay=0.0, betas=(0.0, 0.0), seed=SEED,
                         options={"inner_optimizer": "sgd", "powersgd_rank": RANK, "powersgd_warmup_steps": WARMUP})
    record = train_run(RunSpec("powersgd", "lowrank-allreduce"), workload=wl, initial=initial,
                       place=Place(SimComm(WORKERS)), strategy_cfg=cfg, steps=STEPS, eval_every=10**6)
    assert record.diverged_at is None
    return {k: v.detach().clone() for k, v in wl.model.named_parameters()}


def test_a_zero_gradient_on_a_compressed_step_keeps_q_and_the_matrix_keeps_training():
    zero = (WARMUP + 1,)  # the first compressed step: error 0, gradient 0, so M = 0
    expected, _ = reference(zero_trunk=zero)
    got = lionsim(zero_trunk=zero)
    for name, p in expected.items():
        torch.testing.assert_close(got[name], p, rtol=1e-5, atol=1e-6, msg=name)
    # and the trunk moved on the steps after the zero one: the plain loop without the zero step
    # moves it by a comparable amount (before the fix its aggregate stayed 0 from then on)
    moved = (got["trunk.weight"] - Net().trunk.weight).norm()
    assert moved > 0.2 * (reference()[0]["trunk.weight"] - Net().trunk.weight).norm()


@pytest.mark.parametrize("skip", [(WARMUP + 1, WARMUP + 2), (WARMUP + 3, WARMUP + 4)],
                         ids=["error-zero", "error-nonzero"])
def test_a_tensor_without_gradient_keeps_its_q_error_and_parameters(skip):
    """Skipped on the first compressed steps (M = 0) or later (M = its error, not 0): either way
    its Q must stay as it was, which the plain loop's next steps then read."""
    expected, _ = reference(skip_branch=skip)
    got = lionsim(skip_branch=skip)
    for name, p in expected.items():
        torch.testing.assert_close(got[name], p, rtol=1e-5, atol=1e-6, msg=name)
    assert not torch.equal(got["branch.weight"], Net().branch.weight.detach())  # trained on the other steps
