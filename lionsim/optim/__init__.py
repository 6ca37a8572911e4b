"""Optimizers: pure update rules (functional) and torch.optim classes for real training."""

from lionsim.optim.distributed_lion import DistributedLion

__all__ = ["DistributedLion"]
