"""`estimate --model FILE.py:FUNC` and the ResNet presets: shapes and FLOPs counted on the meta device.

References: the published parameter counts of ResNet-18/50 (torchvision: 11,689,512 and
25,557,032 with 1000 classes) and their forward cost per 224 px image (torchvision's model table,
"GFLOPS" 1.81 and 4.09, which counts multiply-adds; He et al. 2016 Table 1 gives 1.8 and 3.8
x 10^9 for ResNet-18 and the v1 ResNet-50); a plain loop of conv/linear hooks on a real CPU
forward; closed-form parameter counts and 2 x in x out x tokens FLOPs of Linear layers.
"""

from __future__ import annotations

import math
import resource

import pandas as pd
import pytest
import torch
from torch import nn

from lionsim.compute import MODELS
from lionsim.compute.counted import count_on_meta
from lionsim.estimate import EstimateConfig, estimate
from lionsim.estimate.config import resolve
from lionsim.workloads.models.resnet import resnet18, resnet50
from tests.helpers import REPO
from tests.helpers.cli import run_cli

MY_MODEL = REPO / "examples" / "plugins" / "my_model.py"


@pytest.mark.parametrize("name, params, gmacs", [("resnet18", 11_689_512, 1.81), ("resnet50", 25_557_032, 4.09)])
def test_resnet_presets_have_the_published_parameters_and_cost(name, params, gmacs):
    shape = MODELS.get(name)
    assert shape.params == params
    count = shape.count
    # FlopCounterMode counts 2 FLOPs per multiply-add; torchvision's table lists multiply-adds
    assert count.forward_flops / 2 / 1e9 == pytest.approx(gmacs, rel=0.01)
    # backward: weight and input gradients, each a forward's worth, but the stem's input gradient
    assert 1.9 < count.backward_flops / count.forward_flops <= 2.0
    assert shape.training_flops_per_unit == count.forward_flops + count.backward_flops


def macs_by_hooks(model: nn.Module, x: torch.Tensor) -> int:
    """Multiply-adds of every Conv2d and Linear in a real CPU forward: output elements x inputs each."""
    total = 0

    def hook(module, inputs, output):
        nonlocal total
        if isinstance(module, nn.Conv2d):
            per_output = module.in_channels // module.groups * math.prod(module.kernel_size)
        else:
            per_output = module.in_features
        total += output.numel() * per_output

    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            m.register_forward_hook(hook)
    with torch.no_grad():
        model.eval()(x)
    return total


@pytest.mark.parametrize("build", [resnet18, resnet50])
def test_meta_count_equals_a_hook_count_of_a_real_forward(build):
    x = torch.randn(2, 3, 64, 64)
    count = count_on_meta(lambda: (build(), torch.zeros(2, 3, 64, 64)), "test")
    assert count.forward_flops == 2 * macs_by_hooks(build(), x)
    assert count.tensor_shapes == [tuple(p.shape) for p in build().parameters()]


class Linear7B(nn.Module):
    """A LLaMA-7B-like stack of bias-free Linear layers: 32 x (4 d^2 attention + 3 d f MLP) + 2 V d."""

    def __init__(self, d: int = 4096, f: int = 11008, layers: int = 32, vocab: int = 32000) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        blocks = []
        for _ in range(layers):
            blocks += [nn.Linear(d, d, bias=False) for _ in range(4)]
            blocks += [nn.Linear(d, f, bias=False), nn.Linear(f, d, bias=False)]
            blocks += [nn.Linear(d, f, bias=False)]  # the gate, applied to the output of the block so far
        self.blocks = nn.ModuleList(blocks)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        for layer in self.blocks:
            x = layer(x) if layer.in_features == x.shape[-1] else layer(x[..., : layer.in_features])
        return self.head(x[..., :4096] if x.shape[-1] != 4096 else x)


