"""The caption's line where a worker's activations plainly outgrow its device.

estimate counts no activations (lionsim.estimate.memory: they depend on the batch, the sequence
and checkpointing), so a huge --tokens-per-worker is priced as if it fitted. This note says where
even a lower bound of the activations is above the device's memory. The bound is Korthikanti et
al. 2022 ("Reducing Activation Recomputation in Large Transformer Models", Sec. 4.1): a
transformer layer stores s b h (34 + 5 a s / h) bytes of 16-bit activations without recomputation,
of which 34 s b h remain when the attention scores are recomputed (selective recomputation; flash
attention never stores them). With s b the tokens a worker:

    activations >= ACTIVATION_BYTES x tokens x d_model x layers

for a GPT or ViT preset, before the embeddings, the logits and any float32 copy. A worker of G
devices (--replica-gpus) is taken to split them evenly. The price stands for a batch split into
micro-batches by gradient accumulation (the same FLOPs and exchange a step), so it is a note, not a
refusal; full checkpointing keeps only each layer's input (2 s b h bytes) but recomputes the
forward, which estimate does not price.
"""

from __future__ import annotations

from lionsim.numbers import binary_bytes_text

ACTIVATION_BYTES = 34
"""Bytes a layer stores per token per unit of width, 16-bit, attention scores recomputed
(Korthikanti et al. 2022, Sec. 4.1: the 34 of s b h (34 + 5 a s / h))."""


def activation_bytes(tokens: int, d_model: int, layers: int) -> int:
    """The lower bound of a worker's activations (module doc), bytes."""
    return ACTIVATION_BYTES * tokens * d_model * layers


def activation_note(r) -> str:
    """One sentence where `r`'s (a Resolved estimate's) activations are above its device's memory by
    the lower bound; "" where they may fit, or the model is no transformer preset (--params, a ResNet,
    a module of one's own)."""
    from lionsim.compute.models import MODELS, DecoderShape, ViTShape

    shape = MODELS.get(r.model) if r.model in MODELS else None
    if not isinstance(shape, (DecoderShape, ViTShape)):
        return ""
    per_gpu = activation_bytes(r.tokens_per_worker, shape.d_model, shape.n_layer) / r.replica_gpus
    if per_gpu <= r.device.memory_bytes:
        return ""
    return (f"activations are not counted: as one micro-batch, {r.tokens_per_worker:,} tokens a worker need at least "
            f"{binary_bytes_text(per_gpu)} a GPU ({ACTIVATION_BYTES} bytes a token per layer and unit of width, "
            f"16-bit: Korthikanti et al. 2022), above the {r.device.name}'s {binary_bytes_text(r.device.memory_bytes)}; "
            "gradient accumulation over smaller ones has the FLOPs and the exchange priced here.")
