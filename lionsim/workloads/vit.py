"""`vit`: a Vision Transformer on CIFAR-10 (`data=DIR`) or on generated 10-class pattern images."""

from __future__ import annotations

import torch

from lionsim.workloads.base import Workload, register
from lionsim.workloads.config import WorkloadConfig, eval_count
from lionsim.workloads.datasets import shapes
from lionsim.workloads.datasets.cifar import check_cifar_path, load_cifar10
from lionsim.workloads.models.vit import ViT, ViTConfig
from lionsim.workloads.seeding import seeded_torch
from lionsim.workloads.sources import ArraySource, standardize_stats
from lionsim.workloads.splits import split_indices

SIZES = {
    "tiny": ViTConfig(dim=32, depth=1, heads=2),
    "small": ViTConfig(dim=64, depth=2, heads=4),
    # Distributed Lion's CIFAR-10 ViT: 6 layers, 8 heads, patch 4 (the width is ours: not in the sources we have).
    "paper": ViTConfig(dim=256, depth=6, heads=8),
}


@register("vit")
class ViTWorkload(Workload):
    task = "classification"
    base_train = 8192
    summary = "ViT (patch 4, 32x32 RGB, 10 classes) on CIFAR-10 (--data DIR) or generated pattern images; paper size: 6 layers, 8 heads"

    def __init__(self, cfg: WorkloadConfig) -> None:
        if cfg.data is None:
            x, y = shapes.make_shapes(self.generated_units(cfg), cfg.seed, "train")
            ex, ey = shapes.make_shapes(self.generated_eval_size(cfg), cfg.seed, "eval")
            self.source = "generated pattern images"
        else:
            x, y, ex, ey = load_cifar10(cfg.data)
            n = eval_count(cfg.eval_samples, len(ey), f"the CIFAR-10 test set in {cfg.data}")
            ex, ey = ex[:n], ey[:n]
            self.source = f"CIFAR-10 from {cfg.data}"
        mean, std = standardize_stats(x, dims=(0, 2, 3))  # per channel, (3, 1, 1)
        shards = split_indices(y, cfg.workers, cfg.data_split, cfg.seed, min_size=cfg.batch_size)
        self.model_cfg = SIZES[cfg.size]
        with seeded_torch(cfg.seed, "model", "vit"):
            model = ViT(self.model_cfg)
        self._setup(cfg, model, ArraySource(x, y, mean, std), shards, ArraySource(ex, ey, mean, std))

    @classmethod
    def check_data(cls, cfg: WorkloadConfig) -> None:
        if cfg.data is not None:
            check_cifar_path(cfg.data)

    @classmethod
    def probe(cls, cfg: WorkloadConfig):
        # images are stored as uint8 (3 x 32 x 32) and standardized as a batch is taken
        return ViT(SIZES[cfg.size]), torch.zeros(1, 3, 32, 32), torch.zeros(1, dtype=torch.long), 3 * 32 * 32 + 8

    def describe(self) -> str:
        m = self.model_cfg
        return (
            f"vit: dim {m.dim}, {m.depth} layers, {m.heads} heads, patch {m.patch} ({self.params:,} params) "
            f"on {len(self.train)} {self.source}, split {self.cfg.data_split}"
        )