def test_a_7b_module_prices_on_meta_without_its_memory(capsys):
    d, f, layers, vocab, tokens = 4096, 11008, 32, 32000, 256
    params = layers * (4 * d * d + 3 * d * f) + 2 * vocab * d
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    count = count_on_meta(lambda: (Linear7B(), torch.zeros(1, tokens, dtype=torch.long)), "test")
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    with capsys.disabled():
        print(f"\n7B module on meta: {count.params:,} params, peak RSS grew {grown_mb:.0f} MB (fp32 weights: "
              f"{4 * params / 1e9:.0f} GB)")
    assert count.params == params
    # every Linear is d_in x d_out multiply-adds per token (the embedding is a lookup: no FLOPs)
    linear = params - vocab * d
    assert count.forward_flops == 2 * linear * tokens
    assert grown_mb < 2000  # a copy of the weights would be 27 GB


def test_estimate_model_file_counts_the_users_module(tmp_path, capsys):
    out = tmp_path / "est"
    code, _, err = run_cli(["estimate", "--model", f"{MY_MODEL}:build", "-n", "8", "--network", "10gbe",
                            "-s", "adamw,powersgd,dlion-mavo", "--out", str(out)], capsys)
    assert code == 0, err
    rows = pd.read_csv(out / "estimate.csv")
    d, v, layers = 1024, 32000, 12
    block = 4 * d + (3 * d * d + 3 * d) + (d * d + d) + (4 * d * d + 4 * d) + (4 * d * d + d)
    assert set(rows["params"]) == {2 * v * d + layers * block}
    assert set(rows["model"]) == {f"{MY_MODEL}:build"} and set(rows["samples_per_worker"]) == {8}
    assert rows.set_index("strategy").loc["powersgd", "wire_bytes"] < rows.set_index("strategy").loc["adamw", "wire_bytes"]


def test_resnet_rows_price_powersgd_on_the_real_shapes():
    resolved = resolve(EstimateConfig(model="resnet50", strategies=["powersgd"], tokens_per_worker=32))
    assert resolved.shapes == [tuple(p.shape) for p in resnet50().parameters()]  # a real CPU module's shapes
    ranks = [estimate(EstimateConfig(model="resnet50", workers=8, network="10gbe", strategies=["powersgd"],
                                     options={"powersgd_rank": r}, tokens_per_worker=32))["wire_bytes"].iloc[0] for r in (4, 8)]
    factors = [sum(s[0] + math.prod(s[1:]) for s in resolved.shapes if len(s) > 1) * r for r in (4, 8)]
    assert ranks[1] > ranks[0] and factors[1] > factors[0]  # more rank, more floats: the shapes are used
    counted = estimate(EstimateConfig(model="resnet50", workers=8, network="10gbe", strategies=["adamw"],
                                      tokens_per_worker=32))
    six_p = estimate(EstimateConfig(params=25_557_032, workers=8, network="10gbe", strategies=["adamw"],
                                    tokens_per_worker=32))
    assert counted["compute_s"].iloc[0] > 20 * six_p["compute_s"].iloc[0]  # a conv reuses each weight ~50x per image


BAD = {
    "returns-str": ("def build():\n    return 'resnet'\n", "it returned a str; accepted: an nn.Module or (module, example_input)"),
    "returns-int": ("def build():\n    return 3\n", "it returned an int; accepted: an nn.Module"),  # was "a int"
    "no-parameters": ("def build():\n    return nn.ReLU(), torch.zeros(1, 4)\n", "the module has no trainable parameters"),
    "reads-a-value": ("def build():\n    width = int(torch.ones(4).sum().item())\n    return nn.Linear(width, 4)\n",
                      "building it on the meta device raised"),
    "forward-fails": ("def build():\n    return nn.Linear(4, 4), torch.zeros(2, 5)\n", "forward and backward of the example input (2, 5)"),
    "exits": ("def build():\n    raise SystemExit(2)\n", "building it raised SystemExit: 2; lionsim imports the file"),
    "bad-example": ("def build():\n    return nn.Linear(4, 4), [1, 2]\n", "the example input must be a tensor"),
}


