"""Lion Cub's family, signSGD, QSGD and 1-bit Adam against plain references written from the
papers' equations (Python floats and loops), for several N including 1; layer-selective
momentum sync and its bytes; the update time a momentum sync books."""

import math

import pytest
import torch

from lionsim.backends import SimComm
from lionsim.engine import train_step
from lionsim.errors import LionsimError
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig, valid_transports
from lionsim.timing import Clock
from lionsim.transports import TRANSPORTS, Payload, PayloadSpec
from lionsim.transports.packed_allreduce import field_bits
from lionsim.strategies.core.given import flags
from tests.reference.impl import draw, sign

SEGMENTS = [("w", torch.zeros(7, 3)), ("b", torch.zeros(5))]  # 26 parameters in two tensors
BOUNDS = [(0, 21), (21, 26)]


def run(name, transport, grads_per_step, params, **cfg):
    layout = ParamLayout.of(SEGMENTS)
    comm = SimComm(grads_per_step[0].shape[0])
    strategy = STRATEGIES.get(name)(StrategyConfig(**{k: v for k, v in cfg.items() if k not in flags()},
                                                   options={k: v for k, v in cfg.items() if k in flags()}), layout, comm)
    t, clock = TRANSPORTS.get(transport)(), Clock()
    sent = [train_step(strategy, t, comm, g.clone(), params, step, clock) for step, g in enumerate(grads_per_step, 1)]
    return strategy, sent


def random_grads(workers, steps, seed):
    torch.manual_seed(seed)
    return [torch.randn(workers, 26) for _ in range(steps)]


# ---- Lion Cub: q = clip(round(c / scale * s/2), -s, s), update sign(sum q) ----

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
        run(name, transport, grads, x, lr=0.01, weight_decay=0.1)
        assert x.tolist() == pytest.approx(rx, abs=1e-5), transport


def test_lioncub_l0_scale_is_the_geometric_mean_of_the_nonzero_magnitudes():
    from lionsim.strategies.lioncub import l0_scale

    layout = ParamLayout.of([("a", torch.zeros(4)), ("z", torch.zeros(2))])
    c = torch.tensor([[2.0, -8.0, 0.0, 0.5, 0.0, 0.0]])
    torch.testing.assert_close(l0_scale(layout, c), torch.tensor([[2.0, 0.0]]))  # (2*8*0.5)^(1/3); all-zero -> 0


@pytest.mark.parametrize("workers", [1, 2, 5, 7, 8, 15, 16, 40])
@pytest.mark.parametrize("numel", [1, 13, 29])
def test_packed_allreduce_sums_ternary_levels_exactly(workers, numel):
    gen = torch.Generator().manual_seed(workers * 100 + numel)
    levels = torch.randint(-1, 2, (workers, numel), generator=gen).to(torch.int8)
    levels[:, 0] = 1  # the extreme sums: all +1 ...
    if numel > 1:
        levels[:, -1] = -1  # ... and all -1
    spec = PayloadSpec(kind="levels", numel=numel, max_level=1)
    out = TRANSPORTS.get("packed-allreduce")().aggregate(Payload(spec, levels), SimComm(workers))
    expected = [sum(int(levels[w, j]) for w in range(workers)) for j in range(numel)]
    assert out[0].tolist() == expected and all(row == expected for row in out.tolist())


def test_packed_allreduce_field_is_4_bits_to_n_7_then_widens():
    assert [field_bits(1, n) for n in (1, 2, 7, 8, 15, 16, 31, 32)] == [4, 4, 4, 5, 5, 6, 6, 7]
    bits = TRANSPORTS.get("packed-allreduce")().bits_per_param
    assert bits(PayloadSpec(kind="levels", numel=70, max_level=1), 7) == (32 / 7, 32 / 7)  # 7 fields a word
    with pytest.raises(LionsimError, match="cannot hold"):
        TRANSPORTS.get("packed-allreduce")().check(PayloadSpec(kind="levels", numel=70, max_level=2**20), 2**11)


