"""Strategies through the step template, against the plain reference of REFERENCE.md."""

import pytest
import torch

from lionsim.backends import SimComm
from lionsim.engine import train_step
from lionsim.strategies import STRATEGIES, MomentumSync, ParamLayout, StrategyConfig, valid_transports
from lionsim.strategies.lioncub import l1_levels
from lionsim.timing import Clock
from lionsim.transports import TRANSPORTS
from lionsim.strategies.core.given import flags
from tests.reference.impl import dlion_step, lion_pytorch_update_

SEGMENTS = [("w", torch.zeros(7, 3)), ("b", torch.zeros(5))]  # 26 parameters in two tensors


def make(name, workers, **cfg):
    layout = ParamLayout.of(SEGMENTS)
    comm = SimComm(workers)
    strategy = STRATEGIES.get(name)(StrategyConfig(**{k: v for k, v in cfg.items() if k not in flags()},
                                                   options={k: v for k, v in cfg.items() if k in flags()}), layout, comm)
    return strategy, comm, layout


def run_steps(name, transport, grads_per_step, params, **cfg):
    strategy, comm, _ = make(name, grads_per_step[0].shape[0], **cfg)
    t = TRANSPORTS.get(transport)()
    clock = Clock()
    for step, grads in enumerate(grads_per_step, 1):
        train_step(strategy, t, comm, grads.clone(), params, step, clock)
    return strategy


@pytest.mark.parametrize("workers", [3, 4])
@pytest.mark.parametrize("vote", ["mavo", "avg"])
def test_dlion_equals_plain_algorithm_1_under_every_transport(workers, vote):
    torch.manual_seed(workers)
    grads = [torch.randn(workers, 26, dtype=torch.float64).float() for _ in range(6)]
    x0 = torch.randn(26)
    rx, rm = x0.tolist(), [[0.0] * 26 for _ in range(workers)]
    for g in grads:
        rx, rm = dlion_step(rx, g.tolist(), rm, 0.01, 0.1, 0.9, 0.99, vote)
    for transport in valid_transports(STRATEGIES.get(f"dlion-{vote}")):
        x = x0.clone()
        run_steps(f"dlion-{vote}", transport, grads, x, lr=0.01, weight_decay=0.1)
        assert x.tolist() == pytest.approx(rx, abs=1e-6), transport


def test_dlion_with_one_worker_is_lion_even_on_zero_updates():
    torch.manual_seed(0)
    grads = [torch.randn(1, 26) for _ in range(5)]
    grads[0][0, :4] = 0.0  # c = 0 exactly: Lion leaves these coordinates alone
    x, ref = torch.randn(26), None
    ref = x.clone()
    mom = torch.zeros(26)
    run_steps("dlion-mavo", "int8-allreduce", grads, x, lr=0.01, weight_decay=0.1)
    for g in grads:
        lion_pytorch_update_(ref, g[0], mom, 0.01, 0.1, 0.9, 0.99)
    assert torch.equal(x, ref)


@pytest.mark.parametrize("name", ["dlion-mavo", "dlion-avg"])
def test_n_workers_fed_the_same_gradients_equal_lion(name):
    torch.manual_seed(1)
    grads = [torch.randn(1, 26).expand(5, 26) for _ in range(5)]  # no exact zeros in c
    x = torch.randn(26)
    ref, mom = x.clone(), torch.zeros(26)
    run_steps(name, "a2a-1bit", grads, x, lr=0.01, weight_decay=0.1)
    for g in grads:
        lion_pytorch_update_(ref, g[0], mom, 0.01, 0.1, 0.9, 0.99)
    torch.testing.assert_close(x, ref, rtol=0, atol=1e-6)


def test_global_lion_is_lion_on_the_mean_gradient():
    torch.manual_seed(2)
    grads = [torch.randn(4, 26) for _ in range(4)]
    x = torch.randn(26)
    ref, mom = x.clone(), torch.zeros(26)
    run_steps("lion", "fp32-allreduce", grads, x, lr=0.01, weight_decay=0.1)
    for g in grads:
        lion_pytorch_update_(ref, g.mean(0), mom, 0.01, 0.1, 0.9, 0.99)
    torch.testing.assert_close(x, ref)


