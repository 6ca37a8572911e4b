"""The optimizer steps in their three forms (lionsim.optim.steps, lionsim.compute.kernel_ops) and
`estimate --optimizer`.

References: the ops torch.optim and lionsim.optim.functional run, counted by the brute-force
byte counter (lionsim.perf.bytecount) on the code itself; the multi-tensor launch rule of
PyTorch's MultiTensorApply.cuh; times worked out by hand."""

from __future__ import annotations

import math

import pytest
import torch

from lionsim.compute import DEVICES
from lionsim.compute.kernel_ops import OPTIMIZER_KINDS, multi_tensor_launches
from lionsim.compute.kernel_table import default_table
from lionsim.errors import LionsimError
from lionsim.estimate import EstimateConfig, estimate
from lionsim.optim import functional as F
from lionsim.optim.steps import ADAMW, LION, LION_VOTE, MOMENTUM_VOTE, SGD_MOMENTUM, SGD_NESTEROV, SIGN_APPLY, SIGN_VOTE
from lionsim.perf.bytecount import count

N, T = 4096, 3


def _torch_step(cls, **kw):
    """Bytes per parameter and ops of a steady step of a torch optimizer over T tensors of N."""
    ps = [torch.randn(N, requires_grad=True) for _ in range(T)]
    opt = cls(ps, lr=1e-3, **kw)
    for p in ps:
        p.grad = torch.randn(N)
    opt.step()  # the state exists from here on
    counted = count(opt.step)
    return counted.nbytes / (N * T), counted.ops


@pytest.mark.parametrize(("cls", "kw", "step"), [
    (torch.optim.AdamW, dict(weight_decay=0.01), ADAMW),
    (torch.optim.SGD, dict(momentum=0.9), SGD_MOMENTUM),
])
def test_the_torch_chains_are_torchs_own_ops(cls, kw, step):
    """The for-loop runs each op once per tensor, foreach once per list: the same bytes."""
    assert _torch_step(cls, foreach=False, **kw) == (step.chain, step.ops * T)
    assert _torch_step(cls, foreach=True, **kw) == (step.chain, step.ops)


@pytest.mark.parametrize(("cls", "kw", "step"), [
    (torch.optim.AdamW, dict(weight_decay=0.01), ADAMW),
    (torch.optim.SGD, dict(momentum=0.9), SGD_MOMENTUM),
])
def test_the_fused_form_is_one_kernel_reading_and_writing_each_tensor_once(cls, kw, step):
    """torch's fused kernel is one op; its schema marks the gradients written too (for the
    grad-scaler case, which writes them back unscaled): without a scaler it leaves them, 4 bytes
    fewer than counted."""
    nbytes, ops = _torch_step(cls, fused=True, **kw)
    assert (nbytes - 4, ops) == (step.fused, 1)
    hand = {ADAMW.name: 4 * 4 + 3 * 4, SGD_MOMENTUM.name: 3 * 4 + 2 * 4}  # reads p, g, state; writes p, state
    assert step.fused == hand[step.name]


def _ops_of(fn, *tensors):
    counted = count(lambda: fn(*tensors))
    return counted.nbytes / N, counted.ops


def test_the_lion_family_chains_are_lionsims_own_ops():
    p, g, m = (torch.randn(N) for _ in range(3))
    assert _ops_of(lambda: F.lion_update_(p, g, m, 1e-4, 0.1, 0.9, 0.99)) == (LION.chain, LION.ops)
    vote = lambda: (F.sign_votes(F.lion_interpolation(m, g, 0.9), 8), F.decay_momentum_(m, g, 0.99))  # noqa: E731
    assert _ops_of(vote) == (LION_VOTE.chain, LION_VOTE.ops)
    signum = lambda: (F.decay_momentum_(m, g, 0.9), F.sign_votes(m, 8))  # noqa: E731
    assert _ops_of(signum) == (MOMENTUM_VOTE.chain, MOMENTUM_VOTE.ops)
    assert _ops_of(lambda: F.sign_votes(g, 8)) == (SIGN_VOTE.chain, SIGN_VOTE.ops)
    assert _ops_of(lambda: F.apply_update_(p, g, 1e-3, 0.1)) == (SIGN_APPLY.chain, SIGN_APPLY.ops)
    assert _ops_of(lambda: F.nesterov_update_(p, g, m, 0.7, 0.9)) == (SGD_NESTEROV.chain, SGD_NESTEROV.ops)


