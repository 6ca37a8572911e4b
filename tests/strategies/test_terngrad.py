"""TernGrad (Wen et al. 2017) against a plain reference: per-layer clipping at 2.5 sigma
(section 3.3), the shared per-tensor scale, and the stochastic ternaries drawn from the same
counter-hash draws written out in tests/reference/impl.py (per worker, so gloo draws alike)."""

from __future__ import annotations

import math

import pytest
import torch

from lionsim.backends import SimComm
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig
from lionsim.timing import Clock
from tests.reference.impl import draw

NUMELS = [30, 9, 1]  # a weight, a bias, a scalar (sigma = 0: nothing to clip)
SEED = 3


def reference_clip(values: list[float], c: float = 2.5) -> list[float]:
    """g <- clip(g, -c sigma, c sigma), sigma the population standard deviation of the layer."""
    n = len(values)
    mean = sum(values) / n
    sigma = math.sqrt(sum((v - mean) ** 2 for v in values) / n)
    if sigma == 0:
        return list(values)
    return [min(max(v, -c * sigma), c * sigma) for v in values]


def reference_terngrad(grads: torch.Tensor) -> tuple[list[float], torch.Tensor]:
    """Per-tensor scales and the ternaries of every worker, as the paper's equations say."""
    workers = grads.shape[0]
    clipped = [[] for _ in range(workers)]
    for i in range(workers):
        start = 0
        for n in NUMELS:
            clipped[i] += reference_clip(grads[i, start:start + n].tolist())
            start += n
    scales, start = [], 0
    for n in NUMELS:  # shared scale: max over workers of max |clipped g| of the tensor
        scales.append(max(abs(clipped[i][j]) for i in range(workers) for j in range(start, start + n)))
        start += n
    uniform = torch.tensor([[draw(SEED, 1, i, j) for j in range(sum(NUMELS))] for i in range(workers)])
    ternary = torch.zeros(workers, sum(NUMELS), dtype=torch.int8)
    for i in range(workers):
        start = 0
        for t, n in enumerate(NUMELS):
            for j in range(start, start + n):
                g = clipped[i][j]
                if uniform[i, j].item() < abs(g) / scales[t]:  # Bernoulli(|g| / s)
                    ternary[i, j] = 1 if g > 0 else -1
            start += n
    return scales, ternary


def make(workers):
    layout = ParamLayout.of([(f"t{i}", torch.zeros(n)) for i, n in enumerate(NUMELS)])
    return STRATEGIES.get("terngrad")(StrategyConfig(seed=SEED), layout, SimComm(workers)), SimComm(workers)


@pytest.mark.parametrize("workers", [1, 4])
def test_terngrad_clips_each_layer_at_2_5_sigma_then_ternarizes(workers):
    grads = torch.randn(workers, sum(NUMELS), generator=torch.Generator().manual_seed(workers))
    grads[0, 5] = 40.0  # an outlier of the weight: the unclipped scale would be 40
    grads[:, 39] = 7.0  # the scalar: sigma = 0, kept whole
    scales, ternary = reference_terngrad(grads)
    strategy, comm = make(workers)
    payload = strategy.encode(grads, torch.zeros(sum(NUMELS)), comm, Clock())
    torch.testing.assert_close(strategy.scales, torch.tensor(scales), rtol=1e-5, atol=0)
    assert strategy.scales[0] < 40.0 / 2  # the outlier no longer sets the weight's scale
    assert strategy.scales[2] == 7.0
    assert torch.equal(payload.values, ternary)
