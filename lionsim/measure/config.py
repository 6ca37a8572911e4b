"""What `lionsim comm --backend gloo|nccl` measures, checked before any process starts."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from lionsim.errors import LionsimError
from lionsim.measure.ops import sized

MEASURED_BACKENDS = ("gloo", "nccl")


@dataclass(frozen=True, kw_only=True, slots=True)
class MeasureConfig:
    """A sweep of real collectives over R ranks on this machine."""

    backend: str
    """"gloo" (CPU tensors) or "nccl" (one CUDA device per rank)."""
    ranks: int = 2
    """Processes lionsim starts (the N of every measured row)."""
    collectives: tuple[str, ...] = ("all_reduce",)
    """Ops to measure (lionsim.network.TABLE_OPS names)."""
    sizes: tuple[int, ...] = ()
    """Message sizes in bytes, calls.py convention; each is rounded down to whole float32 elements per rank."""
    warmup: int = 5
    """Iterations run first and dropped (nccl-tests -w)."""
    iters: int = 20
    """Timed iterations per size, each after a barrier (nccl-tests -n)."""
    timeout_s: float = 60.0
    """Seconds a rank may wait in one collective, and the parent for rank 0's next message (one per round)."""

    def validate(self) -> MeasureConfig:
        if self.backend not in MEASURED_BACKENDS:
            raise LionsimError(
                f"unknown backend {self.backend!r} for measuring; accepted: {', '.join(MEASURED_BACKENDS)}")
        if self.ranks < 2:
            raise LionsimError(f"bad --ranks {self.ranks}; a collective needs at least 2 ranks")
        if not self.sizes:
            raise LionsimError("bad --sizes: no sizes to measure")
        if self.warmup < 0:
            raise LionsimError(f"bad --warmup {self.warmup}; accepted: an integer >= 0")
        if self.iters < 1:
            raise LionsimError(f"bad --iters {self.iters}; accepted: an integer >= 1")
        if not self.timeout_s > 0:
            raise LionsimError(f"bad --timeout {self.timeout_s}; accepted: seconds > 0")
        for op in self.collectives:
            for size in self.sizes:
                sized(op, size, self.ranks)  # fails on a size too small to split
        return self

    def to_dict(self) -> dict:
        return asdict(self)
