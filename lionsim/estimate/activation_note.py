"""The caption's line where a worker's activations plainly outgrow its device.

estimate counts no activations (lionsim.estimate.memory: they depend on the batch, the sequence
and checkpointing), so a huge --tokens-per-worker is priced as if it fitted. This note says where
even a lower bound of the activations is above the device's memory. The bound is Korthikanti et
al. 2022 ("Reducing Activation Recomputation in Large Transformer Models", Sec. 4.1): a
transformer layer stores s b h (34 + 5 a s / h) bytes of 16-bit activations without recomputation,
of which 34 s b h remain when the attention scores are recomputed (selective recomputation; flash
attention never stores them). With s b the tokens a worker:

    activations >= ACTIVATION_BYTES x tokens x d_model x layers

for a GPT or ViT preset, before the embeddings, the logits and any float32 copy. They are held
beside the weights, gradients and optimizer state (lionsim.estimate.memory), so the note compares
their sum with the device's memory, taking the leanest run's state that fits (a run whose state
alone does not fit has its own note). A worker of G devices (--replica-gpus) is taken to split
both evenly. The price stands for a batch split into
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


def activation_note(r, states: tuple[str, int] | None = None) -> str:
    """One sentence where `r`'s (a Resolved estimate's) activations, by the lower bound, beside the
    least weights, gradients and optimizer state of its runs that fit (`states`: (run, bytes a
    worker), lionsim.estimate.memory; None where none fits: the memory note says so), are above its
    device's memory; "" where they may fit, or the model is no transformer preset (--params, a
    ResNet, a module of one's own)."""
    from lionsim.compute.models import MODELS, DecoderShape, ViTShape

    shape = MODELS.get(r.model) if r.model in MODELS else None
    if not isinstance(shape, (DecoderShape, ViTShape)):
        return ""
    per_gpu = activation_bytes(r.tokens_per_worker, shape.d_model, shape.n_layer) / r.replica_gpus
    held = 0 if states is None else states[1] / r.replica_gpus  # a worker of G devices splits both
    memory = r.device.memory_bytes
    if per_gpu + held <= memory:
        return ""
    beside = (f", which beside the {binary_bytes_text(held)} a GPU of weights, gradients and optimizer state "
              f"of the leanest run ({states[0]}) is" if per_gpu <= memory and states is not None else "")
    return (f"activations are not counted: as one micro-batch, {r.tokens_per_worker:,} tokens a worker need at least "
            f"{binary_bytes_text(per_gpu)} a GPU ({ACTIVATION_BYTES} bytes a token per layer and unit of width, "
            f"16-bit: Korthikanti et al. 2022){beside or ','} above the {r.device.name}'s {binary_bytes_text(memory)}; "
            "gradient accumulation over smaller ones has the FLOPs and the exchange priced here.")
