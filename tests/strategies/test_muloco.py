"""muloco against a plain reference read from the authors' code (tests/reference/muloco.py: dion's inner
Muon, AdamW on the rest, QuantizedOuterSGD's 2-bit row-wise codes with error feedback, the re-quantised
mean, the outer Nesterov step), its bytes per round against the closed form, its bad options."""

import math

import pytest
import torch

from lionsim.backends import SimComm
from lionsim.cli.app import main
from lionsim.engine import train_step
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig
from lionsim.timing import Clock
from lionsim.transports import TRANSPORTS
from tests.helpers.cli import one_line_exit_2
from tests.helpers.gloo_group import on_own_rows
from tests.helpers.steps import layout_of, split_flat
from tests.reference.muloco import message_bytes, ref_muloco, skipped

# two hidden matrices (inner Muon), a bias (inner AdamW, sent coded with error feedback as the authors do),
# an embedding and a norm (inner AdamW as the authors' parameter classification; sent in fp32: QuantizedOuterSGD
# skips them by name, and lionsim's rule picks the same two here)
TENSORS = [("a.weight", (6, 4)), ("b.weight", (4, 8)), ("a.bias", (4,)), ("tok_embeddings.weight", (5, 4)),
           ("attention_norm.weight", (4,))]
MUON, SKIP = [True, True, False, False, False], skipped([name for name, _ in TENSORS])
H, STEPS, LR, WD, MU, BETAS = 2, 6, 0.02, 0.01, 0.9, (0.8, 0.9)
OUTER_LR, OUTER_MU, DECAY = 0.8, 0.5, 0.9


def layout() -> ParamLayout:
    return layout_of(TENSORS)


def split(flat: torch.Tensor) -> list[torch.Tensor]:
    return split_flat(flat, TENSORS)


def config(precision: str = "fp32", **options) -> StrategyConfig:
    given = {"muloco.local_steps": H, "muloco.outer_lr": OUTER_LR, "muloco.outer_momentum": OUTER_MU,
             "muloco.inner_momentum": MU, "muloco.error_decay": DECAY, "muloco.precision": precision, **options}
    return StrategyConfig(lr=LR, weight_decay=WD, betas=BETAS, options=given)


def both_runs(workers: int, precision: str) -> tuple[list, torch.Tensor, list]:
    """(the reference's trajectory, lionsim's global model after every step) on gradients that depend on
    where each worker's replica is (so the local phases matter): g = A_w x + b_w."""
    total = sum(math.prod(s) for _, s in TENSORS)
    gen = torch.Generator().manual_seed(workers)
    x0 = torch.randn(total, generator=gen)
    a = [torch.randn(total, total, generator=gen) / total for _ in range(workers)]
    b = [torch.randn(total, generator=gen) for _ in range(workers)]

    def grad_fn(w, step, params):
        flat = torch.cat([p.reshape(-1) for p in params]).double()
        return split(a[w].double() @ flat + b[w].double())

    traj, _ = ref_muloco(grad_fn, split(x0), STEPS, H=H, inner_lr=LR, mu=MU, inner_wd=WD, adam_betas=BETAS,
                         use_muon=MUON, outer_lr=OUTER_LR, outer_momentum=OUTER_MU, error_decay=DECAY, skip=SKIP,
                         ns_dtype=torch.float32 if precision == "fp32" else torch.bfloat16, W=workers)
    comm = SimComm(workers)
    s = STRATEGIES.get("muloco")(config(precision), layout(), comm)
    x = x0.clone()
    s.start(x)
    got = []
    for step in range(1, STEPS + 1):
        grads = torch.stack([a[w] @ s.replicas[w] + b[w] for w in range(workers)])
        train_step(s, TRANSPORTS.get("fp32-allreduce")(), comm, grads, x, step, Clock())
        got.append(x.clone())
    return traj, got


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_muloco_equals_the_authors_rounds(workers):
    """Its betas on the inner AdamW, the bias coded with error feedback, the norm and embedding in fp32."""
    traj, got = both_runs(workers, "fp32")
    for step, x in enumerate(got, 1):
        expected = torch.cat([t.reshape(-1) for t in traj[step]]).float()
        torch.testing.assert_close(x, expected, atol=1e-5, rtol=0)  # the global model after every step


