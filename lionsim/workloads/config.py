"""The user-facing workload configuration."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lionsim.errors import LionsimError
from lionsim.workloads.splits import parse_split

SIZES = ("tiny", "small", "paper")


@dataclass(kw_only=True, slots=True)
class WorkloadConfig:
    """What to train on: model family and size, data source, sharding and batch size."""

    name: str = "mlp"
    """Workload registry name (`lionsim workloads` lists them)."""
    workers: int = 4
    """Number of data-parallel workers, each with its own shard."""
    batch_size: int = 32
    """Samples per worker per step (for gpt: context windows per worker per step)."""
    seed: int = 0
    """Seeds the generated data, the split, each worker's batch order and the model init."""
    data: Path | None = None
    """CIFAR-10 python-pickle directory (vit) or a UTF-8 text file (gpt); None generates data."""
    data_split: str = "iid"
    """"iid" or "dirichlet:ALPHA" (label skew, ALPHA > 0; classification workloads only)."""
    size: str = "small"
    """Model size preset: "tiny" (tests), "small" (CPU default) or "paper" (the papers' shapes)."""
    eval_samples: int = 1024
    """Held-out samples (gpt: context windows) scored by each evaluation."""
    train_size: int | None = None
    """Size of the generated training set: samples (mlp, vit) or corpus characters, held-out tenth
    included (gpt). None: the workload's default, grown to 8 batches per worker. Generated data only."""

    def __post_init__(self) -> None:
        for field, value in (("workers", self.workers), ("batch_size", self.batch_size), ("eval_samples", self.eval_samples)):
            if not isinstance(value, int) or value < 1:
                raise LionsimError(f"{field.replace('_', '-')} must be a positive integer, got {value!r}")
        if self.train_size is not None and (not isinstance(self.train_size, int) or self.train_size < 1):
            raise LionsimError(f"train-size must be a positive integer, got {self.train_size!r}")
        if self.train_size is not None and self.data is not None:
            raise LionsimError(f"train-size {self.train_size} applies to generated data only, not to data {self.data}")
        if self.size not in SIZES:
            raise LionsimError(f"unknown size {self.size!r}; choose from: {', '.join(SIZES)}")
        parse_split(self.data_split)
        if self.data is not None:
            self.data = Path(self.data)

    def to_dict(self) -> dict[str, Any]:
        """Plain values for run.json."""
        d = asdict(self)
        d["data"] = None if self.data is None else str(self.data)
        return d
