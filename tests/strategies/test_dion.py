"""dion against a plain reference read from the authors' code (tests/reference/dion.py: dion_simple's
algorithm, each worker's own momentum with all-reduced P and R, Householder QR, fp64), its bytes
against the closed form (m + n) r per compressed matrix, its FLOPs in `estimate`, its bad options."""

import math

import pytest
import torch

from lionsim.backends import SimComm
from lionsim.engine import train_step
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig
from lionsim.timing import Clock
from lionsim.transports import TRANSPORTS
from tests.helpers.cli import one_line_exit_2
from tests.helpers.steps import layout_of, split_flat
from tests.reference.dion import ref_dion

# at fraction 0.25 three matrices sent as factors (r 3, 2, 1); at 1.0 all averaged whole (dion_simple); AdamW's
TENSORS = [("a.weight", (12, 20)), ("b.weight", (24, 8)), ("c.weight", (4, 4)), ("head.weight", (5, 8)),
           ("a.bias", (6,))]
DION = [True, True, True, False, False]
LR, WD, MU, BETAS, STEPS = 0.02, 0.1, 0.9, (0.9, 0.95), 5


def layout() -> ParamLayout:
    return layout_of(TENSORS)


def split(flat: torch.Tensor) -> list[torch.Tensor]:
    return split_flat(flat, TENSORS)


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("fraction", [0.25, 1.0])
def test_dion_equals_the_authors_algorithm(workers, fraction):
    total = sum(math.prod(s) for _, s in TENSORS)
    gen = torch.Generator().manual_seed(workers)
    grads = [torch.randn(workers, total, generator=gen) for _ in range(STEPS)]
    grads[0][:, :240] = 0  # a.weight has no gradient at step 1: the zero guard keeps its Q
    x0 = torch.randn(total, generator=gen)
    traj, _ = ref_dion([[split(grads[t][w].double()) for t in range(STEPS)] for w in range(workers)], split(x0), STEPS,
                       lr=LR, mu=MU, betas=BETAS, weight_decay=WD, rank_fraction=fraction, use_dion=DION, seed=7)
    expected = torch.cat([t.reshape(-1) for t in traj[-1]]).float()
    comm = SimComm(workers)
    cfg = StrategyConfig(lr=LR, weight_decay=WD, betas=BETAS, seed=7,
                         options={"dion.rank_fraction": fraction, "dion.mu": MU, "dion.adamw_lr": LR})
    s = STRATEGIES.get("dion")(cfg, layout(), comm)
    x = x0.clone()
    for step, g in enumerate(grads, 1):
        train_step(s, TRANSPORTS.get("lowrank-allreduce")(), comm, g.clone(), x, step, Clock())
    torch.testing.assert_close(x, expected, atol=2e-5, rtol=0)  # fp32 against fp64, Gram-Schmidt against QR


@pytest.mark.parametrize("workers", [2, 4])
def test_bytes_per_step_are_m_plus_n_times_r_per_matrix(workers):
    total = sum(math.prod(s) for _, s in TENSORS)
    s = STRATEGIES.get("dion")(StrategyConfig(), layout(), SimComm(workers))
    calls = TRANSPORTS.get("lowrank-allreduce")().plan(s.payload_spec(), workers)
    # r = ceil(0.25 min): 3 for 12 x 20, 2 for 24 x 8, 1 for 4 x 4; the head and the bias are averaged whole
    whole = total - 12 * 20 - 24 * 8 - 4 * 4
    assert [(c.op, c.nbytes) for c in calls] == [("all_reduce", 4 * whole), ("all_reduce", 4 * (12 * 3 + 24 * 2 + 4)),
                                                 ("all_reduce", 4 * (20 * 3 + 8 * 2 + 4))]
    _, log = ref_dion([[split(torch.zeros(total).double())]] * workers, split(torch.zeros(total)), 1,
                      rank_fraction=0.25, use_dion=DION)
    assert log[0][0]["payload"] == sum(c.nbytes for c in calls)


def test_estimate_prices_the_power_iteration_and_the_factors(monkeypatch):
    from lionsim.compute import MODELS, compute_time
    from lionsim.compute.devices import DEVICES
    from lionsim.estimate import EstimateConfig, estimate

    shapes = MODELS.get("llama-7b").tensor_shapes
    flops, sent = 0.0, 0
    for i, shape in enumerate(shapes):
        if len(shape) == 2 and 0 < i < len(shapes) - 1:  # the embedding (first) and head (last) stay whole
            m, n = shape
            r = math.ceil(0.25 * min(m, n))
            flops += 8 * m * n * r + 4 * max(m, n) * r * r
            sent += (m + n) * r
        else:
            sent += math.prod(shape)
    cfg = EstimateConfig(model="llama-7b", strategies=["dion"], workers=8, network="1gbe")
    row = next(estimate(cfg).itertuples())
    monkeypatch.setattr(STRATEGIES.get("dion"), "update_flops", lambda self, shapes: 0.0)
    memory_only = next(estimate(cfg).itertuples())
    assert row.update_s - memory_only.update_s == pytest.approx(compute_time(flops, DEVICES.get("h100")), rel=1e-9)
    # three ring all-reduces: 2 (N - 1) / N of 4 bytes a float each
    assert row.wire_bytes == pytest.approx(2 * 7 / 8 * 4 * sent, rel=1e-3)


@pytest.mark.parametrize("argv", [["-s", "dion", "--dion-rank-fraction", "0"], ["-s", "dion", "--dion-rank-fraction", "1.5"],
                                  ["-s", "dion", "--dion-mu", "1"], ["-s", "dion", "--dion-adamw-lr", "-1"],
                                  ["-s", "adamw", "--dion-mu", "0.5"]])
def test_bad_options_are_one_line(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    one_line_exit_2(["bench", "-w", "mlp", "--steps", "1", "-n", "2", *argv], capsys, argv[-2])
    assert not list(tmp_path.iterdir())


def test_a_wide_matrix_is_not_transposed_as_in_dion_simple():
    """A wide matrix (12 x 20) keeps P at m x r as dion_simple does; dion.py / dion_reference.py run it
    transposed (P n x r), which the reference can do too: lionsim equals the first and not the second."""
    workers, total = 2, sum(math.prod(s) for _, s in TENSORS)
    gen = torch.Generator().manual_seed(3)
    grads = [torch.randn(workers, total, generator=gen) for _ in range(STEPS)]
    x0 = torch.randn(total, generator=gen)
    per_worker = [[split(grads[t][w].double()) for t in range(STEPS)] for w in range(workers)]
    comm = SimComm(workers)
    cfg = StrategyConfig(lr=LR, weight_decay=WD, betas=BETAS, seed=7,
                         options={"dion.rank_fraction": 0.25, "dion.mu": MU, "dion.adamw_lr": LR})
    s = STRATEGIES.get("dion")(cfg, layout(), comm)
    x = x0.clone()
    for step, g in enumerate(grads, 1):
        train_step(s, TRANSPORTS.get("lowrank-allreduce")(), comm, g.clone(), x, step, Clock())
    wide = slice(0, 12 * 20)
    for transpose, same in ((False, True), (True, False)):
        traj, _ = ref_dion(per_worker, split(x0), STEPS, lr=LR, mu=MU, betas=BETAS, weight_decay=WD,
                           rank_fraction=0.25, use_dion=DION, seed=7, transpose=transpose)
        expected = torch.cat([t.reshape(-1) for t in traj[-1]]).float()
        assert torch.allclose(x[wide], expected[wide], atol=2e-5, rtol=0) == same, transpose