@pytest.mark.parametrize("workers", [1, 2])
def test_muloco_in_bf16_is_the_authors_newton_schulz_order(workers):
    """In bf16 the inner Muon computes b A + c (A A) as MuLoCo's Muon does (muon's (c A) A lands a few
    percent of an update's largest entry away, enough to move a 2-bit code)."""
    traj, got = both_runs(workers, "bf16")
    for step, x in enumerate(got, 1):
        expected = torch.cat([t.reshape(-1) for t in traj[step]]).float()
        torch.testing.assert_close(x, expected, atol=1e-5, rtol=0)


def test_the_newton_schulz_orders_differ_in_bf16_only():
    from lionsim.strategies.muloco import NS_COEFFICIENTS, NS_EPS
    from lionsim.strategies.muon import newton_schulz
    from tests.reference.muloco import ns_dion

    g = torch.randn(24, 10, generator=torch.Generator().manual_seed(0))
    ours = newton_schulz(g, 5, torch.bfloat16, NS_COEFFICIENTS, NS_EPS, product_first=True)
    assert torch.equal(ours, ns_dion(g, NS_EPS, torch.bfloat16))
    muon_order = newton_schulz(g, 5, torch.bfloat16, NS_COEFFICIENTS, NS_EPS)
    gap = (muon_order.float() - ours.float()).abs().max() / ours.float().abs().max()
    assert gap > 1e-3
    exact = [newton_schulz(g.double(), 5, torch.float64, NS_COEFFICIENTS, NS_EPS, product_first=p) for p in (True, False)]
    torch.testing.assert_close(exact[0], exact[1], rtol=0, atol=1e-12)


@pytest.mark.parametrize("workers", [2, 4])
def test_bytes_per_round_are_the_closed_form(workers):
    s = STRATEGIES.get("muloco")(config(), layout(), SimComm(workers))
    transport = TRANSPORTS.get("fp32-allreduce")()
    s.steps = 1  # a local step sends nothing
    assert s.extra_calls(1) == []
    s.steps = 2  # a sync: the 2-bit codes and row tables all-gathered, the embedding and norm averaged in fp32
    calls = transport.plan(s.payload_spec(), workers) + s.extra_calls(2)
    codes = math.ceil(24 / 4) + math.ceil(32 / 4) + 1  # 2 bits a parameter, packed per tensor (the bias: 1 byte)
    # header, shape, then a shift and four lookups per row (the bias: one row)
    tables = 4 * (3 + 2 + 6 * 5) + 4 * (3 + 2 + 4 * 5) + 4 * (3 + 1 + 5)
    assert [(c.op, c.nbytes) for c in calls] == [("all_reduce", 4 * (20 + 4)), ("all_gather", workers * codes),
                                                 ("all_gather", workers * tables)]
    assert codes + tables == message_bytes((6, 4)) + message_bytes((4, 8)) + message_bytes((4,))  # the authors'
    assert s.extra_calls(3) == [] and s.extra_calls(4)  # a pure function of the step


def test_estimate_prices_the_inner_newton_schulz_every_step(monkeypatch):
    from lionsim.compute import MODELS, compute_time
    from lionsim.compute.devices import DEVICES
    from lionsim.estimate import EstimateConfig, estimate

    shapes = MODELS.get("llama-7b").tensor_shapes
    hidden = shapes[1:-1]  # the embedding (first) and the untied head (last) stay with AdamW, sent whole
    flops = sum(5 * (4 * min(s) ** 2 * max(s) + 2 * min(s) ** 3) for s in hidden if len(s) == 2)
    cfg = EstimateConfig(model="llama-7b", strategies=["muloco"], workers=8, network="1gbe")
    row = next(estimate(cfg).itertuples())
    monkeypatch.setattr(STRATEGIES.get("muloco"), "update_flops", lambda self, shapes: 0.0)
    monkeypatch.setattr(STRATEGIES.get("muloco"), "update_launches", lambda self, shapes: 0)
    memory_only = next(estimate(cfg).itertuples())
    assert row.local_steps == 30
    assert row.update_s - memory_only.update_s == pytest.approx(compute_time(flops, DEVICES.get("h100")), rel=1e-9)
    # one round: per worker (N - 1) messages of the 2-bit codes and tables, the fp32 all-reduce of the
    # rest (the norms, the embedding and the head)
    codes = sum(math.ceil(math.prod(s) / 4) + 4 * (5 + 5 * s[0]) for s in hidden if len(s) == 2)
    whole = sum(math.prod(s) for s in shapes if len(s) < 2) + math.prod(shapes[0]) + math.prod(shapes[-1])
    assert row.wire_bytes * 30 == pytest.approx(7 * codes + 2 * 7 / 8 * 4 * whole, rel=1e-3)


