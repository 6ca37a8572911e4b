"""A small causal transformer language model (nanoGPT shape, untied head, no dropout)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from lionsim.workloads.models.transformer import Block, init_weights


@dataclass(kw_only=True, slots=True)
class GPTConfig:
    vocab: int
    """Vocabulary size (distinct characters)."""
    context: int
    """Tokens per training window."""
    dim: int
    """Token width."""
    depth: int
    """Transformer blocks."""
    heads: int
    """Attention heads per block."""
    mlp_ratio: int = 4
    """MLP hidden width as a multiple of dim."""


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.tok = nn.Embedding(cfg.vocab, cfg.dim)
        self.pos = nn.Embedding(cfg.context, cfg.dim)
        self.blocks = nn.Sequential(*(Block(cfg.dim, cfg.heads, cfg.mlp_ratio, causal=True) for _ in range(cfg.depth)))
        self.ln = nn.LayerNorm(cfg.dim)
        self.head = nn.Linear(cfg.dim, cfg.vocab)
        self.apply(init_weights)

    def forward(self, idx: Tensor) -> Tensor:  # (B, T) token ids -> (B, T, vocab) logits
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.blocks(self.tok(idx) + self.pos(pos))
        return self.head(self.ln(x))