@pytest.mark.parametrize("key", list(BAD))
def test_a_bad_model_file_is_one_line_exit_2_and_nothing_written(key, tmp_path, capsys):
    body, message = BAD[key]
    path = tmp_path / f"model_{key.replace('-', '_')}.py"
    path.write_text("import torch\nfrom torch import nn\n" + body)
    out = tmp_path / "out"
    code, _, err = run_cli(["estimate", "--model", f"{path}:build", "--out", str(out)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and message in err, err
    assert not out.exists()


@pytest.mark.parametrize("spec, message", [
    ("/no/such/model.py:build", "no file /no/such/model.py"),
    (f"{MY_MODEL}:nope", "no function 'nope' in it; it defines: build"),
    ("no_such_module_xyz:build", "no module 'no_such_module_xyz'"),
])
def test_bad_model_specs(spec, message, tmp_path, capsys):
    code, _, err = run_cli(["estimate", "--model", spec, "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and message in err, err
    assert not (tmp_path / "o").exists()


def test_a_module_without_example_input_needs_tokens_and_is_priced_by_6p(tmp_path, capsys):
    path = tmp_path / "bare.py"
    path.write_text("from torch import nn\ndef build():\n    return nn.Linear(1000, 1000)\n")
    code, _, err = run_cli(["estimate", "--model", f"{path}:build", "-s", "adamw"], capsys)
    assert code == 2 and "give --tokens-per-worker" in err, err
    bare = estimate(EstimateConfig(model=f"{path}:build", tokens_per_worker=64, strategies=["adamw"]))
    same = estimate(EstimateConfig(params=1_001_000, tensors=2, tokens_per_worker=64, strategies=["adamw"]))
    assert bare["compute_s"].iloc[0] == same["compute_s"].iloc[0] and bare["params"].iloc[0] == 1_001_000


def test_module_form_prices_the_same_as_the_file_form(monkeypatch):
    monkeypatch.syspath_prepend(str(MY_MODEL.parent))
    by_module = estimate(EstimateConfig(model="my_model:build", strategies=["adamw", "powersgd"]))
    by_file = estimate(EstimateConfig(model=f"{MY_MODEL}:build", strategies=["adamw", "powersgd"]))
    assert set(by_module["model"]) == {"my_model:build"}
    columns = ["params", "compute_s", "wire_bytes", "step_s"]
    pd.testing.assert_frame_equal(by_module[columns], by_file[columns])


def test_a_counted_image_models_estimate_counts_samples_in_their_own_column(tmp_path, capsys):
    import pandas as pd

    code, out, err = run_cli(["estimate", "-m", "resnet18", "-n", "4", "-s", "adamw", "--tokens-per-worker", "1",
                         "--out", str(tmp_path / "e")], capsys)
    assert code == 0, err
    assert "1 sample/worker" in " ".join(out.split())
    row = pd.read_csv(tmp_path / "e" / "estimate.csv").iloc[0]
    assert row["unit"] == "samples" and row["samples_per_worker"] == 1 and pd.isna(row["tokens_per_worker"])
    code, out, _ = run_cli(["estimate", "-m", "gpt2-124m", "-n", "4", "-s", "adamw", "--out", str(tmp_path / "g")], capsys)
    row = pd.read_csv(tmp_path / "g" / "estimate.csv").iloc[0]
    assert code == 0 and "1,024 tokens/worker" in " ".join(out.split())
    assert row["unit"] == "tokens" and row["tokens_per_worker"] == 1024 and pd.isna(row["samples_per_worker"])


def test_an_unknown_model_names_the_file_form_and_suggests_last():
    import pytest

    from lionsim.errors import LionsimError
    from lionsim.estimate import EstimateConfig, resolve

    with pytest.raises(LionsimError) as e:
        resolve(EstimateConfig(model="my/m.py", workers=8))
    assert "FILE.py:FUNC" in str(e.value)
    with pytest.raises(LionsimError) as e:
        resolve(EstimateConfig(model="gpt2-12m", workers=8))
    assert "FILE.py:FUNC" in str(e.value) and str(e.value).endswith("did you mean 'gpt2-124m'?")
