"""VGG-16 (Simonyan & Zisserman 2015, configuration D) for `lionsim estimate --model
examples/models/vgg16.py:vgg16`: 13 3x3 convolutions and three fully connected layers, as
torchvision's `vgg16` (138,357,544 parameters, 15.5 GMACs a 224x224 image), with an example
batch of 32 images, the batch per GPU of the Bagua benchmark the published cases model.

lionsim builds it on the meta device and counts its parameters and FLOPs; nothing here imports
lionsim or torchvision.
"""

from __future__ import annotations

import torch
from torch import nn

CHANNELS = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M")
"""Configuration D: output channels of each 3x3 convolution, "M" a 2x2 max-pool."""
BATCH = 32
"""Images per GPU in the example input."""


def features() -> nn.Sequential:
    layers: list[nn.Module] = []
    channels = 3
    for c in CHANNELS:
        if c == "M":
            layers.append(nn.MaxPool2d(2))
        else:
            layers += [nn.Conv2d(channels, c, 3, padding=1), nn.ReLU(inplace=True)]
            channels = c
    return nn.Sequential(*layers)


def vgg16(batch: int = BATCH) -> tuple[nn.Module, torch.Tensor]:
    """The model and an example input of `batch` 224x224 RGB images."""
    model = nn.Sequential(
        features(), nn.AdaptiveAvgPool2d(7), nn.Flatten(),
        nn.Linear(512 * 7 * 7, 4096), nn.ReLU(inplace=True), nn.Dropout(),
        nn.Linear(4096, 4096), nn.ReLU(inplace=True), nn.Dropout(),
        nn.Linear(4096, 1000),
    )
    return model, torch.randn(batch, 3, 224, 224)
