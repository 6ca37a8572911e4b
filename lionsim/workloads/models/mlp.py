"""A two-layer perceptron classifier."""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor, nn


@dataclass(kw_only=True, slots=True)
class MLPConfig:
    in_dim: int
    """Input features."""
    hidden: int
    """Hidden units."""
    classes: int
    """Output classes."""


class MLP(nn.Module):
    def __init__(self, cfg: MLPConfig) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(cfg.in_dim, cfg.hidden), nn.GELU(), nn.Linear(cfg.hidden, cfg.classes))

    def forward(self, x: Tensor) -> Tensor:  # (B, in_dim) -> (B, classes)
        return self.net(x)
