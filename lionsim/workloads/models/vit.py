"""A Vision Transformer for small images (patch embedding, pre-norm blocks, mean-pooled head)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from lionsim.workloads.models.transformer import Block, init_weights


@dataclass(kw_only=True, slots=True)
class ViTConfig:
    image: int = 32
    """Image side, pixels."""
    channels: int = 3
    """Input channels."""
    patch: int = 4
    """Patch side, pixels (32/4 gives 64 tokens)."""
    dim: int
    """Token width."""
    depth: int
    """Transformer blocks."""
    heads: int
    """Attention heads per block."""
    mlp_ratio: int = 2
    """MLP hidden width as a multiple of dim."""
    classes: int = 10
    """Output classes."""


class ViT(nn.Module):
    def __init__(self, cfg: ViTConfig) -> None:
        super().__init__()
        tokens = (cfg.image // cfg.patch) ** 2
        self.embed = nn.Conv2d(cfg.channels, cfg.dim, kernel_size=cfg.patch, stride=cfg.patch)
        self.pos = nn.Parameter(torch.zeros(1, tokens, cfg.dim))
        self.blocks = nn.Sequential(*(Block(cfg.dim, cfg.heads, cfg.mlp_ratio, causal=False) for _ in range(cfg.depth)))
        self.ln = nn.LayerNorm(cfg.dim)
        self.head = nn.Linear(cfg.dim, cfg.classes)
        self.apply(init_weights)
        nn.init.normal_(self.pos, std=0.02)

    def forward(self, x: Tensor) -> Tensor:  # (B, C, H, W) -> (B, classes)
        x = self.embed(x).flatten(2).transpose(1, 2) + self.pos  # (B, T, dim)
        x = self.ln(self.blocks(x))
        return self.head(x.mean(dim=1))  # mean over tokens instead of a CLS token