# ---- signSGD with majority vote: x -= lr (sign(sum_j sign(g_j)) + wd x) ----

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
        run("signsgd", transport, grads, x, lr=0.01, weight_decay=0.1)
        assert x.tolist() == pytest.approx(rx, abs=1e-6), transport


# ---- QSGD: l = sign(g) (floor(r) + [u < r - floor(r)]), r = s|g|/||g||_2; SGD momentum ----

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
    run("qsgd", "allgather-levels", grads, x, lr=lr, weight_decay=0.0, seed=5, qsgd_levels=s)
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


# ---- 1-bit Adam (Tang et al. 2021; DeepSpeed's OnebitAdam) ----

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
    _, sent = run("onebit-adam", "compressed-allreduce", grads, x, lr=0.01, weight_decay=0.1, freeze_steps=3)
    assert x.tolist() == pytest.approx(rx, abs=1e-4)
    if workers > 1:  # the warm-up is priced as an fp32 all-reduce, then the compressed exchange
        assert [s.spec.kind for s in sent] == ["dense"] * 3 + ["onebit"] * 4
        t = TRANSPORTS.get("compressed-allreduce")()
        assert [c.op for c in t.plan(sent[0].spec, workers)] == ["all_reduce"]
        assert [c.op for c in t.plan(sent[-1].spec, workers)] == ["all_to_all", "all_gather", "all_gather", "all_gather"]


def test_onebit_adam_rejects_negative_freeze_steps():
    with pytest.raises(LionsimError, match="bad --freeze-steps -1"):
        STRATEGIES.get("onebit-adam")(StrategyConfig(options={"freeze_steps": -1}), ParamLayout.of(SEGMENTS), SimComm(2))


# ---- layer-selective momentum sync, and the update time it books ----

@pytest.mark.parametrize("rule, synced", [("b", ["b"]), ("min-numel:6", ["w"]), ("w,b", ["w", "b"]), ("all", ["w", "b"])])
def test_selective_momentum_sync_averages_only_the_picked_tensors_and_sends_their_bytes(rule, synced):
    grads = random_grads(3, 2, seed=40)
    strategy, sent = run("dlion-mavo", "int8-allreduce", grads, torch.zeros(26), momentum_sync="every:2", sync_tensors=rule)
    _, unsynced = run("dlion-mavo", "int8-allreduce", grads, torch.zeros(26))
    plain, _ = run("dlion-mavo", "int8-allreduce", grads, torch.zeros(26))
    for name, (lo, hi) in zip(["w", "b"], BOUNDS):
        part = strategy.exp_avg[:, lo:hi]
        if name in synced:
            torch.testing.assert_close(part, plain.exp_avg[:, lo:hi].mean(0).expand_as(part))
        else:
            assert torch.equal(part, plain.exp_avg[:, lo:hi])
    numel = sum(hi - lo for name, (lo, hi) in zip(["w", "b"], BOUNDS) if name in synced)
    assert [c.nbytes for c in sent[1].extra] == [4 * numel] and sent[0].extra == ()


@pytest.mark.parametrize("bad", ["", "min-numel:0", "min-numel:x", "w,,b"])
def test_bad_sync_tensors_is_one_clear_error(bad):
    with pytest.raises(LionsimError, match="accepted: all, min-numel:N"):
        run("dlion-mavo", "int8-allreduce", random_grads(2, 1, 0), torch.zeros(26), momentum_sync="every:1", sync_tensors=bad)


def test_sync_tensors_that_pick_nothing_or_lack_a_sync_fail():
    with pytest.raises(LionsimError, match="picks no tensor of this model; its tensors .*w \\(21\\), b \\(5\\)"):
        run("dlion-mavo", "int8-allreduce", random_grads(2, 1, 0), torch.zeros(26), momentum_sync="every:1",
            sync_tensors="head.*")
    with pytest.raises(LionsimError, match="give --momentum-sync"):
        run("dlion-mavo", "int8-allreduce", random_grads(2, 1, 0), torch.zeros(26), sync_tensors="b")