def test_lioncub_levels_against_brute_force():
    c = torch.tensor([[0.3, -1.2, 0.05, 2.0, -0.01]])
    l1 = c.abs().mean()
    s = 127 // 8  # 15 levels each side for 8 workers
    q = l1_levels(c, l1.expand_as(c), s)
    expected = [max(-s, min(s, round(float(v) / float(l1) * s / 2))) for v in c[0]]
    assert q[0].tolist() == expected
    assert q.dtype == torch.int8


def test_lioncub_sum_of_levels_fits_int8_for_any_worker_count():
    for workers in (2, 8, 63, 127):
        strategy, _, _ = make("lioncub-l1", workers)
        assert strategy.max_level * workers <= 127
    strategy, _, _ = make("lioncub-l1", 200)
    assert strategy.max_level == 1  # and the int8-allreduce container widens


def test_momentum_sync_averages_momenta_on_schedule():
    torch.manual_seed(3)
    grads = [torch.randn(3, 26) for _ in range(4)]
    strategy4 = run_steps("dlion-mavo", "int8-allreduce", grads[:4], torch.zeros(26), momentum_sync="every:4")
    assert torch.allclose(strategy4.exp_avg[0], strategy4.exp_avg[2])  # synced after step 4
    unsynced = run_steps("dlion-mavo", "int8-allreduce", grads[:4], torch.zeros(26))
    assert not torch.allclose(unsynced.exp_avg[0], unsynced.exp_avg[2])
    torch.testing.assert_close(strategy4.exp_avg[0], unsynced.exp_avg.mean(0))


def test_momentum_sync_rules():
    assert sorted(MomentumSync.parse("every:3").sync_steps(10)) == [3, 6, 9]
    # gaps round(2^(j/2)) = 1, 1, 2, 3, 4, 6, 8 -> cumulative 1, 2, 4, 7, 11, 17, 25
    assert sorted(MomentumSync.parse("schedule:2").sync_steps(25)) == [1, 2, 4, 7, 11, 17, 25]
    rule = MomentumSync.parse("schedule:2")
    assert [s for s in range(1, 26) if rule.is_sync(s)] == [1, 2, 4, 7, 11, 17, 25]
    assert MomentumSync.parse("never").sync_steps(100) == set()
    for bad in ("every:0", "every", "sometimes", "schedule:x"):
        with pytest.raises(ValueError, match="accepted: never, every:K or schedule:K"):
            MomentumSync.parse(bad)


def test_momentum_sync_rejected_for_strategies_without_worker_momentum():
    with pytest.raises(ValueError, match="adamw has none"):
        make("adamw", 2, momentum_sync="every:2")


def test_terngrad_is_unbiased():
    torch.manual_seed(4)
    strategy, comm, layout = make("terngrad", 2, seed=1)
    g = torch.randn(2, 26)
    total = torch.zeros(26)
    draws = 4000
    for _ in range(draws):
        payload = strategy.encode(g, torch.zeros(26), comm, Clock())
        assert set(payload.values.unique().tolist()) <= {-1, 0, 1}
        total += payload.values.float().sum(0) * layout.expand(strategy.scales.unsqueeze(0))[0] / 2
    torch.testing.assert_close(total / draws, g.mean(0), atol=0.08, rtol=0)


def test_ef_signsgd_error_feedback_keeps_what_was_not_sent():
    strategy, comm, layout = make("ef-signsgd", 2, lr=0.1)
    g = torch.randn(2, 26)
    payload = strategy.encode(g, torch.zeros(26), comm, Clock())
    sent = payload.values.float() * layout.expand(payload.scales)
    torch.testing.assert_close(sent + strategy.error, 0.1 * g)
    # the scale is the per-tensor L1 mean of the corrected update
    torch.testing.assert_close(payload.scales[0, 1], (0.1 * g[0, 21:]).abs().mean())


def test_dgc_sends_the_largest_accumulated_values_and_masks_them():
    strategy, comm, _ = make("dgc", 1, topk_ratio=0.1, weight_decay=0.0)
    g = torch.arange(26, dtype=torch.float32).unsqueeze(0) - 13  # |g| largest at the ends
    payload = strategy.encode(g, torch.zeros(26), comm, Clock())
    # per tensor: w (21 params) sends ceil(2.1) = 3, b (5 params) sends ceil(0.5) = 1
    assert sorted(payload.indices[0].tolist()) == [0, 1, 2, 25]
    assert (strategy.accumulated[0, payload.indices[0]] == 0).all()
    assert (strategy.momentum[0, payload.indices[0]] == 0).all()
