"""muon and muon-dist against a plain reference read from the authors' code (tests/reference/muon.py:
Newton-Schulz, EMA momentum with Nesterov, the aux AdamW, ownership by size), their bytes against
the closed form, their Newton-Schulz FLOPs in `estimate`, and their options' bad values."""

import math

import pytest
import torch

from lionsim.backends import SimComm
from lionsim.engine import train_step
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig
from lionsim.timing import Clock
from lionsim.transports import TRANSPORTS
from tests.helpers.cli import one_line_exit_2
from tests.helpers.gloo_group import on_own_rows
from tests.helpers.steps import layout_of, split_flat
from tests.reference.muon import newton_schulz5, ns_flops, ref_muon

# hidden matrices (tall, wide, square, a conv filter viewed as [8, 12], a 3-dim tensor orthogonalised as a
# batch of three 4 x 6 matrices as muon.py does), an embedding and a bias (AdamW)
TENSORS = [("a.weight", (16, 8)), ("b.weight", (8, 16)), ("c.weight", (8, 8)), ("conv.weight", (8, 3, 2, 2)),
           ("d.weight", (3, 4, 6)), ("embed.weight", (10, 4)), ("c.bias", (16,))]
MUON = [True] * 5 + [False] * 2
LR, WD, ADAM_LR, BETAS, STEPS = 0.02, 0.1, 3e-3, (0.9, 0.95), 4


def layout() -> ParamLayout:
    return layout_of(TENSORS)


def run_lionsim(strategy: str, workers: int, grads: list[torch.Tensor], x0: torch.Tensor, precision: str) -> torch.Tensor:
    comm = SimComm(workers)
    cfg = StrategyConfig(lr=LR, weight_decay=WD, betas=BETAS,
                         options={f"{strategy}.adamw_lr": ADAM_LR, f"{strategy}.precision": precision})
    s = STRATEGIES.get(strategy)(cfg, layout(), comm)
    x = x0.clone()
    for step, g in enumerate(grads, 1):
        train_step(s, TRANSPORTS.get("fp32-allreduce")(), comm, g.clone(), x, step, Clock())
    return x


def split(flat: torch.Tensor) -> list[torch.Tensor]:
    return split_flat(flat, TENSORS)


@pytest.mark.parametrize("strategy", ["muon", "muon-dist"])
@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_muon_equals_the_authors_update_on_the_mean_gradient(strategy, workers, precision):
    total = sum(math.prod(s) for _, s in TENSORS)
    gen = torch.Generator().manual_seed(workers)
    grads = [torch.randn(workers, total, generator=gen) for _ in range(STEPS)]
    x0 = torch.randn(total, generator=gen)
    traj, _ = ref_muon([[split(grads[t][w]) for t in range(STEPS)] for w in range(workers)], split(x0), STEPS,
                       lr=LR, weight_decay=WD, use_muon=MUON, adam_lr=ADAM_LR,
                       adam_betas=BETAS, adam_eps=1e-8, adam_wd=WD,  # lionsim's AdamW eps (muon.py's: 1e-10)
                       ns_dtype=torch.float32 if precision == "fp32" else torch.bfloat16)
    expected = torch.cat([t.reshape(-1) for t in traj[-1]])
    got = run_lionsim(strategy, workers, grads, x0, precision)
    # fp32: the same arithmetic in another order; bf16: one bf16 rounding of an update of size lr
    tol = 1e-5 if precision == "fp32" else 2e-3 * LR
    torch.testing.assert_close(got, expected, atol=tol, rtol=0)