@pytest.mark.parametrize("argv", [["-s", "muloco", "--muloco-error-decay", "1.5"],
                                  ["-s", "muloco", "--muloco-inner-momentum", "1"],
                                  ["-s", "muloco", "--muloco-precision", "int4"], ["-s", "muloco", "--local-steps", "0"],
                                  ["-s", "adamw", "--muloco-error-decay", "0.5"]])
def test_bad_options_are_one_line(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    one_line_exit_2(["bench", "-w", "mlp", "--steps", "1", "-n", "2", *argv], capsys, argv[-2])
    assert not list(tmp_path.iterdir())


GLOO_RANKS, GLOO_LOCAL = 2, 2  # 4 workers, two on each rank


def muloco_on(comm, rows: range) -> torch.Tensor:
    """Four steps (two syncs) of fixed gradients; the global model after them."""
    gen = torch.Generator().manual_seed(5)
    total = layout().numel
    grads = [torch.randn(GLOO_RANKS * GLOO_LOCAL, total, generator=gen) for _ in range(4)]
    s = STRATEGIES.get("muloco")(config(), layout(), comm)
    x = torch.linspace(-1, 1, total)
    s.start(x)
    for step, g in enumerate(grads, 1):
        train_step(s, TRANSPORTS.get("fp32-allreduce")(), comm, g[rows.start : rows.stop].clone(), x, step, Clock())
    return x


def test_muloco_over_gloo_all_gathers_the_packed_codes(gloo_group):
    results = gloo_group(GLOO_RANKS).run(on_own_rows, muloco_on, GLOO_LOCAL)
    workers = GLOO_RANKS * GLOO_LOCAL
    expected = muloco_on(SimComm(workers), range(workers))
    assert not torch.allclose(expected, torch.linspace(-1, 1, layout().numel))
    for got in results:
        torch.testing.assert_close(got, expected, atol=1e-6, rtol=0)


def test_listed_and_booked_bits_are_the_closed_form(tmp_path, monkeypatch):
    """mlp's four tensors all travel coded: a sync sends one worker's 2-bit codes and row tables (the
    authors' message) and receives the other N - 1 workers', whatever the transport (it carries nothing
    here). `lionsim strategies` lists that over H = 30 steps; bench books it on each sync."""
    from lionsim.cli.lists import strategies_frame

    shapes, workers = [(256, 32), (256,), (10, 256), (10,)], 3
    message = 8 * sum(message_bytes(s) for s in shapes) / sum(math.prod(s) for s in shapes)  # bits a parameter
    rows = strategies_frame(workers, "mlp").query("strategy == 'muloco'")
    assert {"fp32-allreduce", "fp8-allreduce"} <= set(rows.transport)
    for r in rows.itertuples():
        assert (r.bits_per_param_up, r.bits_per_param_down) == pytest.approx((message / 30, 2 * message / 30))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as done:
        main(["bench", "-w", "mlp", "-n", str(workers), "--steps", "2", "-b", "8", "--eval-every", "2",
              "-s", "muloco@fp8-allreduce", "--local-steps", "2", "--out", "o"])
    assert done.value.code == 0
    import pandas as pd

    steps = pd.read_csv(tmp_path / "o" / "steps.csv")
    assert steps.bits_per_param_up.tolist() == pytest.approx([0, message])
    assert steps.bits_per_param_down.tolist() == pytest.approx([0, 2 * message])
