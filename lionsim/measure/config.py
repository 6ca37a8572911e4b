"""What `lionsim comm --backend gloo|nccl` measures, checked before any process starts."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from lionsim.backends import check_timeout
from lionsim.errors import LionsimError
from lionsim.measure.ops import check_dtype, sized
from lionsim.ranges import AT_LEAST_0, AT_LEAST_1, refusal, span

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
    dtypes: tuple[str, ...] = ("float32",)
    """Wire dtypes to measure each op in (measure.ops.DTYPES); gathers and all-to-alls move bytes,
    so they are measured in the first dtype only."""
    sizes: tuple[int, ...] = ()
    """Message sizes in bytes, calls.py convention; each is rounded down to whole elements (per rank
    for the ops that split), never below one."""
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
            raise LionsimError(refusal("--ranks", self.ranks, span(2, whole=True, why="a collective needs 2")))
        if not self.sizes:
            raise LionsimError("bad --sizes: no sizes to measure")
        if self.warmup < 0:
            raise LionsimError(refusal("--warmup", self.warmup, AT_LEAST_0))
        if self.iters < 1:
            raise LionsimError(refusal("--iters", self.iters, AT_LEAST_1))
        check_timeout(self.timeout_s)  # nan and inf too: a deadline is computed from it
        for dtype in self.dtypes:
            check_dtype(dtype)
        for op in self.collectives:
            sized(op, 1, self.ranks)  # fails on an op it cannot measure
        return self

    def cases(self) -> list[tuple[str, str]]:
        """(op, dtype) pairs in sweep order: reductions in every dtype, the other ops in the first."""
        from lionsim.measure.ops import REDOPS

        return [(op, dtype) for op in self.collectives
                for dtype in (self.dtypes if REDOPS[op] != "none" else self.dtypes[:1])]

    def to_dict(self) -> dict:
        return asdict(self)
