"""Device and model presets; parameter counts against published figures and against torch modules."""

from __future__ import annotations

import pytest
from torch import nn

from lionsim.compute import (
    DEVICES,
    MODELS,
    DecoderShape,
    Device,
    ViTShape,
    backward_flops,
    compute_time,
    forward_flops,
    memory_pass_time,
    training_flops,
)
from lionsim.errors import LionsimError


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("gpt2-124m", 124_439_808),  # Hugging Face gpt2
        ("gpt2-345m", 354_823_168),  # Hugging Face gpt2-medium
        ("llama-7b", 6_738_415_616),  # LLaMA 7B
        ("vit-s", 22_050_664),  # timm vit_small_patch16_224
        ("vit-b", 86_567_656),  # timm vit_base_patch16_224
    ],
)
def test_parameter_counts_match_published_models(name, params):
    assert MODELS.get(name).params == params


def test_large_presets_are_in_their_size_class():
    assert 1.2e9 < MODELS.get("gpt2-1.3b").params < 1.4e9
    assert 2.5e9 < MODELS.get("transformer-3b").params < 3.5e9
    assert MODELS.get("vit-b").tokens_per_sample == 197 and MODELS.get("gpt2-124m").tokens_per_sample == 1024


class _Block(nn.Module):
    """A plain pre-norm block built from torch layers, to count parameters independently."""

    def __init__(self, d: int, d_ff: int, *, swiglu: bool, rms: bool, bias: bool) -> None:
        super().__init__()
        norm = (lambda: nn.RMSNorm(d)) if rms else (lambda: nn.LayerNorm(d))
        self.ln1, self.ln2 = norm(), norm()
        self.attn = nn.MultiheadAttention(d, 2, bias=bias)
        if swiglu:
            self.mlp = nn.ModuleList([nn.Linear(d, d_ff, bias=bias), nn.Linear(d, d_ff, bias=bias), nn.Linear(d_ff, d, bias=bias)])
        else:
            self.mlp = nn.ModuleList([nn.Linear(d, d_ff, bias=bias), nn.Linear(d_ff, d, bias=bias)])


