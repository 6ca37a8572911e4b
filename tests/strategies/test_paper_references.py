"""Strategies against references written here from the papers' equations (Python floats and
loops, per worker and coordinate): signum-mv and EF-signSGD over several steps, TernGrad's
update; the unbiasedness of QSGD and TernGrad within a bound from their variance; Lion Cub end
to end, gradients included, up to 64 virtual workers."""

import math

import pytest
import torch

from lionsim.backends import SimComm
from lionsim.engine import train_step
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig, valid_transports
from lionsim.timing import Clock
from lionsim.transports import TRANSPORTS
from tests.reference.impl import draw, sign

SHAPES = [(6, 3), (5,), (1,)]  # a matrix, a vector, a scalar: 24 parameters
BOUNDS = [(0, 18), (18, 23), (23, 24)]
P = 24


def run(name, transport, grads_per_step, x, **cfg):
    layout = ParamLayout.of([(f"t{i}", torch.zeros(s)) for i, s in enumerate(SHAPES)])
    comm = SimComm(grads_per_step[0].shape[0])
    strategy = STRATEGIES.get(name)(StrategyConfig(**cfg), layout, comm)
    for step, g in enumerate(grads_per_step, 1):
        train_step(strategy, TRANSPORTS.get(transport)(), comm, g.clone(), x, step, Clock())
    return strategy


def grads(workers, steps, seed, zeros=()):
    gen = torch.Generator().manual_seed(seed)
    out = [torch.randn(workers, P, generator=gen) for _ in range(steps)]
    for g in out:
        g[:, list(zeros)] = 0.0  # coordinates no batch touches
    return out


# ---- signum with majority vote: m = b1 m + (1-b1) g; x = x (1 - lr wd) - lr sign(sum_i sign(m_i)) ----

@pytest.mark.parametrize("workers", [1, 2, 3, 5])
def test_signum_mv_equals_a_plain_loop(workers):
    gs = grads(workers, 5, seed=workers, zeros=[7])
    lr, wd, b1 = 0.01, 0.1, 0.9
    x0 = torch.randn(P)
    rx, rm = x0.double().tolist(), [[0.0] * P for _ in range(workers)]
    for g in gs:
        rm = [[b1 * m + (1 - b1) * v for m, v in zip(rm[i], g[i].tolist())] for i in range(workers)]
        vote = [sign(sum(sign(rm[i][j]) for i in range(workers))) for j in range(P)]
        rx = [xj * (1 - lr * wd) - lr * vj for xj, vj in zip(rx, vote)]
    for transport in valid_transports(STRATEGIES.get("signum-mv")):
        x = x0.clone()
        run("signum-mv", transport, gs, x, lr=lr, weight_decay=wd, betas=(b1, 0.9))
        assert x.tolist() == pytest.approx(rx, abs=1e-6), transport
        assert x[7].item() == pytest.approx(x0[7].item() * (1 - lr * wd) ** 5)  # nobody votes: decay only


# ---- EF-signSGD (Karimireddy et al. 2019, Algorithm 1, per tensor, per worker) ----

def ef_signsgd_reference(x, gs, lr, wd):
    workers = len(gs[0])
    e = [[0.0] * P for _ in range(workers)]
    for g in gs:
        mean = [0.0] * P
        for i in range(workers):
            p = [lr * v + ev for v, ev in zip(g[i], e[i])]
            for lo, hi in BOUNDS:
                scale = sum(abs(v) for v in p[lo:hi]) / (hi - lo)  # ||p||_1 / d
                for j in range(lo, hi):
                    delta = scale * sign(p[j])  # sign(0) = 0
                    e[i][j] = p[j] - delta
                    mean[j] += delta / workers
        x = [xj * (1 - lr * wd) - mj for xj, mj in zip(x, mean)]
    return x


@pytest.mark.parametrize("workers", [1, 2, 4])
def test_ef_signsgd_equals_a_plain_loop_over_steps(workers):
    gs = grads(workers, 6, seed=10 + workers, zeros=[2, 20])
    x0 = torch.randn(P)
    expected = ef_signsgd_reference(x0.double().tolist(), [g.double().tolist() for g in gs], 0.1, 0.01)
    x = x0.clone()
    run("ef-signsgd", "allgather-1bit", gs, x, lr=0.1, weight_decay=0.01)
    assert x.tolist() == pytest.approx(expected, abs=1e-5)
    assert x[20].item() == pytest.approx(x0[20].item() * (1 - 0.1 * 0.01) ** 6)  # no gradient: decay only


