"""The pure update rules and the optimizer against independent references."""

import pytest
import torch

from lionsim.optim import DistributedLion
from lionsim.optim.functional import adamw_update_, lion_update_, sgdm_update_, sign_votes
from tests.reference.impl import lion_pytorch_update_, lion_step


def test_lion_update_matches_plain_lion_over_steps():
    torch.manual_seed(0)
    x = torch.randn(50, dtype=torch.float64)
    m = torch.zeros(50, dtype=torch.float64)
    rx, rm = x.tolist(), m.tolist()
    for _ in range(20):
        g = torch.randn(50, dtype=torch.float64)
        g[:3] = 0.0  # zero gradient on fresh momentum: sign(0) = 0, no update
        lion_update_(x, g, m, lr=0.01, weight_decay=0.1, beta1=0.9, beta2=0.99)
        rx, rm = lion_step(rx, g.tolist(), rm, 0.01, 0.1, 0.9, 0.99)
        assert x.tolist() == pytest.approx(rx, abs=1e-12)
        assert m.tolist() == pytest.approx(rm, abs=1e-12)


def test_adamw_and_sgdm_match_torch_optim():
    torch.manual_seed(1)
    p0 = torch.randn(30)
    ours_a, ours_s = p0.clone(), p0.clone()
    m, v, buf = torch.zeros(30), torch.zeros(30), torch.zeros(30)
    ref_a = torch.nn.Parameter(p0.clone())
    ref_s = torch.nn.Parameter(p0.clone())
    adam = torch.optim.AdamW([ref_a], lr=1e-2, betas=(0.9, 0.999), weight_decay=0.05, eps=1e-8)
    sgd = torch.optim.SGD([ref_s], lr=0.1, momentum=0.9, weight_decay=0.01)
    for step in range(1, 11):
        g = torch.randn(30)
        adamw_update_(ours_a, g, m, v, step, 1e-2, 0.05, 0.9, 0.999)
        sgdm_update_(ours_s, g, buf, 0.1, 0.01, 0.9)
        ref_a.grad, ref_s.grad = g.clone(), g.clone()
        adam.step()
        sgd.step()
    torch.testing.assert_close(ours_a, ref_a.detach())
    torch.testing.assert_close(ours_s, ref_s.detach())


def test_sign_votes_tie_and_zero_rules():
    x = torch.tensor([[0.5, -0.2, 0.0]])
    assert sign_votes(x, workers=1).tolist() == [[1, -1, 0]]  # alone: sign(0) = 0, exactly Lion
    assert sign_votes(x, workers=4).tolist() == [[1, -1, 0]]  # an exact zero abstains for every N


def test_distributed_lion_without_process_group_is_exactly_lion():
    torch.manual_seed(2)
    model = torch.nn.Linear(6, 3)
    twin = torch.nn.Linear(6, 3)
    twin.load_state_dict(model.state_dict())
    opt = DistributedLion(model.parameters(), lr=1e-2, weight_decay=0.1)
    moms = [torch.zeros_like(p) for p in twin.parameters()]
    for _ in range(5):
        inputs = torch.randn(8, 6)
        for net in (model, twin):
            net.zero_grad()
            net(inputs).pow(2).mean().backward()
        opt.step()
        with torch.no_grad():
            for p, mom in zip(twin.parameters(), moms):
                lion_pytorch_update_(p, p.grad, mom, 1e-2, 0.1, 0.9, 0.99)
    for a, b in zip(model.parameters(), twin.parameters()):
        assert torch.equal(a, b)


def test_distributed_lion_alone_skips_a_parameter_without_gradient_as_lion_does():
    """World size 1: p.grad None means no decay, no momentum, no update (REFERENCE.md 1 otherwise)."""
    used, unused = torch.nn.Parameter(torch.tensor([0.5, -1.0, 2.0])), torch.nn.Parameter(torch.ones(2))
    opt = DistributedLion([used, unused], lr=0.1, weight_decay=0.5)
    x, m = used.tolist(), [0.0] * 3
    for step in range(3):
        opt.zero_grad()
        (used * torch.tensor([1.0, -2.0, 0.25 * step])).sum().backward()
        opt.step()
        x, m = lion_step(x, [1.0, -2.0, 0.25 * step], m, 0.1, 0.5, 0.9, 0.99)
    assert used.tolist() == pytest.approx(x, abs=1e-6)
    assert unused.tolist() == [1.0, 1.0] and unused not in opt.state


def test_distributed_lion_rejects_bad_arguments():
    params = [torch.nn.Parameter(torch.zeros(2))]
    with pytest.raises(ValueError, match="unknown vote rule 'median'"):
        DistributedLion(params, vote="median")
    with pytest.raises(ValueError, match="cannot carry votes"):
        DistributedLion(params, transport="fp32-allreduce")
    for lr in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="learning rate"):
            DistributedLion(params, lr=lr)
    with pytest.raises(ValueError, match="weight_decay"):
        DistributedLion(params, weight_decay=-0.1)
