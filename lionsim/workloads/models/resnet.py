"""ResNet-18 and ResNet-50 (He et al. 2016, "Deep Residual Learning for Image Recognition",
Table 1) for ImageNet-size inputs, in torchvision's layout (v1.5: a bottleneck block strides in
its 3x3 convolution). Parameter counts with 1000 classes: 11,689,512 and 25,557,032, as
torchvision's resnet18 and resnet50 (tests/estimate/test_model_files.py checks both).

    stem    7x7/2 conv 64, BN, ReLU, 3x3/2 max pool            (B, 64, 56, 56) at 224 px
    stages  [2, 2, 2, 2] basic or [3, 4, 6, 3] bottleneck blocks at widths 64, 128, 256, 512,
            the first block of stages 2-4 striding 2 with a 1x1/2 conv + BN on its shortcut
    head    global average pool, fully connected to the classes
"""

from __future__ import annotations

from torch import Tensor, nn


def _conv_bn(c_in: int, c_out: int, kernel: int, stride: int = 1) -> list[nn.Module]:
    return [nn.Conv2d(c_in, c_out, kernel, stride=stride, padding=kernel // 2, bias=False), nn.BatchNorm2d(c_out)]


class BasicBlock(nn.Module):
    """Two 3x3 convolutions (ResNet-18/34)."""

    expansion = 1

    def __init__(self, c_in: int, width: int, stride: int) -> None:
        super().__init__()
        self.body = nn.Sequential(*_conv_bn(c_in, width, 3, stride), nn.ReLU(inplace=True), *_conv_bn(width, width, 3))
        self.shortcut = _shortcut(c_in, width * self.expansion, stride)

    def forward(self, x: Tensor) -> Tensor:
        return (self.body(x) + self.shortcut(x)).relu()


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3 (strided), 1x1 expand by 4 (ResNet-50/101/152)."""

    expansion = 4

    def __init__(self, c_in: int, width: int, stride: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            *_conv_bn(c_in, width, 1), nn.ReLU(inplace=True),
            *_conv_bn(width, width, 3, stride), nn.ReLU(inplace=True),
            *_conv_bn(width, width * self.expansion, 1),
        )
        self.shortcut = _shortcut(c_in, width * self.expansion, stride)

    def forward(self, x: Tensor) -> Tensor:
        return (self.body(x) + self.shortcut(x)).relu()


def _shortcut(c_in: int, c_out: int, stride: int) -> nn.Module:
    """Identity, or a strided 1x1 conv + BN where the shape changes (torchvision's option B)."""
    if stride == 1 and c_in == c_out:
        return nn.Identity()
    return nn.Sequential(*_conv_bn(c_in, c_out, 1, stride))


class ResNet(nn.Module):
    def __init__(self, block: type[BasicBlock] | type[Bottleneck], layers: list[int], classes: int = 1000) -> None:
        super().__init__()
        self.stem = nn.Sequential(*_conv_bn(3, 64, 7, 2), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1))
        stages, c_in = [], 64
        for i, (width, blocks) in enumerate(zip((64, 128, 256, 512), layers)):
            for j in range(blocks):
                stages.append(block(c_in, width, 2 if i > 0 and j == 0 else 1))
                c_in = width * block.expansion
        self.stages = nn.Sequential(*stages)
        self.head = nn.Linear(c_in, classes)

    def forward(self, x: Tensor) -> Tensor:  # (B, 3, H, W) -> (B, classes)
        return self.head(self.stages(self.stem(x)).mean(dim=(2, 3)))


def resnet18(classes: int = 1000) -> ResNet:
    return ResNet(BasicBlock, [2, 2, 2, 2], classes)


def resnet50(classes: int = 1000) -> ResNet:
    return ResNet(Bottleneck, [3, 4, 6, 3], classes)
