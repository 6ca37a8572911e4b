"""Small non-negative integers in p-bit fields of int32 words, for an all-reduce SUM to add.

A word holds k = floor(31 / p) fields, field i at bits [i p, (i + 1) p): the sign bit stays free,
so where no field's sum reaches 2^p (the caller picks p for its workers) the words' sum neither
carries between fields nor wraps. gloo and NCCL both sum int32. Used by pbit-allreduce (vote
counts) and packed-allreduce (offset levels). The shifts are made once per exchange and passed to
both halves, so encode and decode each run only their own kernels.
"""

from __future__ import annotations

import torch
from torch import Tensor


def word_shifts(bits: int, device: torch.device) -> Tensor:
    """The k = floor(31 / bits) field offsets of a word: 0, bits, 2 bits, ..."""
    return torch.arange(31 // bits, dtype=torch.int32, device=device) * bits


def pack_words(fields: Tensor, shifts: Tensor) -> Tensor:
    """int32 fields [w, m k] (each < 2^bits; the caller pads to whole words) -> words [w, m]."""
    return (fields.reshape(fields.shape[0], -1, shifts.numel()) << shifts).sum(-1, dtype=torch.int32)


def unpack_words(words: Tensor, shifts: Tensor, bits: int) -> Tensor:
    """words [w, m] -> their int32 fields [w, m k], padding included."""
    fields = (words.unsqueeze(-1) >> shifts) & ((1 << bits) - 1)  # [w, m, k]
    return fields.reshape(fields.shape[0], -1)