def test_newton_schulz_is_the_authors_and_its_flops_the_closed_form():
    from lionsim.strategies.muon import newton_schulz, newton_schulz_flops

    g = torch.randn(24, 10, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(newton_schulz(g, 5, torch.float32), newton_schulz5(g, 5, torch.float32))
    s = torch.linalg.svdvals(newton_schulz(g, 5, torch.float32))
    assert 0.5 < float(s.min()) and float(s.max()) < 1.5  # nearly orthogonal, as the authors' iteration gives
    assert newton_schulz(torch.zeros(4, 6), 5, torch.float32).abs().max() == 0
    for shape in [(4096, 4096), (11008, 4096), (4096, 11008), (64, 3, 4, 4)]:
        rows, cols = shape[0], math.prod(shape[1:])
        assert newton_schulz_flops(shape, 5) == ns_flops(rows, cols, 5)
    assert newton_schulz_flops((4096, 4096), 5) == 30 * 4096**3  # 6 n^3 per iteration on a square matrix
    assert newton_schulz_flops((8, 64, 128), 5) == 8 * ns_flops(64, 128, 5)  # a batch of 8 matrices


def test_a_3_dim_tensor_is_a_batch_of_matrices_as_muon_py():
    """muon.py orthogonalises a 3-dim update as shape[0] matrices: each slice alone, not [shape[0], rest]."""
    from lionsim.strategies.muon import newton_schulz

    g = torch.randn(3, 4, 6, generator=torch.Generator().manual_seed(1))
    batched = newton_schulz(g, 5, torch.float32)
    for i in range(3):
        torch.testing.assert_close(batched[i], newton_schulz5(g[i], 5, torch.float32))
        s = torch.linalg.svdvals(batched[i])
        assert 0.5 < float(s.min()) and float(s.max()) < 1.5


def owned_share(shapes, workers):
    """The largest worker's elements: matrices sorted by shape (largest first), dealt round-robin."""
    order = sorted(shapes, reverse=True)
    shares = [0] * workers
    for turn, shape in enumerate(order):
        shares[turn % workers] += math.prod(shape)
    return max(shares)


@pytest.mark.parametrize("workers", [2, 3, 4])
def test_bytes_per_step_are_the_closed_form(workers):
    total = sum(math.prod(s) for _, s in TENSORS)
    for name in ("muon", "muon-dist"):
        s = STRATEGIES.get(name)(StrategyConfig(), layout(), SimComm(workers))
        calls = TRANSPORTS.get("fp32-allreduce")().plan(s.payload_spec(), workers) + s.extra_calls(1)
        expected = [("all_reduce", 4 * total)]
        if name == "muon-dist":  # each worker's share padded to the largest: W x that, fp32
            matrices = [shape for (_, shape), muon in zip(TENSORS, MUON) if muon]
            expected.append(("all_gather", 4 * workers * owned_share(matrices, workers)))
        assert [(c.op, c.nbytes) for c in calls] == expected
    # the reference's own payloads (without its padding entries) agree on who owns what
    _, log = ref_muon([[[torch.zeros(s) for _, s in TENSORS]] for _ in range(workers)],
                      [torch.zeros(s) for _, s in TENSORS], 1, use_muon=MUON, W=workers)
    assert max(d["allgather_payload"] for d in log[0]) >= 4 * owned_share([s for (_, s), m in zip(TENSORS, MUON) if m],
                                                                           workers)


def test_estimate_prices_newton_schulz_in_the_update(tmp_path):
    from lionsim.compute import MODELS, compute_time
    from lionsim.compute.devices import DEVICES
    from lionsim.estimate import EstimateConfig, estimate

    shapes = MODELS.get("llama-7b").tensor_shapes
    flops = sum(ns_flops(s[0], math.prod(s[1:]), 5) for s in shapes if len(s) >= 2)
    # fused passes (--kernels ideal): the memory passes alike, so the difference is the matrix work
    frame = estimate(EstimateConfig(model="llama-7b", strategies=["adamw", "muon", "muon-dist"], workers=8,
                                    network="h100x8-10gbe", kernels="ideal"))
    rows = {r.strategy: r for r in frame.itertuples()}
    device = DEVICES.get("h100")
    ns = compute_time(flops, device)
    assert rows["muon"].update_s == pytest.approx(rows["adamw"].update_s + ns, rel=0.05)
    # muon-dist: the busiest of 8 workers' share, about an eighth
    assert 0.1 * ns < rows["muon-dist"].update_s - rows["adamw"].update_s < 0.2 * ns


@pytest.mark.parametrize("shape", [(8, 12), (12, 8), (8, 8)])
@pytest.mark.parametrize("steps", [1, 5])
def test_newton_schulz_launches_are_the_kernels_counted(shape, steps):
    """The floor's declared kernels against a brute-force count of the aten ops it dispatches."""
    from lionsim.strategies.muon import newton_schulz, newton_schulz_launches
    from lionsim.training.counting import KernelCounter

    x = torch.randn(shape)
    with KernelCounter() as counted:
        newton_schulz(x, steps, torch.bfloat16)
    assert newton_schulz_launches(steps) == counted.kernels["all"]


def test_a_small_models_newton_schulz_is_priced_at_its_launches(monkeypatch):
    """GPT-2 124M's 72 hidden matrices on an H200: 5 iterations take 0.03-0.10 ms of FLOPs a matrix but
    launch 44 kernels of 10 us each (measured there: 0.43-0.49 ms a matrix)."""
    from lionsim.compute import MODELS, compute_time
    from lionsim.compute.devices import DEVICES
    from lionsim.estimate import EstimateConfig, estimate

    shapes = MODELS.get("gpt2-124m").tensor_shapes
    matrices = [s for s in shapes[2:] if len(s) >= 2]  # not the token and position embeddings (tied head)
    flops = sum(ns_flops(s[0], math.prod(s[1:]), 5) for s in matrices)
    device = DEVICES.get("h200")
    launches = len(matrices) * (4 + 8 * 5)
    assert compute_time(flops, device) < launches * device.kernel_s  # launch-bound
    frame = estimate(EstimateConfig(model="gpt2-124m", strategies=["adamw", "muon", "muon-dist"], workers=4,
                                    network="10gbe", device="h200", kernels="ideal"))
    rows = {r.strategy: r for r in frame.itertuples()}
    assert rows["muon"].update_s == pytest.approx(rows["adamw"].update_s + launches * device.kernel_s, rel=0.02)
    # muon-dist: the worker owning the most matrices (72 dealt over 4: 18), in place of its share's FLOPs
    dist = STRATEGIES.get("muon-dist")
    share = compute_time(dist(StrategyConfig(), layout(), SimComm(4)).update_flops(matrices), device)
    monkeypatch.setattr(dist, "update_launches", lambda self, shapes: 0)
    frame = estimate(EstimateConfig(model="gpt2-124m", strategies=["muon-dist"], workers=4, network="10gbe",
                                    device="h200", kernels="ideal"))
    flops_only = next(frame.itertuples()).update_s
    assert rows["muon-dist"].update_s - flops_only == pytest.approx(18 * 44 * device.kernel_s - share, rel=1e-6)


@pytest.mark.parametrize("argv", [
    ["-s", "muon", "--muon-momentum", "1"], ["-s", "muon", "--muon-ns-steps", "0"],
    ["-s", "muon", "--muon-adamw-lr", "0"], ["-s", "muon-dist", "--muon-precision", "fp16"],
    ["-s", "adamw", "--muon-ns-steps", "3"],
])
def test_bad_options_are_one_line(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    one_line_exit_2(["bench", "-w", "mlp", "--steps", "1", "-n", "2", *argv], capsys, argv[-2])
    assert not list(tmp_path.iterdir())


GLOO_RANKS, GLOO_LOCAL = 2, 2  # 4 workers, two on each rank: each rank orthogonalises its two workers' share


def gloo_grads() -> list[torch.Tensor]:
    total = sum(math.prod(s) for _, s in TENSORS)
    gen = torch.Generator().manual_seed(11)
    return [torch.randn(GLOO_RANKS * GLOO_LOCAL, total, generator=gen) for _ in range(3)]


def muon_dist_on(comm, rows: range) -> torch.Tensor:
    s = STRATEGIES.get("muon-dist")(StrategyConfig(lr=LR, options={"muon.precision": "fp32"}), layout(), comm)
    x = torch.linspace(-1, 1, layout().numel)
    for step, g in enumerate(gloo_grads(), 1):
        train_step(s, TRANSPORTS.get("fp32-allreduce")(), comm, g[rows.start : rows.stop].clone(), x, step, Clock())
    return x


def test_muon_dist_over_gloo_all_gathers_each_ranks_share(gloo_group):
    results = gloo_group(GLOO_RANKS).run(on_own_rows, muon_dist_on, GLOO_LOCAL)
    workers = GLOO_RANKS * GLOO_LOCAL
    expected = muon_dist_on(SimComm(workers), range(workers))
    s = STRATEGIES.get("muon-dist")(StrategyConfig(), layout(), SimComm(workers))
    assert len(set(s.owners)) == workers  # every worker owns a matrix: each rank computed only half of them
    for got in results:
        torch.testing.assert_close(got, expected, atol=1e-6, rtol=0)


def test_estimate_leaves_a_presets_embeddings_to_adamw_as_muon_does():
    """A new user's muon-dist on GPT-2 124M sent 2.25 GB a step at 8 workers: estimate dealt the 38.6M-
    parameter token embedding to one worker as a matrix and padded every share of the all-gather to it."""
    from lionsim.compute import MODELS
    from lionsim.estimate import EstimateConfig, estimate

    shapes = MODELS.get("gpt2-124m").tensor_shapes
    total, hidden = sum(math.prod(s) for s in shapes), [s for s in shapes[2:] if len(s) >= 2]
    row = next(estimate(EstimateConfig(model="gpt2-124m", strategies=["muon-dist"], workers=8,
                                       network="10gbe")).itertuples())
    # the ring all-reduce of every gradient, then the all-gather of 8 shares padded to the largest
    expected = 2 * 7 / 8 * 4 * total + 7 / 8 * 8 * 4 * owned_share(hidden, 8)
    assert row.wire_bytes == pytest.approx(expected, rel=1e-3)


def test_estimate_reads_a_counted_modules_names(tmp_path):
    """--model FILE.py:FUNC: a tensor named as an embedding or a head is no hidden matrix."""
    from lionsim.estimate import EstimateConfig, estimate

    model = tmp_path / "m.py"
    model.write_text("import torch\nfrom torch import nn\n\n"
                     "def plain():\n    return nn.Sequential(nn.Linear(64, 64), nn.Linear(64, 64)), torch.zeros(2, 64)\n\n"
                     "class Named(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                     "        self.body = nn.Linear(64, 64)\n        self.head = nn.Linear(64, 64)\n\n"
                     "    def forward(self, x):\n        return self.head(self.body(x))\n\n"
                     "def named():\n    return Named(), torch.zeros(2, 64)\n")
    rows = {}
    for func in ("plain", "named"):
        cfg = EstimateConfig(model=f"{model}:{func}", strategies=["muon"], workers=2, network="10gbe",
                             kernels="ideal")
        rows[func] = next(estimate(cfg).itertuples())
    ns = ns_flops(64, 64, 5) / (989e12 * 0.4)  # one 64 x 64 Newton-Schulz on the default h100
    assert rows["plain"].update_s - rows["named"].update_s == pytest.approx(max(ns, 44 * 10e-6), rel=1e-6)


@pytest.mark.parametrize("name", ["muon", "muon-dist", "dion"])
def test_estimates_memory_counts_the_aux_adamw_over_what_it_steps(name):
    """A new user was told muon needs 24.5 GiB where AdamW needs 19.6 (gpt2-1.3b): the aux AdamW's
    moments were counted over every parameter. Muon holds its momentum ([P]) and AdamW's two moments
    over the tensors that are no hidden matrix (embeddings, positions, vectors)."""
    from lionsim.compute import MODELS
    from lionsim.estimate import EstimateConfig, estimate

    shapes = MODELS.get("gpt2-124m").tensor_shapes
    total = sum(math.prod(s) for s in shapes)
    aux = total - sum(math.prod(s) for s in shapes[2:] if len(s) >= 2)
    row = next(estimate(EstimateConfig(model="gpt2-124m", strategies=[name], workers=4, network="10gbe")).itertuples())
    assert row.memory_bytes == pytest.approx(total * (4 + 4 + 4 * 1) + 4 * 2 * aux, abs=8)
