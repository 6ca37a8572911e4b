"""Lion Cub's family (L1, Linf, L0 and ternary scales) against a plain reference written from the
paper's equations (Python floats and loops), for several N including 1, under every transport."""

import math

import pytest
import torch

from lionsim.strategies import STRATEGIES, ParamLayout, valid_transports
from tests.helpers.steps import BOUNDS, random_grads, run_strategy
from tests.reference.impl import sign


def ref_scale(kind, values):
    a = [abs(v) for v in values]
    if kind in ("l1", "ternary"):
        return sum(a) / len(a)
    if kind == "linf":
        return max(a)
    nonzero = [v for v in a if v > 0]
    return math.exp(sum(math.log(v) for v in nonzero) / len(nonzero)) if nonzero else 0.0


def ref_lioncub(x, grads, moms, lr, wd, b1, b2, kind):
    n = len(grads)
    s = 1 if kind == "ternary" else max(1, 127 // n)
    total = [0] * len(x)
    for g, m in zip(grads, moms):
        c = [b1 * mi + (1 - b1) * gi for gi, mi in zip(g, m)]
        for lo, hi in BOUNDS:
            scale = max(ref_scale(kind, c[lo:hi]), 1e-38)
            for j in range(lo, hi):
                total[j] += max(-s, min(s, round(c[j] / scale * s / 2)))
    new_moms = [[b2 * mi + (1 - b2) * gi for gi, mi in zip(g, m)] for g, m in zip(grads, moms)]
    return [xj * (1 - lr * wd) - lr * sign(t) for xj, t in zip(x, total)], new_moms


@pytest.mark.parametrize("workers", [1, 2, 3, 8])
@pytest.mark.parametrize("kind", ["l1", "linf", "l0", "ternary"])
def test_lioncub_family_equals_plain_reference_under_every_transport(workers, kind):
    grads = random_grads(workers, 5, seed=workers)
    grads[1][:, 3] = 0.0  # some exact zeros in g (l0 leaves them out of its mean)
    x0 = torch.randn(26)
    rx, rm = x0.double().tolist(), [[0.0] * 26 for _ in range(workers)]
    for g in grads:
        rx, rm = ref_lioncub(rx, g.double().tolist(), rm, 0.01, 0.1, 0.9, 0.99, kind)
    name = f"lioncub-{kind}"
    transports = valid_transports(STRATEGIES.get(name))
    assert "int8-allreduce" in transports and "packed-allreduce" in transports
    for transport in transports:
        x = x0.clone()
        run_strategy(name, transport, grads, x, lr=0.01, weight_decay=0.1)
        assert x.tolist() == pytest.approx(rx, abs=1e-5), transport


def test_lioncub_l0_scale_is_the_geometric_mean_of_the_nonzero_magnitudes():
    from lionsim.strategies.lioncub import l0_scale

    layout = ParamLayout.of([("a", torch.zeros(4)), ("z", torch.zeros(2))])
    c = torch.tensor([[2.0, -8.0, 0.0, 0.5, 0.0, 0.0]])
    torch.testing.assert_close(l0_scale(layout, c), torch.tensor([[2.0, 0.0]]))  # (2*8*0.5)^(1/3); all-zero -> 0
