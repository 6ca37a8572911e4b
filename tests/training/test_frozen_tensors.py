"""Tensors without a gradient are left alone on the simulator, as DistributedLion and torch.optim
leave them (torch.optim skips a parameter whose grad is None)."""

import pytest
import torch

from tests.helpers.spared import INITIAL, Spared, Tiny, train


def test_simulator_skips_a_tensor_without_gradient_as_distributed_lion_does():
    """One worker: DistributedLion is Lion, which skips p.grad None (no decay); the simulator's
    dlion-mavo on the same batches must give the same parameters, spare layer included."""
    from lionsim.optim import DistributedLion

    got = train("dlion-mavo", "int8-allreduce", 1, 5, lr=0.01, weight_decay=0.5)
    model = Spared()
    opt = DistributedLion(model.parameters(), lr=0.01, weight_decay=0.5)
    for step in range(5):
        opt.zero_grad()
        model(Tiny().batches(step, range(1))[0][0]).pow(2).mean().backward()
        opt.step()
    for name, p in model.state_dict().items():
        assert torch.equal(got[name], p), name
    assert torch.equal(got["spare.weight"], INITIAL["spare.weight"])


@pytest.mark.parametrize("strategy,transport", [("adamw", "fp32-allreduce"), ("dlion-mavo", "a2a-1bit"),
                                                ("diloco", "fp32-allreduce"), ("sgdm", "fp32-allreduce")])
def test_a_tensor_without_gradient_on_any_worker_is_left_alone(strategy, transport):
    got = train(strategy, transport, 3, 4, weight_decay=0.5, local_steps=2) if strategy == "diloco" else \
        train(strategy, transport, 3, 4, weight_decay=0.5)
    for name in ("spare.weight", "spare.bias"):
        assert torch.equal(got[name], INITIAL[name]), (strategy, name)
    assert not torch.equal(got["head.weight"], INITIAL["head.weight"])


def test_adamw_on_the_simulator_equals_torch_adamw_which_skips_grad_none():
    got = train("adamw", "fp32-allreduce", 1, 4, lr=0.01, weight_decay=0.5)
    model = Spared()
    opt = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.5, betas=(0.9, 0.999))
    for step in range(4):
        opt.zero_grad()
        model(Tiny().batches(step, range(1))[0][0]).pow(2).mean().backward()
        opt.step()
    for name, p in model.state_dict().items():
        torch.testing.assert_close(got[name], p, rtol=1e-6, atol=1e-7)
