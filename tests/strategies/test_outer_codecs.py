"""diloco-int8 and diloco-sign against references written from their semantics: W model copies,
each stepped by torch.optim.AdamW on its own batches; at each sync the outer gradient of each
tensor compressed coordinate by coordinate in plain Python loops (the stochastic rounding's
draws from tests/reference/impl.py's written-out hash), aggregated, and torch's Nesterov SGD step
on it."""

import copy

import pytest
import torch

from lionsim.backends import SimComm
from lionsim.runs import RunSpec
from lionsim.strategies import StrategyConfig
from lionsim.training.loop import Place, train_run
from lionsim.workloads import WorkloadConfig, build_workload
from tests.reference.impl import draw

STEPS, H, SEED, OUTER_LR, OUTER_MOMENTUM = 4, 2, 5, 0.7, 0.9
TINY = torch.finfo(torch.float32).tiny


def workload(workers: int):
    return build_workload(WorkloadConfig(name="mlp", workers=workers, batch_size=8, size="tiny", seed=3))


def int8_outer(deltas: list[list[float]], offset: int, step: int) -> list[float]:
    """One tensor's deltas per worker (flat, from flat position `offset`): a shared scale
    s = max over workers and coordinates of |delta|, L = 127 // W, each worker's level the
    stochastic rounding of delta / s * L (up with probability its fraction), clamped to +-L;
    the mean is s * sum of levels / (L W)."""
    workers = len(deltas)
    levels = 127 // workers
    s = max(max(abs(d) for d in row) for row in deltas)
    s = max(s, TINY)
    out = []
    for j in range(len(deltas[0])):
        total = 0
        for i in range(workers):
            x = float(torch.tensor(deltas[i][j]) / torch.tensor(s) * levels)  # float32, as sent
            low = float(torch.floor(torch.tensor(x)))
            level = low + (1.0 if draw(SEED, step, i, offset + j) < x - low else 0.0)
            total += int(min(max(level, -levels), levels))
        out.append(total * s / (levels * workers))
    return out


def sign_outer(deltas: list[list[float]], offset: int, step: int) -> list[float]:
    """Majority vote of sign(delta_i) (a tie, or every worker at 0, gives 0) times the workers'
    mean of each worker's mean |delta| over the tensor."""
    workers, n = len(deltas), len(deltas[0])
    scale = sum(sum(abs(d) for d in row) / n for row in deltas) / workers
    out = []
    for j in range(n):
        votes = sum((d > 0) - (d < 0) for d in (deltas[i][j] for i in range(workers)))
        out.append(((votes > 0) - (votes < 0)) * scale)
    return out


def reference(workers: int, outer_rule) -> torch.Tensor:
    wl = workload(workers)
    model = wl.model
    copies = [copy.deepcopy(model) for _ in range(workers)]
    inner = [torch.optim.AdamW(c.parameters(), lr=3e-3, betas=(0.9, 0.999), weight_decay=0.01) for c in copies]
    outer = torch.optim.SGD(model.parameters(), lr=OUTER_LR, momentum=OUTER_MOMENTUM, nesterov=True)
    for step in range(1, STEPS + 1):
        for i, (c, opt) in enumerate(zip(copies, inner)):
            x, y = wl.batches(step - 1, range(i, i + 1))[0]
            opt.zero_grad()
            wl.loss(c, x, y).backward()
            opt.step()
        if step % H == 0:
            offset = 0
            with torch.no_grad():
                for j, p in enumerate(model.parameters()):
                    deltas = [(p - list(c.parameters())[j]).reshape(-1).tolist() for c in copies]
                    p.grad = torch.tensor(outer_rule(deltas, offset, step), dtype=torch.float32).view_as(p)
                    offset += p.numel()
            outer.step()
            for c in copies:
                c.load_state_dict(model.state_dict())
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def lionsim(strategy: str, workers: int) -> torch.Tensor:
    wl = workload(workers)
    initial = {k: v.clone() for k, v in wl.model.state_dict().items()}
    cfg = StrategyConfig(lr=3e-3, weight_decay=0.01, betas=(0.9, 0.999), seed=SEED,
                         options={"local_steps": H, "outer_lr": OUTER_LR, "outer_momentum": OUTER_MOMENTUM})
    transport = "fp32-allreduce" if strategy == "diloco" else "int8-allreduce"
    record = train_run(RunSpec(strategy, transport), workload=wl, initial=initial,
                       place=Place(SimComm(workers)), strategy_cfg=cfg, steps=STEPS, eval_every=10**6)
    assert record.diverged_at is None
    return torch.cat([p.detach().reshape(-1) for p in wl.model.parameters()])


def assert_close_but_rounding_ties(got: torch.Tensor, expected: torch.Tensor) -> None:
    """Within 2e-5 everywhere but at most 1 coordinate in 1,000, each within 1e-3. The inner
    steps (lionsim's AdamW, torch's in the reference) agree to the last bits on one CPU and not on
    every other, and a stochastic rounding whose fraction sits that close to its draw rounds the
    other way: one level (s / (L W), under 1e-4 here, through the outer step's lr (1 + momentum))
    on that coordinate. (An Intel Xeon flips 1 of 2,762 at W = 2; a wrong codec moves hundreds.)"""
    off = (got - expected).abs()
    assert int((off > 2e-5).sum()) <= got.numel() // 1000, f"{int((off > 2e-5).sum())} coordinates differ"
    assert float(off.max()) <= 1e-3


@pytest.mark.parametrize("strategy,rule", [("diloco-int8", int8_outer), ("diloco-sign", sign_outer)])
@pytest.mark.parametrize("workers", [2, 3])  # 2: sign ties (0) happen; 3: L = 42
def test_outer_codec_equals_its_plain_loop(strategy, rule, workers):
    got = lionsim(strategy, workers)
    expected = reference(workers, rule)
    assert_close_but_rounding_ties(got, expected)
    exact = lionsim("diloco", workers)  # the codec shows: uncompressed DiLoCo lands elsewhere
    assert (exact - got).abs().max() > 1e-4  # 5x the tolerance (int8 at L >= 42 is close to exact)