class RecordingClock(Clock):
    def __init__(self):
        super().__init__()
        self.scales = []

    def section(self, name, scale=1.0):
        self.scales.append((name, scale))
        return super().section(name, scale)


@pytest.mark.parametrize("workers", [2, 4])
def test_momentum_sync_books_one_workers_share_of_its_copies(workers):
    layout = ParamLayout.of(SEGMENTS)
    strategy = STRATEGIES.get("lioncub-l1")(StrategyConfig(momentum_sync="every:1"), layout, SimComm(workers))
    clock = RecordingClock()
    strategy.sync(SimComm(workers), 1, clock)
    updates = [scale for name, scale in clock.scales if name == "update"]
    assert updates and all(scale == pytest.approx(1 / workers) for scale in updates)
    assert ("collective", 1.0) in clock.scales


H100_SYNC = dict(workload="mlp", model_size="tiny", workers=4, batch_size=8, steps=4, eval_every=4,
                 strategies=["dlion-mavo@a2a-1bit"], momentum_sync="every:2", compute="h100")
MLP_TINY = {"net.0.weight": 2048, "net.0.bias": 64, "net.2.weight": 640, "net.2.bias": 10}


@pytest.mark.parametrize("tensors, copy_bytes, kernels", [
    ("all", 8 * sum(MLP_TINY.values()), 1),  # in place: read m, write m / N
    ("net.*.weight", 16 * (2048 + 640), 2),  # gather to a buffer, scatter back / N
])
def test_device_update_books_the_momentum_sync_copy_on_sync_steps_only(tensors, copy_bytes, kernels):
    from lionsim.bench import BenchConfig, run_bench
    from lionsim.compute import DEVICES

    steps = run_bench(BenchConfig(**H100_SYNC, sync_tensors=tensors)).steps
    h100 = DEVICES.get("h100")
    copy_s = max(copy_bytes / (h100.memory_bandwidth_Bps * h100.memory_efficiency), kernels * h100.kernel_s)
    update = steps["update_s"].tolist()  # steps 2 and 4 sync
    assert update[0] == update[2] and update[1] == update[3]
    assert update[1] - update[0] == pytest.approx(copy_s, rel=1e-9)


def test_the_sync_copy_is_its_bytes_at_the_memory_bandwidth_past_the_kernel_floor():
    from dataclasses import replace

    from lionsim.compute import DEVICES
    from lionsim.steptime import NO_SYNC, PassBytes, device_work, sync_copy

    device = replace(DEVICES.get("h100"), kernel_s=0.0)
    bandwidth = device.memory_bandwidth_Bps * device.memory_efficiency
    passes = PassBytes(encode=13.0, decode=2.0, update=9.0)
    plain = device_work(1e12, 10**9, passes, device, sync=NO_SYNC)
    for synced, per_param in ((10**9, 8), (10**8, 16)):
        synced_step = device_work(1e12, 10**9, passes, device, sync=sync_copy(synced, 10**9))
        assert synced_step.update_s - plain.update_s == pytest.approx(per_param * synced / bandwidth, rel=1e-12)
        assert (synced_step.encode_s, synced_step.decode_s) == (plain.encode_s, plain.decode_s)


def test_strategies_listing_shows_the_new_ones_with_their_bits(capsys, monkeypatch):
    from lionsim.cli.app import console, main

    monkeypatch.setattr(console, "width", 400)  # one line a row

    with pytest.raises(SystemExit) as exit_info:
        main(["strategies", "--workers", "7"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for name in ("lioncub-linf", "lioncub-l0", "lioncub-ternary", "signsgd", "qsgd", "onebit-adam",
                 "packed-allreduce", "allgather-levels", "compressed-allreduce"):
        assert name in out
    assert "4.57/4.57" in out  # lioncub-ternary at N = 7: 4-bit fields, 7 a word
