"""QSGD against a plain reference with the same counter-hash draws, and its fixed-width price."""

import math

import pytest
import torch

from lionsim.backends import SimComm
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig
from lionsim.timing import Clock
from lionsim.transports import TRANSPORTS
from tests.helpers.steps import BOUNDS, SEGMENTS, random_grads, run_strategy
from tests.reference.impl import draw, sign


@pytest.mark.parametrize("workers", [1, 2, 4])
def test_qsgd_equals_plain_reference_with_the_same_draws(workers):
    grads = random_grads(workers, 3, seed=20 + workers)
    s, lr, mu = 3, 0.05, 0.9
    x0 = torch.randn(26)
    rx, buf = x0.double().tolist(), [0.0] * 26
    for step, g in enumerate(grads, 1):
        u = [[draw(5, step, w, j) for j in range(26)] for w in range(workers)]  # seed 5, per worker
        mean = [0.0] * 26
        for w, row in enumerate(g.tolist()):
            for lo, hi in BOUNDS:
                norm = math.sqrt(sum(v * v for v in row[lo:hi]))
                for j in range(lo, hi):
                    r = abs(row[j]) / norm * s
                    level = sign(row[j]) * (math.floor(r) + (1 if u[w][j] < r - math.floor(r) else 0))
                    mean[j] += norm / s * level / workers
        buf = [mu * b + d for b, d in zip(buf, mean)]
        rx = [xj - lr * b for xj, b in zip(rx, buf)]
    x = x0.clone()
    run_strategy("qsgd", "allgather-levels", grads, x, lr=lr, weight_decay=0.0, seed=5, qsgd_levels=s)
    assert x.tolist() == pytest.approx(rx, abs=1e-5)


def test_qsgd_is_priced_at_its_fixed_width():
    """(Its unbiasedness: tests/strategies/test_paper_references.py, within a bound from its variance.)"""
    layout = ParamLayout.of(SEGMENTS)
    strategy = STRATEGIES.get("qsgd")(StrategyConfig(seed=2, options={"qsgd_levels": 2}), layout, SimComm(2))
    payload = strategy.encode(torch.randn(2, 26, generator=torch.Generator().manual_seed(6)), torch.zeros(26),
                              SimComm(2), Clock())
    assert payload.values.abs().max() <= 2
    up, down = TRANSPORTS.get("allgather-levels")().bits_per_param(strategy.payload_spec(), 2)
    assert up == pytest.approx(3 + 32 * 2 / 26) and down == up  # ceil(log2 3) + 1 bits, a float norm per tensor
