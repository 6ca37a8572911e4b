"""Model presets: transformer shapes whose parameter counts are computed from the architecture.

| preset         | shape                                              | params        | checks against |
|----------------|----------------------------------------------------|---------------|----------------|
| gpt2-124m      | GPT-2 small: 12 x 768, vocab 50257, ctx 1024, tied  | 124,439,808   | HF gpt2 |
| gpt2-345m      | GPT-2 medium: 24 x 1024                            | 354,823,168   | HF gpt2-medium |
| gpt2-1.3b      | GPT-3 XL shape (Brown et al. 2020, Table 2.1): 24 x 2048, ctx 2048, GPT-2 vocab | 1.31e9 | |
| transformer-3b | GPT-3 2.7B shape: 32 x 2560, ctx 2048               | 2.65e9        | (Distributed Lion's "3B transformer" gives no shape; this is the nearest published one) |
| llama-7b       | LLaMA 7B: 32 x 4096, SwiGLU 11008, RMSNorm, no biases, untied, vocab 32000, ctx 2048 | 6,738,415,616 | Touvron et al. 2023 |
| vit-s          | ViT-S/16 at 224 px, 12 x 384, 1000 classes          | 22,050,664    | timm vit_small_patch16_224 |
| vit-b          | ViT-B/16 at 224 px, 12 x 768, 1000 classes          | 86,567,656    | timm vit_base_patch16_224 |
| resnet18       | ResNet-18 at 224 px, 1000 classes (counted on meta) | 11,689,512    | torchvision resnet18 |
| resnet50       | ResNet-50 at 224 px, 1000 classes (counted on meta) | 25,557,032    | torchvision resnet50 |
| resnet50-tf    | resnet50 with TensorFlow's weight layout (HWIO kernels, [in, out] dense) | 25,557,032 | tf_cnn_benchmarks' convnet_builder.py |

Hugging Face's names are aliases (ALIASES): gpt2 is gpt2-124m, gpt2-medium gpt2-345m.

The ResNets (PowerSGD's and DGC's classic image benchmarks) are lionsim.compute.counted
presets: their modules (lionsim.workloads.models.resnet) are built on the meta device and their
shapes and FLOPs counted (1.81 and 4.09 G multiply-adds forward per 224 px image, torchvision's
figures), since a convolution's FLOPs are not 6 P per sample. resnet50-tf is the same module
with each weight's shape as TensorFlow stores it (lionsim.compute.counted.tensorflow_layout):
PowerSGD views a tensor as [shape[0], rest], so a TF-trained ResNet's 3x3 kernel is a 3 x
(3 in out) matrix, not out x (in 3 3), and its rank-1 factors are most of the tensor.

`tokens_per_sample` is the context length (decoders) or patches + class token (ViT), the
T of flops.forward_flops per sample. `tensors` counts parameter tensors with q, k, v and the
attention output as four separate projections (GPT-2's checkpoints fuse q, k, v into one:
its count there is lower); only per-tensor scales (EF-signSGD, TernGrad) depend on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from lionsim.compute.counted import CountedShape
from lionsim.errors import LionsimError
from lionsim.registry import Registry


def block_params(d_model: int, d_ff: int, *, mlp: str, norm: str, bias: bool) -> int:
    """Parameters of one pre-norm transformer block: attention (q, k, v, out), MLP, two norms."""
    attention = 4 * d_model * d_model + (4 * d_model if bias else 0)
    if mlp == "gelu":  # up d -> d_ff, down d_ff -> d
        feed_forward = 2 * d_model * d_ff + ((d_ff + d_model) if bias else 0)
    else:  # swiglu: gate and up d -> d_ff, down d_ff -> d
        feed_forward = 3 * d_model * d_ff + ((2 * d_ff + d_model) if bias else 0)
    return attention + feed_forward + 2 * norm_params(d_model, norm)


def norm_params(d_model: int, norm: str) -> int:
    """LayerNorm has a weight and a bias; RMSNorm only a weight."""
    return 2 * d_model if norm == "layernorm" else d_model


def block_shapes(d_model: int, d_ff: int, *, mlp: str, norm: str, bias: bool) -> list[tuple[int, ...]]:
    """The shapes of one block's tensors as block_params counts them (torch's nn.Linear weight is
    [out, in])."""
    d = d_model
    shapes = [(d, d)] * 4 + ([(d,)] * 4 if bias else [])  # q, k, v, out
    if mlp == "gelu":
        shapes += [(d_ff, d), (d, d_ff)] + ([(d_ff,), (d,)] if bias else [])
    else:
        shapes += [(d_ff, d), (d_ff, d), (d, d_ff)] + ([(d_ff,), (d_ff,), (d,)] if bias else [])
    return shapes + [(d,)] * (2 * norm_tensors(norm))


def norm_tensors(norm: str) -> int:
    return 2 if norm == "layernorm" else 1


def block_tensors(*, mlp: str, norm: str, bias: bool) -> int:
    """Parameter tensors of one block as block_params counts it: q, k, v, out; the MLP's matrices; two norms."""
    matrices = 4 + (2 if mlp == "gelu" else 3)
    return matrices * (2 if bias else 1) + 2 * norm_tensors(norm)


