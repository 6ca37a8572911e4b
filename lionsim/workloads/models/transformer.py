"""Pre-norm transformer blocks shared by the ViT and the GPT (no dropout: runs stay deterministic)."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn


class SelfAttention(nn.Module):
    """Multi-head self-attention with one fused qkv projection."""

    def __init__(self, dim: int, heads: int, causal: bool) -> None:
        super().__init__()
        if dim % heads:
            raise ValueError(f"dim {dim} is not divisible by heads {heads}")
        self.heads = heads
        self.causal = causal
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: Tensor) -> Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)  # each (B, nh, T, hs)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)  # (B, nh, T, hs)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    """x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, dim: int, heads: int, mlp_ratio: int, causal: bool) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = SelfAttention(dim, heads, causal)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp_ratio * dim), nn.GELU(), nn.Linear(mlp_ratio * dim, dim))

    def forward(self, x: Tensor) -> Tensor:  # (B, T, dim)
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


def init_weights(module: nn.Module) -> None:
    """GPT-2 style init (normal 0.02, zero bias): small transformers train faster than with the torch default."""
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, std=0.02)
    if isinstance(module, nn.Linear) and module.bias is not None:
        nn.init.zeros_(module.bias)
