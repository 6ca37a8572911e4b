"""The audit's defects (issue 20, item 3), each against what it should be: 1-bit Adam's refused
zero warm-up and DeepSpeed's momentum mask, EF-signSGD's sign(0) = 0, tensors without a
gradient left alone on the simulator as DistributedLion and torch.optim leave them, and DGC's
short warm-ups. (The parameter server on a subgroup without rank 0 and the stochastic
quantizers' draws on gloo: tests/backends/test_gloo_worlds.py.)"""

import pytest
import torch

from lionsim.backends import SimComm
from lionsim.cli.app import main
from lionsim.runs import RunSpec
from lionsim.strategies import StrategyConfig
from lionsim.training.loop import Place, train_run
from lionsim.strategies.core.given import flags


class Spared(torch.nn.Module):
    """An embedding whose rows 6..11 no batch uses, a head, and a layer no forward calls."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.emb = torch.nn.Embedding(12, 4)
        self.head = torch.nn.Linear(4, 1)
        self.spare = torch.nn.Linear(3, 3)  # never used: its grad stays None

    def forward(self, idx):
        return self.head(self.emb(idx)).squeeze(-1)


class Tiny:
    """Just what lionsim.training.loop.train_run asks of a workload."""

    gradients = "loop"

    def __init__(self) -> None:
        self.model = Spared()

    def batches(self, step, workers, device=None):
        return [(torch.randint(0, 6, (8,), generator=torch.Generator().manual_seed(100 * step + w)), None)
                for w in workers]

    def loss(self, model, inputs, targets):
        return model(inputs).pow(2).mean()

    def evaluate(self, model):
        return {}


def train(strategy: str, transport: str, workers: int, steps: int, **cfg) -> dict[str, torch.Tensor]:
    options = {k: cfg.pop(k) for k in list(cfg) if k in flags()}  # strategy options (their modules' Options)
    wl = Tiny()
    initial = {k: v.clone() for k, v in wl.model.state_dict().items()}
    record = train_run(RunSpec(strategy, transport), workload=wl, initial=initial, place=Place(SimComm(workers)),
                       strategy_cfg=StrategyConfig(**cfg, options=options), steps=steps, eval_every=10**6)
    assert record.diverged_at is None
    return {k: v.detach().clone() for k, v in wl.model.state_dict().items()}


INITIAL = {k: v.clone() for k, v in Spared().state_dict().items()}


# ---- 1-bit Adam ----

def test_onebit_adam_refuses_no_warmup_with_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit:
        main(["bench", "-w", "mlp", "-n", "2", "--steps", "8", "-s", "onebit-adam", "--freeze-steps", "0"])
    err = capsys.readouterr().err.strip()
    assert exit.value.code == 2 and len(err.splitlines()) == 1, err
    assert "--freeze-steps 0" in err and ">= 1" in err and "warm-up" in err
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


# ---- EF-signSGD ----

def test_ef_signsgd_leaves_a_coordinate_without_gradient_put():
    """sign(0) = 0: rows no batch uses send nothing and keep no error (with sign(0) = -1 they swung)."""
    got = train("ef-signsgd", "allgather-1bit", 3, 8, lr=0.1, weight_decay=0.0)
    assert torch.equal(got["emb.weight"][6:], INITIAL["emb.weight"][6:])
    assert not torch.allclose(got["emb.weight"][:6], INITIAL["emb.weight"][:6])


# ---- tensors no worker has a gradient for ----

def test_simulator_skips_a_tensor_without_gradient_as_distributed_lion_does():
    """One worker: DistributedLion is Lion, which skips p.grad None (no decay); the simulator's
    dlion-mavo on the same batches must give the same parameters, spare layer included."""
    from lionsim.optim import DistributedLion

    got = train("dlion-mavo", "int8-allreduce", 1, 5, lr=0.01, weight_decay=0.5)
    model = Spared()
    opt = DistributedLion(model.parameters(), lr=0.01, weight_decay=0.5)
    for step in range(5):
        opt.zero_grad()
        model(Tiny().batches(step, range(1))[0][0]).pow(2).mean().backward()
        opt.step()
    for name, p in model.state_dict().items():
        assert torch.equal(got[name], p), name
    assert torch.equal(got["spare.weight"], INITIAL["spare.weight"])


@pytest.mark.parametrize("strategy,transport", [("adamw", "fp32-allreduce"), ("dlion-mavo", "a2a-1bit"),
                                                ("diloco", "fp32-allreduce"), ("sgdm", "fp32-allreduce")])
def test_a_tensor_without_gradient_on_any_worker_is_left_alone(strategy, transport):
    got = train(strategy, transport, 3, 4, weight_decay=0.5, local_steps=2) if strategy == "diloco" else \
        train(strategy, transport, 3, 4, weight_decay=0.5)
    for name in ("spare.weight", "spare.bias"):
        assert torch.equal(got[name], INITIAL[name]), (strategy, name)
    assert not torch.equal(got["head.weight"], INITIAL["head.weight"])


def test_adamw_on_the_simulator_equals_torch_adamw_which_skips_grad_none():
    got = train("adamw", "fp32-allreduce", 1, 4, lr=0.01, weight_decay=0.5)
    model = Spared()
    opt = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.5, betas=(0.9, 0.999))
    for step in range(4):
        opt.zero_grad()
        model(Tiny().batches(step, range(1))[0][0]).pow(2).mean().backward()
        opt.step()
    for name, p in model.state_dict().items():
        torch.testing.assert_close(got[name], p, rtol=1e-6, atol=1e-7)


# ---- DGC's warm-up ----

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