# ---- TernGrad's update: g_mean = s_t sum_i t_i / N; SGD momentum ----

def test_terngrad_update_equals_a_plain_loop_with_the_same_draws():
    from tests.strategies.test_terngrad import reference_clip

    workers, lr, mu, seed = 3, 0.05, 0.9, 4
    gs = grads(workers, 4, seed=21)
    x0 = torch.randn(P)
    rx, buf = x0.double().tolist(), [0.0] * P
    for step, g in enumerate(gs, 1):
        clipped = [sum((reference_clip(g[i, lo:hi].tolist()) for lo, hi in BOUNDS), []) for i in range(workers)]
        mean = [0.0] * P
        for lo, hi in BOUNDS:
            s = max(abs(clipped[i][j]) for i in range(workers) for j in range(lo, hi))
            for j in range(lo, hi):
                for i in range(workers):
                    t = sign(clipped[i][j]) if draw(seed, step, i, j) < abs(clipped[i][j]) / s else 0.0
                    mean[j] += s * t / workers
        buf = [mu * b + m for b, m in zip(buf, mean)]
        rx = [xj - lr * b for xj, b in zip(rx, buf)]
    for transport in valid_transports(STRATEGIES.get("terngrad")):
        x = x0.clone()
        run("terngrad", transport, gs, x, lr=lr, weight_decay=0.0, betas=(mu, 0.0), seed=seed)
        assert x.tolist() == pytest.approx(rx, abs=1e-5), transport


# ---- unbiasedness, with a bound from the variance ----

DRAWS = 2000
SIGMAS = 5.0
"""Each coordinate's mean over DRAWS independent draws must lie within 5 standard errors of the
truth; a standard error is sqrt(Var / DRAWS) with Var the quantizer's exact per-coordinate
variance. For a normal mean the chance of exceeding 5 sigma is 5.7e-7 per coordinate (24
coordinates: about 1e-5), and the seed is fixed, so the test is deterministic."""