@pytest.mark.parametrize("step", [ADAMW, SGD_MOMENTUM, LION, LION_VOTE, SIGN_APPLY, SGD_NESTEROV])
def test_fused_moves_least_then_foreach_launches_least_then_eager(step):
    tensors, params = 300, 10**9
    fused, foreach, eager = (step.kernels(kind, tensors, params)[0] for kind in OPTIMIZER_KINDS)
    assert fused.nbytes < foreach.nbytes == eager.nbytes
    assert fused.kernels(tensors) < foreach.kernels(tensors) < eager.kernels(tensors) == step.ops * tensors


def test_multi_tensor_launches_follow_the_list_limits():
    """A launch ends at 36 tensors (4 lists: p, g, m, v) or 320 blocks of 65536 elements."""
    assert multi_tensor_launches(300, 10**6, 4) == math.ceil(300 / 36)
    assert multi_tensor_launches(10, 10**9, 4) == math.ceil(10**9 / (320 * 65536))
    assert multi_tensor_launches(1, 1, 4) == 1


def _adamw(optimizer: str, model: str | None = None, params: int | None = 3 * 10**9) -> dict:
    cfg = EstimateConfig(model=model, params=None if model else params, tokens_per_worker=None if model else 1024,
                         workers=64, network="a100x8-4hdr", device="a100", overlap="none",
                         strategies=["adamw@bf16-allreduce"], optimizer=optimizer)
    return estimate(cfg).to_dict("records")[0]


def test_the_optimizer_kinds_price_adamws_update_by_their_closed_forms():
    """3e9 parameters on an A100 40GB: fused reads the float32 gradient the bf16 sum was widened to,
    p, m, v and writes p, m, v (28 B) at the fused rate; foreach and the for-loop run torch's 80
    bytes at the stream rate."""
    rows = default_table().for_device("a100-40gb")
    fused, stream = rows["fused-optimizer"].GBps * 1e9, rows["float-pass"].GBps * 1e9
    params = 3e9
    got = {kind: _adamw(kind) for kind in OPTIMIZER_KINDS}
    assert got["fused"]["update_s"] == pytest.approx(28 * params / fused)
    assert got["foreach"]["update_s"] == pytest.approx(80 * params / stream)
    assert got["eager"]["update_s"] == pytest.approx(80 * params / stream)
    assert [got[k]["optimizer"] for k in OPTIMIZER_KINDS] == list(OPTIMIZER_KINDS)
    assert got["fused"]["step_s"] < got["foreach"]["step_s"]


def test_eager_is_launch_bound_on_a_small_model():
    """gpt2-124m (148 tensors): the for-loop launches AdamW's 8 ops per tensor, foreach 8 per list."""
    eager, foreach = _adamw("eager", "gpt2-124m"), _adamw("foreach", "gpt2-124m")
    a100 = DEVICES.get("a100")
    assert eager["update_s"] >= 8 * 148 * a100.kernel_s
    assert eager["update_s"] > foreach["update_s"]


@pytest.mark.parametrize(("kernels", "optimizer", "named"), [
    ("table", "apex", "bad --optimizer 'apex'; accepted: fused, foreach, eager"),
    ("ideal", "eager", "--kernels ideal prices every pass as one fused kernel"),
])
def test_a_bad_optimizer_is_one_line(kernels, optimizer, named):
    cfg = EstimateConfig(params=10**6, tokens_per_worker=10, workers=2, kernels=kernels, optimizer=optimizer)
    with pytest.raises(LionsimError, match=named):
        estimate(cfg)


def test_the_inner_optimizer_picks_the_local_steps_step():
    from lionsim.estimate.probe import probe
    from lionsim.runs import parse_runs

    run = parse_runs(["diloco@fp32-allreduce"])[0]
    for name, step in (("adamw", ADAMW), ("sgd", SGD_MOMENTUM), ("lion", LION)):
        p = probe(run, params=1000, tensors=2, workers=4, options={"inner_optimizer": name})
        assert p.strategy.kernel_bytes().rule_step is step