class ModelShape(Protocol):
    name: str
    description: str

    @property
    def params(self) -> int: ...

    @property
    def tokens_per_sample(self) -> int: ...

    @property
    def tensors(self) -> int: ...

    @property
    def tensor_shapes(self) -> list[tuple[int, ...]]: ...

    @property
    def tensor_names(self) -> list[str]: ...


def _validate(name: str, mlp: str, norm: str, sizes: dict[str, int]) -> None:
    if mlp not in ("gelu", "swiglu"):
        raise LionsimError(f"model {name!r}: mlp {mlp!r}; choose from: gelu, swiglu")
    if norm not in ("layernorm", "rmsnorm"):
        raise LionsimError(f"model {name!r}: norm {norm!r}; choose from: layernorm, rmsnorm")
    for key, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise LionsimError(f"model {name!r}: {key} = {value!r} must be an integer >= 1")


@dataclass(frozen=True, kw_only=True, slots=True)
class DecoderShape:
    """A GPT/LLaMA-style decoder-only language model."""

    name: str
    """Preset name."""
    n_layer: int
    """Transformer blocks."""
    d_model: int
    """Residual width."""
    n_head: int
    """Attention heads (no effect on the count)."""
    d_ff: int
    """MLP hidden width."""
    vocab_size: int
    """Token embedding rows."""
    seq_len: int
    """Context length, tokens per sample."""
    mlp: str = "gelu"
    """"gelu" (two matrices) or "swiglu" (three)."""
    norm: str = "layernorm"
    """"layernorm" or "rmsnorm"."""
    bias: bool = True
    """Linear layers have biases."""
    tied_embeddings: bool = True
    """The output head reuses the token embedding."""
    learned_positions: bool = True
    """A learned position embedding (GPT-2); False for rotary (LLaMA)."""
    description: str = ""
    """Where the shape comes from."""

    def __post_init__(self) -> None:
        _validate(self.name, self.mlp, self.norm, {
            "n_layer": self.n_layer, "d_model": self.d_model, "n_head": self.n_head,
            "d_ff": self.d_ff, "vocab_size": self.vocab_size, "seq_len": self.seq_len,
        })

    @property
    def params(self) -> int:
        embeddings = self.vocab_size * self.d_model
        positions = self.seq_len * self.d_model if self.learned_positions else 0
        blocks = self.n_layer * block_params(self.d_model, self.d_ff, mlp=self.mlp, norm=self.norm, bias=self.bias)
        final_norm = norm_params(self.d_model, self.norm)
        head = 0 if self.tied_embeddings else self.vocab_size * self.d_model
        return embeddings + positions + blocks + final_norm + head

    @property
    def tokens_per_sample(self) -> int:
        return self.seq_len

    @property
    def tensor_shapes(self) -> list[tuple[int, ...]]:
        """Every parameter tensor's shape, in the order of `params` (PowerSGD compresses by shape)."""
        d = self.d_model
        shapes = [(self.vocab_size, d)] + ([(self.seq_len, d)] if self.learned_positions else [])
        shapes += self.n_layer * block_shapes(d, self.d_ff, mlp=self.mlp, norm=self.norm, bias=self.bias)
        shapes += [(d,)] * norm_tensors(self.norm)
        return shapes + ([] if self.tied_embeddings else [(self.vocab_size, d)])

    @property
    def tensor_names(self) -> list[str]:
        """A name per tensor_shapes entry, as the model's module would name it where a rule reads names
        (Muon's hidden matrices: not the embeddings, positions or the head)."""
        per_block = len(block_shapes(self.d_model, self.d_ff, mlp=self.mlp, norm=self.norm, bias=self.bias))
        names = ["tok_embed.weight"] + (["pos_embed.weight"] if self.learned_positions else [])
        names += [f"blocks.{i}.{j}" for i in range(self.n_layer) for j in range(per_block)]
        names += [f"norm.{j}" for j in range(norm_tensors(self.norm))]
        return names + ([] if self.tied_embeddings else ["head.weight"])

    @property
    def tensors(self) -> int:
        """Parameter tensors: embeddings, blocks, final norm, an untied head."""
        blocks = self.n_layer * block_tensors(mlp=self.mlp, norm=self.norm, bias=self.bias)
        return 1 + int(self.learned_positions) + blocks + norm_tensors(self.norm) + int(not self.tied_embeddings)


