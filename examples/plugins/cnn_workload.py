"""A small CNN on an image tensor file: a complete user workload for `lionsim bench --workload`.

    lionsim bench --workload examples/plugins/cnn_workload.py:make --workers 4 --steps 20

On first use it writes its data set, 4 classes of 12x12 grey images (a horizontal bar, a
vertical bar, a diagonal, a square ring, each at a random place, with noise), with torch.save to
$CNN_WORKLOAD_DATA (default: lionsim-cnn-example/images.pt in the system temp folder), then
loads it from there as any user's workload loads its files. Nothing here imports lionsim:
lionsim needs only the function's return value.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import torch
from torch import nn
from torch.utils.data import Dataset

SIDE = 12
CLASSES = 4
SAMPLES = 2048


def data_path() -> Path:
    return Path(os.environ.get("CNN_WORKLOAD_DATA", Path(tempfile.gettempdir()) / "lionsim-cnn-example" / "images.pt"))


def write_images(path: Path, samples: int = SAMPLES) -> None:
    """Draw the image set (seeded, so every process writes the same file) and save it."""
    with torch.device("cpu"):  # real pixels, also when lionsim first calls make() on the meta device
        _write_images(path, samples)


def _write_images(path: Path, samples: int) -> None:
    g = torch.Generator().manual_seed(1234)
    labels = torch.randint(0, CLASSES, (samples,), generator=g)
    images = torch.zeros(samples, 1, SIDE, SIDE)
    for i, label in enumerate(labels.tolist()):
        r, c = torch.randint(1, SIDE - 5, (2,), generator=g).tolist()
        if label == 0:
            images[i, 0, r + 2, c:c + 5] = 1.0  # horizontal bar
        elif label == 1:
            images[i, 0, r:r + 5, c + 2] = 1.0  # vertical bar
        elif label == 2:
            images[i, 0, torch.arange(r, r + 5), torch.arange(c, c + 5)] = 1.0  # diagonal
        else:
            images[i, 0, r:r + 5, c:c + 5] = 1.0  # square ring
            images[i, 0, r + 1:r + 4, c + 1:c + 4] = 0.0
    images += 0.3 * torch.randn(images.shape, generator=g)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.partial")
    torch.save({"images": (images * 64 + 64).clamp(0, 255).to(torch.uint8), "labels": labels}, partial)
    partial.replace(path)  # atomic: processes writing at once (ranks, sweep jobs) leave one whole file


class ImageFile(Dataset):
    """(image, label) pairs of a saved {"images": uint8 [N, 1, H, W], "labels": int64 [N]} file."""

    def __init__(self, path: Path) -> None:
        saved = torch.load(path, weights_only=True)
        self.images, self.labels = saved["images"], saved["labels"]

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        return (self.images[i].float() - 64.0) / 64.0, self.labels[i]  # background about 0, a stroke about 1


class SmallCNN(nn.Module):
    """Two 3x3 convolutions and a global max pool: a shape is found wherever it sits."""

    def __init__(self, classes: int = CLASSES) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),                             # (B, 16, 12, 12)
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveMaxPool2d(1),   # (B, 32, 1, 1)
        )
        self.head = nn.Linear(32, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).flatten(1))


def make():
    """Small CNN on 12x12 images of 4 shapes, from an image tensor file it writes on first use."""
    path = data_path()
    if not path.exists():
        write_images(path)
    return SmallCNN(), ImageFile(path), nn.functional.cross_entropy


def make_with_eval(seed: int = 0):
    """The richer form: the same CNN with its own eval set and metric, named, lower is better (a dict
    of WorkloadParts' keys)."""
    path = data_path()
    if not path.exists():
        write_images(path)
    images = ImageFile(path)
    train = torch.utils.data.Subset(images, range(0, 1792))
    held_out = torch.utils.data.Subset(images, range(1792, len(images)))
    torch.manual_seed(seed)  # lionsim seeds torch already; a workload may seed its own code too

    def error_rate(output: torch.Tensor, target: torch.Tensor) -> float:
        return (output.argmax(-1) != target).float().mean().item()

    return {"model": SmallCNN(), "train": train, "loss": nn.functional.cross_entropy,
            "eval": held_out, "metric": error_rate, "metric_name": "error rate", "higher_is_better": False}