def _count(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


@pytest.mark.parametrize("llama", [False, True])
def test_decoder_count_matches_a_torch_module(llama):
    d, d_ff, layers, vocab, ctx = 16, 40, 3, 50, 12
    shape = DecoderShape(
        name="tiny", n_layer=layers, d_model=d, n_head=2, d_ff=d_ff, vocab_size=vocab, seq_len=ctx,
        mlp="swiglu" if llama else "gelu", norm="rmsnorm" if llama else "layernorm", bias=not llama,
        tied_embeddings=not llama, learned_positions=not llama,
    )
    model = nn.ModuleDict({
        "wte": nn.Embedding(vocab, d),
        "blocks": nn.ModuleList(_Block(d, d_ff, swiglu=llama, rms=llama, bias=not llama) for _ in range(layers)),
        "ln_f": nn.RMSNorm(d) if llama else nn.LayerNorm(d),
    })
    if llama:
        model["head"] = nn.Linear(d, vocab, bias=False)
    else:
        model["wpe"] = nn.Embedding(ctx, d)
    assert shape.params == _count(model)


def test_vit_count_matches_a_torch_module():
    d, image, patch, classes = 24, 32, 8, 10
    shape = ViTShape(name="tiny-vit", n_layer=2, d_model=d, n_head=2, d_ff=4 * d, image_size=image, patch_size=patch, num_classes=classes)
    model = nn.ModuleDict({
        "patch": nn.Conv2d(3, d, patch, stride=patch),
        "blocks": nn.ModuleList(_Block(d, 4 * d, swiglu=False, rms=False, bias=True) for _ in range(2)),
        "ln": nn.LayerNorm(d),
        "head": nn.Linear(d, classes),
    })
    tokens = (image // patch) ** 2 + 1
    extra = d + tokens * d  # class token + position embedding (plain tensors in timm)
    assert shape.params == _count(model) + extra
    assert shape.tokens_per_sample == tokens


def test_bad_shapes():
    with pytest.raises(LionsimError, match="mlp 'relu'"):
        DecoderShape(name="x", n_layer=1, d_model=8, n_head=1, d_ff=8, vocab_size=8, seq_len=8, mlp="relu")
    with pytest.raises(LionsimError, match="patch_size"):
        ViTShape(name="x", n_layer=1, d_model=8, n_head=1, d_ff=8, image_size=30, patch_size=16)
    with pytest.raises(LionsimError, match="n_layer = 0"):
        DecoderShape(name="x", n_layer=0, d_model=8, n_head=1, d_ff=8, vocab_size=8, seq_len=8)


def test_device_presets_match_datasheets():
    a100 = DEVICES.get("a100")
    assert a100 is DEVICES.get("a100-40gb")
    assert a100.peak_flops == 312e12 and a100.memory_bandwidth_Bps == 1.555e12 and a100.memory_bytes == 40 * 2**30
    assert DEVICES.get("a100-80gb").memory_bandwidth_Bps == 2.039e12
    h100, h200 = DEVICES.get("h100"), DEVICES.get("h200")
    assert h100.peak_flops == 989e12 and h100.memory_bandwidth_Bps == 3.35e12
    assert h200.peak_flops == 989e12 and h200.memory_bandwidth_Bps == 4.8e12 and h200.memory_bytes == 141 * 2**30
    assert all(d.mfu == 0.4 for _, d in DEVICES.items())


def test_registries_fail_with_the_list():
    with pytest.raises(LionsimError, match="unknown device .tpu-v5.; choose from: t4, v100"):
        DEVICES.get("tpu-v5")
    with pytest.raises(LionsimError, match="unknown model 'gpt5'; choose from: gpt2-124m"):
        MODELS.get("gpt5")


def test_flops_and_times():
    # 124M params x 1024 tokens: forward 2NT, backward 4NT, training 6NT
    assert forward_flops(124e6, 1024) == pytest.approx(2.53952e11)
    assert backward_flops(124e6, 1024) == pytest.approx(5.07904e11)
    assert training_flops(1e9, 1000) == pytest.approx(6e12)
    a100 = DEVICES.get("a100")
    assert compute_time(312e12 * 0.4, a100) == pytest.approx(1.0)  # default mfu 0.4
    assert compute_time(312e12, a100, mfu=0.5) == pytest.approx(2.0)
    with pytest.raises(LionsimError, match="mfu"):
        compute_time(1.0, a100, mfu=0.0)
    # 1.244e9 bytes at 1.555 TB/s x 0.8 = 1 ms
    assert memory_pass_time(1.244e9, a100) == pytest.approx(1e-3)


def test_bad_device():
    with pytest.raises(LionsimError, match="mfu"):
        Device(name="x", peak_flops=1e12, memory_bandwidth_Bps=1e12, memory_bytes=1e9, mfu=1.5)


def test_resnet50_tf_is_resnet50_with_tensorflow_s_weight_shapes():
    """tf_cnn_benchmarks' kernels: conv [kh, kw, in, out], dense [in, out]; the same module otherwise."""
    torch_shapes, tf = MODELS.get("resnet50").tensor_shapes, MODELS.get("resnet50-tf")
    by_hand = [(s[2], s[3], s[1], s[0]) if len(s) == 4 else (s[1], s[0]) if len(s) == 2 else s for s in torch_shapes]
    assert tf.tensor_shapes == by_hand
    assert tf.tensor_shapes[0] == (7, 7, 3, 64) and (2048, 1000) in tf.tensor_shapes
    assert tf.params == MODELS.get("resnet50").params == 25_557_032 and tf.tensors == 161
    assert tf.training_flops_per_unit == MODELS.get("resnet50").training_flops_per_unit


def test_powersgd_on_the_tensorflow_layout_sends_grace_s_floats():
    """GRACE's TF PowerSGD (grace_dl/tensorflow/compressor/powersgd.py) sends, per weight of two or more
    dimensions, P (shape[0] x 1) and Q (rest x 1) at rank 1, and vectors whole. lionsim's rule (torch's)
    sends a weight whole where factors would not halve it: only the 1x1 kernels here ([1, 1, in, out]:
    one row), whose whole is GRACE's Q, one float fewer than P + Q."""
    import math

    from lionsim.strategies.powersgd import lowrank_spec

    shapes = MODELS.get("resnet50-tf").tensor_shapes
    grace = sum(math.prod(s) if len(s) == 1 else s[0] + math.prod(s) // s[0] for s in shapes)
    one_row = sum(1 for s in shapes if len(s) > 1 and s[0] == 1)
    spec = lowrank_spec(shapes, 1)
    assert sum(spec.factors) + spec.uncompressed == grace - one_row
    assert 0.6 < grace / MODELS.get("resnet50").params < 0.65  # 15.96M of 25.56M floats
    torch_spec = lowrank_spec(MODELS.get("resnet50").tensor_shapes, 1)
    assert sum(torch_spec.factors) + torch_spec.uncompressed < 0.01 * grace  # torch's layout: out x (in kh kw)