def check_unbiased(decoded: torch.Tensor, truth: torch.Tensor, variance: torch.Tensor) -> None:
    """decoded [DRAWS, P] (float64) against truth [P] with the per-draw variance [P]."""
    bound = SIGMAS * (variance / DRAWS).sqrt() + 1e-6  # + float32 rounding where the variance is 0
    error = (decoded.mean(0) - truth).abs()
    assert bool((error <= bound).all()), (error - bound).max()
    assert bool((variance > 0).sum() >= P // 2)  # the bound is not vacuous: most coordinates are random


def test_qsgd_is_unbiased_within_five_standard_errors():
    """E[||g|| / s * l] = g, Var = (||g|| / s)^2 p (1 - p), p = r - floor(r), r = s |g| / ||g||."""
    s = 2
    layout = ParamLayout.of([(f"t{i}", torch.zeros(sh)) for i, sh in enumerate(SHAPES)])
    strategy = STRATEGIES.get("qsgd")(StrategyConfig(seed=2, options={"qsgd_levels": s}), layout, SimComm(1))
    g = grads(1, 1, seed=30)[0]
    decoded = []
    for _ in range(DRAWS):  # each encode is a new step: fresh draws
        payload = strategy.encode(g, torch.zeros(P), SimComm(1), Clock())
        decoded.append((payload.values.double() * payload.scales.double()[:, layout.segment_ids])[0])
    norms = torch.zeros(P, dtype=torch.float64)
    for lo, hi in BOUNDS:
        norms[lo:hi] = g[0, lo:hi].double().norm()
    r = s * g[0].double().abs() / norms
    p = r - r.floor()
    check_unbiased(torch.stack(decoded), g[0].double(), (norms / s) ** 2 * p * (1 - p))


def test_terngrad_is_unbiased_for_the_clipped_gradient_within_five_standard_errors():
    """E[s t] = clip(g), Var = s^2 q (1 - q), q = |clip(g)| / s."""
    from tests.strategies.test_terngrad import reference_clip

    layout = ParamLayout.of([(f"t{i}", torch.zeros(sh)) for i, sh in enumerate(SHAPES)])
    strategy = STRATEGIES.get("terngrad")(StrategyConfig(seed=3), layout, SimComm(1))
    g = grads(1, 1, seed=31)[0]
    clipped = torch.tensor(sum((reference_clip(g[0, lo:hi].tolist()) for lo, hi in BOUNDS), []), dtype=torch.float64)
    decoded = []
    for _ in range(DRAWS):
        payload = strategy.encode(g, torch.zeros(P), SimComm(1), Clock())
        decoded.append(payload.values[0].double() * strategy.scales.double()[layout.segment_ids])
    s = torch.zeros(P, dtype=torch.float64)
    for lo, hi in BOUNDS:
        s[lo:hi] = clipped[lo:hi].abs().max()
    q = clipped.abs() / s
    check_unbiased(torch.stack(decoded), clipped, s * s * q * (1 - q))


# ---- Lion Cub end to end: gradients, L1 levels, the int8 sum, sign ----

def lioncub_reference(workers: int, steps: int, lr: float, wd: float, b1: float, b2: float):
    """Each worker's model copy computes its gradient; then Lion Cub L1 in Python floats:
    q = clip(round(c / mean|c| * s/2), -s, s) per tensor, s = floor(127 / N), x -= lr (sign(sum q) + wd x)."""
    from lionsim.workloads import WorkloadConfig, build_workload

    wl = build_workload(WorkloadConfig(name="mlp", workers=workers, batch_size=4, size="tiny", seed=1))
    model = wl.model
    shapes = [p.shape for p in model.parameters()]
    bounds, start = [], 0
    for sh in shapes:
        bounds.append((start, start + math.prod(sh)))
        start += math.prod(sh)
    x = torch.cat([p.detach().reshape(-1) for p in model.parameters()]).double().tolist()
    m = [[0.0] * start for _ in range(workers)]
    s = max(1, 127 // workers)
    for step in range(steps):
        total = [0] * start
        for i, (inputs, targets) in enumerate(wl.batches(step, range(workers))):
            model.zero_grad()
            wl.loss(model, inputs, targets).backward()
            g = torch.cat([p.grad.reshape(-1) for p in model.parameters()]).double().tolist()
            c = [b1 * mj + (1 - b1) * gj for mj, gj in zip(m[i], g)]
            for lo, hi in bounds:
                scale = sum(abs(v) for v in c[lo:hi]) / (hi - lo)
                for j in range(lo, hi):
                    total[j] += max(-s, min(s, round(c[j] / scale * s / 2)))
            m[i] = [b2 * mj + (1 - b2) * gj for mj, gj in zip(m[i], g)]
        x = [xj * (1 - lr * wd) - lr * sign(t) for xj, t in zip(x, total)]
        with torch.no_grad():  # the model moves to the new x for the next step's gradients
            flat = torch.tensor(x, dtype=torch.float32)
            offset = 0
            for p in model.parameters():
                p.copy_(flat[offset : offset + p.numel()].view_as(p))
                offset += p.numel()
    return torch.tensor(x)


@pytest.mark.parametrize("workers", [2, 64])
def test_lioncub_end_to_end_up_to_64_workers(workers):
    from lionsim.runs import RunSpec
    from lionsim.training.loop import Place, train_run
    from lionsim.workloads import WorkloadConfig, build_workload

    steps, lr, wd = 3, 0.01, 0.1
    wl = build_workload(WorkloadConfig(name="mlp", workers=workers, batch_size=4, size="tiny", seed=1))
    wl.gradients = "loop"  # the reference's own per-worker backward: the same gradients bit for bit
    initial = {k: v.clone() for k, v in wl.model.state_dict().items()}
    cfg = StrategyConfig(lr=lr, weight_decay=wd, betas=(0.9, 0.99))
    train_run(RunSpec("lioncub-l1", "int8-allreduce"), workload=wl, initial=initial, place=Place(SimComm(workers)),
              strategy_cfg=cfg, steps=steps, eval_every=10**6)
    got = torch.cat([p.detach().reshape(-1) for p in wl.model.parameters()])
    expected = lioncub_reference(workers, steps, lr, wd, 0.9, 0.99)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-5)