@dataclass(frozen=True, kw_only=True, slots=True)
class ViTShape:
    """A Vision Transformer classifier (Dosovitskiy et al. 2021): patch embedding, class token, blocks, head."""

    name: str
    """Preset name."""
    n_layer: int
    """Transformer blocks."""
    d_model: int
    """Residual width."""
    n_head: int
    """Attention heads (no effect on the count)."""
    d_ff: int
    """MLP hidden width."""
    image_size: int
    """Input side, pixels."""
    patch_size: int
    """Patch side, pixels."""
    channels: int = 3
    """Input channels."""
    num_classes: int = 1000
    """Classifier outputs."""
    description: str = ""
    """Where the shape comes from."""

    def __post_init__(self) -> None:
        _validate(self.name, "gelu", "layernorm", {
            "n_layer": self.n_layer, "d_model": self.d_model, "n_head": self.n_head, "d_ff": self.d_ff,
            "image_size": self.image_size, "patch_size": self.patch_size, "channels": self.channels,
            "num_classes": self.num_classes,
        })
        if self.image_size % self.patch_size:
            raise LionsimError(f"model {self.name!r}: image_size {self.image_size} is not a multiple of patch_size {self.patch_size}")

    @property
    def patches(self) -> int:
        return (self.image_size // self.patch_size) ** 2

    @property
    def params(self) -> int:
        d = self.d_model
        patch_embed = self.channels * self.patch_size**2 * d + d  # a conv with bias
        cls_and_positions = d + (self.patches + 1) * d
        blocks = self.n_layer * block_params(d, self.d_ff, mlp="gelu", norm="layernorm", bias=True)
        final_norm = norm_params(d, "layernorm")
        head = d * self.num_classes + self.num_classes
        return patch_embed + cls_and_positions + blocks + final_norm + head

    @property
    def tokens_per_sample(self) -> int:
        return self.patches + 1

    @property
    def tensor_shapes(self) -> list[tuple[int, ...]]:
        """Every parameter tensor's shape, in the order of `params` (PowerSGD compresses by shape)."""
        d, p = self.d_model, self.patch_size
        shapes = [(d, self.channels, p, p), (d,), (1, 1, d), (1, self.patches + 1, d)]
        shapes += self.n_layer * block_shapes(d, self.d_ff, mlp="gelu", norm="layernorm", bias=True)
        return shapes + [(d,)] * 2 + [(self.num_classes, d), (self.num_classes,)]

    @property
    def tensor_names(self) -> list[str]:
        """A name per tensor_shapes entry (lionsim's ViT module's: the patch embedding, class token and
        positions, blocks, final norm, head)."""
        per_block = len(block_shapes(self.d_model, self.d_ff, mlp="gelu", norm="layernorm", bias=True))
        names = ["patch_embed.weight", "patch_embed.bias", "cls_token", "pos_embed"]
        names += [f"blocks.{i}.{j}" for i in range(self.n_layer) for j in range(per_block)]
        return names + ["norm.weight", "norm.bias", "head.weight", "head.bias"]

    @property
    def tensors(self) -> int:
        """Parameter tensors: patch conv weight and bias, class token, positions, blocks, final norm, head."""
        blocks = self.n_layer * block_tensors(mlp="gelu", norm="layernorm", bias=True)
        return 4 + blocks + norm_tensors("layernorm") + 2


MODELS: Registry[ModelShape] = Registry("model")


def resnet18():
    """torchvision's ResNet-18 (lionsim.workloads.models.resnet), imported when first built: the
    presets' names (estimate --help) need no torch."""
    from lionsim.workloads.models.resnet import resnet18 as build

    return build()


def resnet50():
    """torchvision's ResNet-50, imported when first built (as resnet18)."""
    from lionsim.workloads.models.resnet import resnet50 as build

    return build()


def _gpt(name: str, n_layer: int, d_model: int, n_head: int, seq_len: int, description: str) -> DecoderShape:
    return DecoderShape(
        name=name, n_layer=n_layer, d_model=d_model, n_head=n_head, d_ff=4 * d_model,
        vocab_size=50257, seq_len=seq_len, description=description,
    )


for _model in (
    _gpt("gpt2-124m", 12, 768, 12, 1024, "GPT-2 small (Radford et al. 2019)"),
    _gpt("gpt2-345m", 24, 1024, 16, 1024, "GPT-2 medium (Radford et al. 2019)"),
    _gpt("gpt2-1.3b", 24, 2048, 16, 2048, "GPT-3 XL shape (Brown et al. 2020, Table 2.1) with the GPT-2 vocabulary"),
    _gpt("transformer-3b", 32, 2560, 32, 2048, "GPT-3 2.7B shape (Brown et al. 2020, Table 2.1)"),
    DecoderShape(
        name="llama-7b", n_layer=32, d_model=4096, n_head=32, d_ff=11008, vocab_size=32000, seq_len=2048,
        mlp="swiglu", norm="rmsnorm", bias=False, tied_embeddings=False, learned_positions=False,
        description="LLaMA 7B (Touvron et al. 2023)",
    ),
    ViTShape(name="vit-s", n_layer=12, d_model=384, n_head=6, d_ff=1536, image_size=224, patch_size=16,
             description="ViT-S/16 (Touvron et al. 2021, DeiT-S)"),
    ViTShape(name="vit-b", n_layer=12, d_model=768, n_head=12, d_ff=3072, image_size=224, patch_size=16,
             description="ViT-B/16 (Dosovitskiy et al. 2021)"),
    CountedShape(name="resnet18", build=resnet18, input_shape=(3, 224, 224),
                 description="ResNet-18 (He et al. 2016), torchvision's layout"),
    CountedShape(name="resnet50", build=resnet50, input_shape=(3, 224, 224),
                 description="ResNet-50 (He et al. 2016), torchvision's v1.5 layout"),
    CountedShape(name="resnet50-tf", build=resnet50, input_shape=(3, 224, 224), layout="tensorflow",
                 description="ResNet-50 with TensorFlow's weight layout (tf_cnn_benchmarks: HWIO kernels, "
                             "[in, out] dense)"),
):
    MODELS.add(_model.name, _model)

ALIASES = {"gpt2": "gpt2-124m", "gpt2-medium": "gpt2-345m"}
"""Hugging Face's names for the presets that are its checkpoints' shapes (gpt2-large and gpt2-xl,
36 x 1280 and 48 x 1600, are no preset: gpt2-1.3b is GPT-3 XL's shape). An alias is a registered
name (any case, as the preset's own); what is priced carries the preset's name."""
for _alias, _preset in ALIASES.items():
    MODELS.add(_alias, MODELS.get(_preset))


def model_choices() -> str:
    """Every model name, in the registry's order, an alias beside the preset it stands for ("gpt2
    (gpt2-124m)"), as devices.device_choices lists devices: the list --help and an unknown --model
    give."""
    return ", ".join(name if shape.name == name else f"{name} ({shape.name})" for name, shape in MODELS.items())
