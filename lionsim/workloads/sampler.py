"""Per-worker batch order: seeded epochs over the worker's shard, random access by step."""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.workloads.seeding import torch_generator


class ShardSampler:
    """Batches of `batch_size` sample indices from one worker's shard.

    Each epoch is a fresh permutation of the shard seeded by (seed, worker, epoch); an epoch
    has len(shard) // batch_size batches (the remainder waits for a later epoch's order, as
    with drop_last). `indices(step)` depends only on (seed, worker, step), in any call order.
    """

    def __init__(self, shard: Tensor, batch_size: int, seed: int, worker: int) -> None:
        if len(shard) < batch_size:
            raise ValueError(f"shard of {len(shard)} samples is smaller than batch size {batch_size}")
        self.shard = shard
        self.batch_size = batch_size
        self.seed = seed
        self.worker = worker
        self.batches_per_epoch = len(shard) // batch_size
        self._epoch = -1
        self._perm = shard

    def indices(self, step: int) -> Tensor:
        """Sample indices (into the full training set) of this worker's batch at `step`."""
        epoch, pos = divmod(step, self.batches_per_epoch)
        if epoch != self._epoch:
            gen = torch_generator(self.seed, "batches", self.worker, epoch)
            self._perm = self.shard[torch.randperm(len(self.shard), generator=gen)]
            self._epoch = epoch
        return self._perm[pos * self.batch_size : (pos + 1) * self.batch_size]
