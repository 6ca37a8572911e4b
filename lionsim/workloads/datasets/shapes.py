"""Procedural 10-class 32x32 RGB images: one pattern family per class.

Every image draws its own position, scale, rotation jitter, spatial frequency, phase,
colours and pixel noise, so the class is carried mostly by the pattern's shape (the
pattern colour leans weakly towards a class colour, COLOUR_CUE). Families come in
confusable groups (gratings 60 degrees apart, discs vs squares, rings vs concentric waves,
plus vs cross): a small ViT sits near chance for its first ~100 steps, then reaches
60-80% within several hundred (measured with Adam, batch 32). Images are uint8
(N, 3, 32, 32), like CIFAR-10.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from lionsim.workloads.datasets.chunks import balanced_labels, generate

SIDE = 32
CLASSES = 10
CLASS_NAMES = (
    "grating-0", "grating-60", "grating-120", "disc", "square",
    "ring", "waves", "plus", "cross", "checker",
)
NOISE = 0.12
"""Standard deviation of the pixel noise, image intensities in [0, 1]."""
COLOUR_CUE = 0.4
"""Weight of the class's own colour in the pattern colour (the rest is random): a weak first-order
cue, as colour is in CIFAR-10, which lets training leave chance level quickly."""
PALETTE = torch.tensor(
    [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1], [1, .5, 0], [.5, 0, 1], [0, 1, .5], [1, 1, 1]]
).view(CLASSES, 3, 1, 1)

ORIENTATION = torch.tensor([0.0, math.pi / 3, 2 * math.pi / 3, 0, 0, 0, 0, 0, math.pi / 4, 0]).view(CLASSES, 1, 1)
"""Base rotation of each class's pattern, radians (the gratings and the cross)."""


def make_shapes(n: int, seed: int, stream: str) -> tuple[Tensor, Tensor]:
    """The first `n` images (uint8 (n, 3, 32, 32), labels int64 (n,)) of stream "train" or "eval"."""
    return generate(_chunk, n, seed, f"shapes/{stream}")


def _chunk(n: int, gen: torch.Generator) -> tuple[Tensor, Tensor]:
    y = balanced_labels(n, CLASSES, gen)

    def u(lo: float, hi: float) -> Tensor:  # (n, 1, 1) uniform draws, one per image
        return lo + (hi - lo) * torch.rand(n, 1, 1, generator=gen)

    cx, cy = u(-0.45, 0.45), u(-0.45, 0.45)
    scale = u(0.3, 0.6)
    angle = u(-0.3, 0.3)  # radians of jitter around each family's orientation
    freq = u(1.5, 3.0)  # cycles per unit length
    phase = u(0, 2 * math.pi)
    width = u(0.08, 0.16)  # stroke half-width
    grid = (torch.arange(SIDE) + 0.5) / SIDE * 2 - 1  # pixel centres in [-1, 1]
    py, px = grid.view(1, SIDE, 1), grid.view(1, 1, SIDE)
    dx, dy = px - cx, py - cy  # (n, SIDE, SIDE)
    theta = angle + ORIENTATION[y]
    ru, rv = dx * torch.cos(theta) + dy * torch.sin(theta), -dx * torch.sin(theta) + dy * torch.cos(theta)
    mask = torch.empty(n, 1, SIDE, SIDE)
    for c in range(CLASSES):  # render each image with its own class's pattern only
        i = (y == c).nonzero().squeeze(1)
        mask[i, 0] = _pattern(c, ru[i], rv[i], scale[i], freq[i], phase[i], width[i])
    bg = 0.45 * torch.rand(n, 3, 1, 1, generator=gen)  # dark background, bright pattern: a fixed polarity
    fg = 0.55 + 0.45 * (COLOUR_CUE * PALETTE[y] + (1 - COLOUR_CUE) * torch.rand(n, 3, 1, 1, generator=gen))
    img = bg + (fg - bg) * mask + NOISE * torch.randn(n, 3, SIDE, SIDE, generator=gen)
    return (img.clamp(0, 1) * 255).round().to(torch.uint8), y


def _soft(d: Tensor) -> Tensor:
    """1 inside (d > 0), 0 outside, with an anti-aliased edge about one pixel wide."""
    return torch.sigmoid(d * SIDE / 2)


def _pattern(c: int, ru: Tensor, rv: Tensor, scale: Tensor, freq: Tensor, phase: Tensor, width: Tensor) -> Tensor:
    """Intensity in [0, 1] of class `c`'s pattern, in pattern-frame coordinates (ru, rv) (m, SIDE, SIDE)."""
    r = torch.sqrt(ru**2 + rv**2)
    envelope = torch.exp(-((r / (scale * 1.6)) ** 2))
    if c <= 2:  # gratings; the orientation was set by the rotation
        return envelope * (0.5 + 0.5 * torch.sin(2 * math.pi * freq * ru + phase))
    if c == 3:  # disc
        return _soft(scale - r)
    if c == 4:  # square
        return _soft(scale - torch.maximum(ru.abs(), rv.abs()))
    if c == 5:  # ring
        return _soft(width - (r - scale).abs())
    if c == 6:  # concentric waves
        return envelope * (0.5 + 0.5 * torch.sin(2 * math.pi * freq * r + phase))
    if c in (7, 8):  # plus; the cross is the plus turned 45 degrees
        horizontal = _soft(scale - ru.abs()) * _soft(width - rv.abs())
        vertical = _soft(scale - rv.abs()) * _soft(width - ru.abs())
        return torch.maximum(horizontal, vertical)
    # checkerboard
    cells = torch.sin(math.pi * freq * ru + phase) * torch.sin(math.pi * freq * rv)
    return envelope * (0.5 + 0.5 * torch.sign(cells))
