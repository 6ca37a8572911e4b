"""A model file for `lionsim estimate --model examples/plugins/my_model.py:build`.

lionsim calls `build()` on the meta device (no memory for the weights, whatever their size),
reads the parameter shapes and counts the forward and backward FLOPs of the example input.
Nothing here imports lionsim.
"""

from __future__ import annotations

import torch
from torch import nn


class Block(nn.Module):
    """A pre-norm transformer block: attention and a 4x MLP."""

    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab: int = 32000, d: int = 1024, layers: int = 12, heads: int = 16) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.Sequential(*[Block(d, heads) for _ in range(layers)])
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(self.embed(tokens)))  # (B, T, vocab)


def build():
    """A 12-layer, 1024-wide language model and one worker's step of 8 sequences of 512 tokens."""
    return TinyLM(), torch.zeros(8, 512, dtype=torch.long)
