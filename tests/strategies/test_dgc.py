"""DGC (Lin et al. 2018) against a plain per-tensor reference: top-k per tensor, momentum
correction, local accumulation, momentum factor masking, the warm-up sparsity schedule, and
the wire bytes of each step's own payload."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import torch

from lionsim.backends import SimComm
from lionsim.cli.app import main
from lionsim.engine import train_step
from lionsim.errors import LionsimError
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig
from lionsim.strategies.core.given import flags
from lionsim.strategies.dgc import warmup_density
from lionsim.timing import Clock
from lionsim.transports import TRANSPORTS

NUMELS = [40, 7, 1, 100]  # a large tensor beside small ones (a bias, a scalar)
SMALL_TENSOR = slice(40, 47)


def reference_dgc(grads_per_step, x, *, lr, mu, density_of_step):
    """Plain DGC, per worker and per tensor, from the paper's equations (Algorithm 1, 2)."""
    workers, total = len(grads_per_step[0]), sum(NUMELS)
    u = [[0.0] * total for _ in range(workers)]
    v = [[0.0] * total for _ in range(workers)]
    sent_counts = []
    for step, grads in enumerate(grads_per_step, 1):
        density = density_of_step(step)
        summed = [0.0] * total
        count = 0
        for i in range(workers):
            for j in range(total):
                u[i][j] = mu * u[i][j] + grads[i][j]  # momentum correction
                v[i][j] = v[i][j] + u[i][j]  # local accumulation
            start = 0
            for n in NUMELS:
                k = max(1, math.ceil(density * n))
                chosen = sorted(range(start, start + n), key=lambda j: -abs(v[i][j]))[:k]
                for j in chosen:
                    summed[j] += v[i][j]
                    v[i][j] = 0.0  # sent: cleared
                    u[i][j] = 0.0  # momentum factor masking
                start += n
                count += k if i == 0 else 0
        x = [xj - lr * s / workers for xj, s in zip(x, summed)]
        sent_counts.append(count)
    return x, sent_counts


