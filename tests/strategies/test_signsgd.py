"""signSGD with majority vote against a plain vote written from the paper's equations."""

import pytest
import torch

from lionsim.strategies import STRATEGIES, valid_transports
from tests.helpers.steps import random_grads, run_strategy
from tests.reference.impl import sign


@pytest.mark.parametrize("workers", [1, 2, 3, 6])
def test_signsgd_equals_plain_majority_vote(workers):
    grads = random_grads(workers, 4, seed=10 + workers)
    x0 = torch.randn(26)
    rx = x0.double().tolist()
    for g in grads:
        votes = [[1.0 if v > 0 else -1.0 for v in row] for row in g.tolist()] if workers > 1 else \
            [[sign(v) for v in g[0].tolist()]]
        rx = [xj * (1 - 0.01 * 0.1) - 0.01 * sign(sum(vo[j] for vo in votes)) for j, xj in enumerate(rx)]
    for transport in valid_transports(STRATEGIES.get("signsgd")):
        x = x0.clone()
        run_strategy("signsgd", transport, grads, x, lr=0.01, weight_decay=0.1)
        assert x.tolist() == pytest.approx(rx, abs=1e-6), transport
