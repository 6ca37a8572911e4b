"""The user-facing workload configuration."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lionsim.errors import LionsimError
from lionsim.forms import parse_eval_samples, parse_split  # noqa: F401 (re-exported)
from lionsim.ranges import refusal, span

SIZES = ("tiny", "small", "paper")
EVAL_DEFAULT = 1024
"""Held-out samples scored when --eval-samples is not given (fewer if a real test set holds fewer)."""


def eval_count(requested: int | str | None, available: int, source: str) -> int:
    """Held-out samples to score: `requested` (None: EVAL_DEFAULT, "all": every one) out of the
    `available` ones of a real test set."""
    if requested is None:
        return min(EVAL_DEFAULT, available)
    if requested == "all":
        return available
    if requested > available:
        raise LionsimError(refusal("--eval-samples", requested, f"{span(1, available, whole=True)}, or all",
                                   f"{source} holds {available}"))
    return int(requested)


def generated_eval_count(requested: int | str | None, held_out: int, source: str, unit: str) -> int:
    """Held-out samples to score from data a workload generates (or gpt's held-out text):
    `requested` (None or "all": EVAL_DEFAULT) up to the `held_out` samples (`unit`) `source` holds out
    (Workload.heldout_limit), or up to EVAL_DEFAULT where it holds fewer (the default is never
    refused; a short set is scored with repeats). More is refused, as a real test set's would be:
    a generated set would otherwise grow without bound (100M samples: 13 GB and minutes a pass)."""
    if requested in (None, "all"):
        return EVAL_DEFAULT
    limit = max(EVAL_DEFAULT, held_out)
    if requested > limit:
        why = "" if held_out >= EVAL_DEFAULT else "the default; a set this short is scored with repeats"
        raise LionsimError(refusal("--eval-samples", requested, f"{span(1, limit, whole=True, why=why)}, or all",
                                   f"{source} holds out {held_out} {unit}"))
    return int(requested)


@dataclass(frozen=True, kw_only=True, slots=True)
class WorkloadConfig:
    """What to train on: model family and size, data source, sharding and batch size."""

    name: str = "mlp"
    """Workload registry name (`lionsim workloads` lists them), an installed plugin's, or FILE.py:FUNC |
    module:FUNC (lionsim.workloads.plugin)."""
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
    eval_samples: int | str | None = None
    """Held-out samples (gpt: context windows) scored by each evaluation: a count, "all" (a real
    test set's every sample, gpt's every non-overlapping window of its held-out text), or None:
    EVAL_DEFAULT (fewer where a real test set holds fewer). At most what the workload holds out
    (generated data: Workload.heldout_limit). The workload's `eval_size` says how many."""
    train_size: int | None = None
    """Size of the generated training set: samples (mlp, vit) or corpus characters, held-out tenth
    included (gpt). None: the workload's default, grown to 8 batches per worker. Generated data only."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "eval_samples", parse_eval_samples(self.eval_samples))  # frozen: set once, here
        for field, value in (("workers", self.workers), ("batch_size", self.batch_size)):
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
            object.__setattr__(self, "data", Path(self.data))

    def to_dict(self) -> dict[str, Any]:
        """Plain values for run.json."""
        d = asdict(self)
        d["data"] = None if self.data is None else str(self.data)
        return d