def paper_density(step, ratio, warmup):
    """The paper's warm-up (section 3.4) written out: sparsity 75%, 93.75%, 98.4375%, 99.6% in
    four equal stages of the K warm-up steps (the first K stages, a step each, when K < 4), never
    below the ratio; then the ratio."""
    if step > warmup:
        return ratio
    stages = [1 / 4, 1 / 16, 1 / 64, 1 / 256]
    stage = step - 1 if warmup < 4 else int((step - 1) // (warmup / 4))
    return max(ratio, stages[stage])


def make(workers, **cfg):
    layout = ParamLayout.of([(f"t{i}", torch.zeros(n)) for i, n in enumerate(NUMELS)])
    comm = SimComm(workers)
    return STRATEGIES.get("dgc")(StrategyConfig(**{k: v for k, v in cfg.items() if k not in flags()},
                                                   options={k: v for k, v in cfg.items() if k in flags()}), layout, comm), comm


def grads_for(workers, steps, seed):
    gen = torch.Generator().manual_seed(seed)
    grads = [torch.randn(workers, sum(NUMELS), generator=gen, dtype=torch.float64).float() for _ in range(steps)]
    for g in grads:
        g[:, SMALL_TENSOR] *= 1e-3  # a global cut would never pick this tensor
    return grads


@pytest.mark.parametrize("workers", [1, 3])
@pytest.mark.parametrize("ratio, warmup", [(0.1, 0), (0.05, 8)])
def test_dgc_equals_the_plain_per_tensor_algorithm(workers, ratio, warmup):
    grads = grads_for(workers, 10, seed=workers)
    x0 = torch.randn(sum(NUMELS))
    ref_x, ref_counts = reference_dgc([g.tolist() for g in grads], x0.tolist(), lr=0.05, mu=0.9,
                                      density_of_step=lambda s: paper_density(s, ratio, warmup))
    strategy, comm = make(workers, topk_ratio=ratio, dgc_warmup_steps=warmup, lr=0.05)
    transport = TRANSPORTS.get("sparse-allgather")()
    x, counts = x0.clone(), []
    for step, g in enumerate(grads, 1):
        sent = train_step(strategy, transport, comm, g.clone(), x, step, Clock())
        counts.append(sent.spec.k if sent.spec is not None else None)  # a lone worker sends nothing
    assert x.tolist() == pytest.approx(ref_x, abs=1e-5)
    assert counts == (ref_counts if workers > 1 else [None] * len(grads))  # each step's own payload


def test_every_tensor_sends_its_own_top_k():
    strategy, comm = make(2, topk_ratio=0.1)
    g = grads_for(2, 1, seed=5)[0]
    payload = strategy.encode(g, torch.zeros(sum(NUMELS)), comm, Clock())
    starts = [0, 40, 47, 48, 148]
    for i in range(2):
        idx = payload.indices[i].tolist()
        for t, n in enumerate(NUMELS):
            mine = [j for j in idx if starts[t] <= j < starts[t + 1]]
            k = max(1, math.ceil(0.1 * n))  # 4, 1, 1, 10
            assert len(mine) == k
            top = g[i, starts[t]:starts[t + 1]].abs().topk(k).indices + starts[t]
            assert sorted(mine) == sorted(top.tolist())
    assert payload.spec.k == 16


def test_warmup_follows_the_papers_four_stages():
    densities = [warmup_density(s, 0.001, 8) for s in range(1, 11)]
    assert densities == [0.25, 0.25, 1 / 16, 1 / 16, 1 / 64, 1 / 64, 1 / 256, 1 / 256, 0.001, 0.001]
    assert [warmup_density(s, 0.05, 4) for s in range(1, 6)] == [0.25, 1 / 16, 0.05, 0.05, 0.05]  # never below the ratio
    assert warmup_density(1, 0.01, 0) == 0.01


def test_bad_warmup_is_rejected():
    with pytest.raises(LionsimError, match="dgc-warmup-steps"):
        make(2, dgc_warmup_steps=-1)
    with pytest.raises(SystemExit) as info:
        main(["bench", "-s", "dgc", "--dgc-warmup-steps", "-2", "--steps", "2"])
    assert info.value.code != 0


@pytest.mark.slow
def test_bench_books_the_bytes_each_step_sent(tmp_path):
    """wire_bytes follows the step's own payload: 4 warm-up stages of 2 steps, then steady."""
    out = tmp_path / "dgc"
    with pytest.raises(SystemExit) as info:
        main(["bench", "--workload", "mlp", "--workers", "3", "--steps", "10", "--batch-size", "8", "--eval-every", "10",
              "--network", "1gbe", "-s", "dgc", "--topk-ratio", "0.001", "--dgc-warmup-steps", "8", "--out", str(out)])
    assert info.value.code == 0
    steps = pd.read_csv(out / "steps.csv")
    layout_numels = [p.numel() for p in _mlp_parameters()]
    expected = []
    for step in range(1, 11):
        k = sum(max(1, math.ceil(paper_density(step, 0.001, 8) * n)) for n in layout_numels)
        # two all-gathers (int32 indices, fp32 values) of 3 x k x 4 bytes: each worker sends 2/3 of each
        expected.append(2 * math.ceil(2 / 3 * 3 * k * 4 - 1e-9))
    assert steps.sort_values("step").wire_bytes.tolist() == expected
    assert expected[0] > expected[2] > expected[4] > expected[6] > expected[8]


def _mlp_parameters():
    from lionsim.workloads import WorkloadConfig, build_workload

    workload = build_workload(WorkloadConfig(name="mlp", workers=3, batch_size=8, seed=0, size="small"))
    return [p for p in workload.model.parameters() if p.requires_grad]


@pytest.mark.parametrize("warmup,expected", [
    (1, [1 / 4]), (2, [1 / 4, 1 / 16]), (3, [1 / 4, 1 / 16, 1 / 64]), (4, [1 / 4, 1 / 16, 1 / 64, 1 / 256]),
    (8, [1 / 4, 1 / 4, 1 / 16, 1 / 16, 1 / 64, 1 / 64, 1 / 256, 1 / 256]),
    (6, [1 / 4, 1 / 4, 1 / 16, 1 / 64, 1 / 64, 1 / 256]),
])
def test_dgc_warmup_steps_through_its_stages_in_order_without_skipping(warmup, expected):
    """The paper's stages 75%, 93.75%, 98.4375%, 99.6% sparsity, in order; with fewer than four
    warm-up steps, the first of them (one step each), never one skipped; then the ratio."""
    from lionsim.strategies.dgc import warmup_density

    got = [warmup_density(step, 0.001, warmup) for step in range(1, warmup + 3)]
    assert got == expected + [0.001, 0.001]
    assert all(before / after in (1.0, 4.0) for before, after in zip(got[: warmup - 1], got[1:warmup]))
