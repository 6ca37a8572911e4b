"""AdamW's bias correction counts steps per tensor, as torch.optim.AdamW does: a tensor without a
gradient on some steps (a conditional branch of a user's model) is skipped on those steps and
its count stands still. Before, one global count corrected it as if it had taken every step
(3.3e-3 off torch after 5 steps at lr 1e-2). The reference is torch.optim.AdamW itself, on
the same model and batches, for global adamw and for the inner AdamW of powersgd and localsgd."""

import pytest
import torch

from lionsim.backends import SimComm
from lionsim.runs import RunSpec
from lionsim.strategies import StrategyConfig
from lionsim.training.loop import Place, train_run

SKIPPED = (2, 3)
"""1-based steps on which the branch is not taken: its tensors get no gradient."""
STEPS, LR, WD = 6, 1e-2, 0.1


class Branchy(torch.nn.Module):
    """A trunk used on every step and a branch used only on some (an `if` in forward)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.trunk = torch.nn.Linear(5, 4)
        self.branch = torch.nn.Linear(4, 4)
        self.head = torch.nn.Linear(4, 1)

    def forward(self, x, use_branch: bool):
        h = torch.tanh(self.trunk(x))
        if use_branch:
            h = h + torch.tanh(self.branch(h))
        return self.head(h).squeeze(-1)


def batch(step: int) -> torch.Tensor:
    """Worker 0's inputs on 0-based step `step`."""
    return torch.randn(8, 5, generator=torch.Generator().manual_seed(100 * step))


class Workload:
    """Just what lionsim.training.loop.train_run asks of a workload; the target carries the step."""

    gradients = "loop"

    def __init__(self) -> None:
        self.model = Branchy()

    def batches(self, step, workers, device=None):
        return [(batch(step), torch.tensor(step)) for _ in workers]

    def loss(self, model, inputs, step):
        return model(inputs, int(step) + 1 not in SKIPPED).pow(2).mean()

    def evaluate(self, model):
        return {}


def torch_adamw() -> dict[str, torch.Tensor]:
    model = Branchy()
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WD, betas=(0.9, 0.999))
    for step in range(STEPS):
        opt.zero_grad()
        model(batch(step), step + 1 not in SKIPPED).pow(2).mean().backward()
        opt.step()
    return model.state_dict()


def lionsim_run(strategy: str, **cfg) -> dict[str, torch.Tensor]:
    wl = Workload()
    initial = {k: v.clone() for k, v in wl.model.state_dict().items()}
    record = train_run(RunSpec(strategy, "fp32-allreduce" if strategy != "powersgd" else "lowrank-allreduce"),
                       workload=wl, initial=initial, place=Place(SimComm(1)),
                       strategy_cfg=StrategyConfig(lr=LR, weight_decay=WD, betas=(0.9, 0.999), options=cfg),
                       steps=STEPS, eval_every=10**6)
    assert record.diverged_at is None
    return {k: v.detach().clone() for k, v in wl.model.state_dict().items()}


@pytest.mark.parametrize("strategy,cfg", [
    ("adamw", {}),
    ("powersgd", {"powersgd_warmup_steps": STEPS, "inner_optimizer": "adamw"}),  # its warm-up: AdamW on the mean
    ("localsgd", {"local_steps": 2, "inner_optimizer": "adamw"}),  # one worker: the average is its replica
])
def test_adamw_with_a_tensor_skipped_on_some_steps_equals_torch_adamw(strategy, cfg):
    reference = torch_adamw()
    got = lionsim_run(strategy, **cfg)
    initial = Branchy().state_dict()
    assert not torch.equal(reference["branch.weight"], initial["branch.weight"])  # the branch trained
    for name, p in reference.items():
        torch.testing.assert_close(got[name], p, rtol=1e-6, atol=1e-7, msg=f"{strategy}: {name}")


def test_per_position_counts_give_what_separate_scalar_steps_give():
    """Counts [3, 1]: the first two positions take step 3's update, the last step 1's (plain loop)."""
    from lionsim.optim.functional import adam_bias_corrections, adamw_update_

    torch.manual_seed(1)
    p, g, m, v = torch.randn(3), torch.randn(3), torch.randn(3), torch.rand(3)
    got = p.clone()
    m2, v2 = m.clone(), v.clone()
    adamw_update_(got, g, m2, v2, torch.tensor([3.0, 3.0, 1.0]), 0.01, 0.1, 0.9, 0.999)
    for i, t in enumerate([3, 3, 1]):
        x, mi, vi = p[i].item(), 0.9 * m[i].item() + 0.1 * g[i].item(), 0.999 * v[i].item() + 0.001 * g[i].item() ** 2
        x *= 1 - 0.01 * 0.1
        x -= 0.01 * (mi / (1 - 0.9**t)) / ((vi / (1 - 0.999**t)) ** 0.5 + 1e-8)
        assert got[i].item() == pytest.approx(x, rel=1e-6)
    b1, b2 = adam_bias_corrections(torch.tensor([1.0]), 0.9, 0.999)
    assert b2.item() == pytest.approx(1e-3, rel=1e-7)  # float64 maths: float32's 0.999 would be 1.3e-5 off


def test_the_scalar_path_equals_the_per_position_path_when_every_count_is_the_same():
    from lionsim.optim.functional import adamw_update_, step_counts

    torch.manual_seed(2)
    p, g, m, v = torch.randn(50), torch.randn(50), torch.randn(50), torch.rand(50)
    counts = torch.full((50,), 4.0)
    assert step_counts(counts) == 4 and isinstance(step_counts(torch.tensor([4.0, 3.0])), torch.Tensor)
    scalar, per_position = p.clone(), p.clone()
    adamw_update_(scalar, g, m.clone(), v.clone(), 4, 0.01, 0.1, 0.9, 0.999)
    adamw_update_(per_position, g, m.clone(), v.clone(), counts, 0.01, 0.1, 0.9, 0.999)
    torch.testing.assert_close(per_position, scalar, rtol=1e-6, atol=1e-8)
