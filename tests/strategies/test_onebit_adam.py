"""1-bit Adam against a plain reference written from the paper's equations, and its options."""

import math

import pytest
import torch

from lionsim.backends import SimComm
from lionsim.errors import LionsimError
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig
from lionsim.transports import TRANSPORTS
from tests.helpers.cli import one_line_exit_2
from tests.helpers.spared import INITIAL, train
from tests.helpers.steps import SEGMENTS, random_grads, run_strategy


def ref_onebit(x, grads_per_step, lr, wd, b1, b2, freeze, eps=1e-8):
    workers, n = len(grads_per_step[0]), len(x)
    m, v = [0.0] * n, [0.0] * n
    e_w = [[0.0] * n for _ in range(workers)]
    chunk = 8 * -(-n // (8 * workers))
    e_s = [0.0] * n  # the server error of position p lives on the worker that owns p's chunk
    for t, grads in enumerate(grads_per_step, 1):
        if t <= freeze:
            g = [sum(row[j] for row in grads) / workers for j in range(n)]
            m = [b1 * mj + (1 - b1) * gj for mj, gj in zip(m, g)]
            v = [b2 * vj + (1 - b2) * gj * gj for vj, gj in zip(v, g)]
        else:
            local = [[b1 * mj + (1 - b1) * gj for mj, gj in zip(m, row)] for row in grads]
            if workers > 1:
                sent = []
                for w in range(workers):
                    xw = [a + b for a, b in zip(local[w], e_w[w])]
                    scale = math.sqrt(sum(a * a for a in xw) / n)
                    signs = [1.0 if a >= 0 else -1.0 for a in xw]
                    e_w[w] = [a - scale * s for a, s in zip(xw, signs)]
                    sent.append([scale * s for s in signs])
                for i in range(workers):
                    own = range(i * chunk, min(n, (i + 1) * chunk))
                    y = {p: sum(row[p] for row in sent) / workers + e_s[p] for p in own}
                    scale = math.sqrt(sum(a * a for a in y.values()) / max(1, len(y)))
                    for p in own:
                        s = 1.0 if y[p] >= 0 else -1.0
                        e_s[p] = y[p] - scale * s
                        m[p] = scale * s
            else:
                m = local[0]
        x = [xj - lr * (mj / (math.sqrt(vj) + eps) + wd * xj) for xj, mj, vj in zip(x, m, v)]
    return x


@pytest.mark.parametrize("workers", [1, 2, 3, 5])
def test_onebit_adam_equals_plain_reference(workers):
    grads = random_grads(workers, 7, seed=30 + workers)
    x0 = torch.randn(26)
    rx = ref_onebit(x0.double().tolist(), [g.double().tolist() for g in grads], 0.01, 0.1, 0.9, 0.999, freeze=3)
    x = x0.clone()
    _, sent = run_strategy("onebit-adam", "compressed-allreduce", grads, x, lr=0.01, weight_decay=0.1, freeze_steps=3)
    assert x.tolist() == pytest.approx(rx, abs=1e-4)
    if workers > 1:  # the warm-up is priced as an fp32 all-reduce, then the compressed exchange
        assert [s.spec.kind for s in sent] == ["dense"] * 3 + ["onebit"] * 4
        t = TRANSPORTS.get("compressed-allreduce")()
        assert [c.op for c in t.plan(sent[0].spec, workers)] == ["all_reduce"]
        assert [c.op for c in t.plan(sent[-1].spec, workers)] == ["all_to_all", "all_gather", "all_gather", "all_gather"]


def test_onebit_adam_rejects_negative_freeze_steps():
    with pytest.raises(LionsimError, match="bad --freeze-steps -1"):
        STRATEGIES.get("onebit-adam")(StrategyConfig(options={"freeze_steps": -1}), ParamLayout.of(SEGMENTS), SimComm(2))


def test_onebit_adam_refuses_no_warmup_with_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    err = one_line_exit_2(["bench", "-w", "mlp", "-n", "2", "--steps", "8", "-s", "onebit-adam", "--freeze-steps", "0"],
                          capsys)
    assert "--freeze-steps 0" in err and "from 1 to 10,000,000" in err and "warm-up" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("wd", [0.0, 0.1])
def test_onebit_adam_masks_what_the_warmup_never_saw_as_deepspeed(wd):
    """Rows 6..11 have a zero gradient on every step: v = 0 at the freeze, so their momentum is
    masked and they move by weight decay alone, p (1 - lr wd) per step (DeepSpeed's update);
    before, the compressed momentum over sqrt(0) + eps threw them to about 1e4."""
    lr, steps = 0.01, 12
    got = train("onebit-adam", "compressed-allreduce", 3, steps, lr=lr, weight_decay=wd, freeze_steps=3)
    rows = INITIAL["emb.weight"][6:]
    torch.testing.assert_close(got["emb.weight"][6:], rows * (1 - lr * wd) ** steps, rtol=1e-6, atol=0)
    assert not torch.allclose(got["emb.weight"][:6], INITIAL["emb.weight"][:6])  # the used rows train
    assert torch.equal(got["spare.weight"], INITIAL["spare.weight"])  # no gradient anywhere: untouched
