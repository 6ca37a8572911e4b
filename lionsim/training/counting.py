"""Counting what a step asks of a device: FLOPs and kernels, per section of the step.

`--compute DEVICE` books a CPU-trained step as the device would run it (lionsim.steptime.work):
the FLOPs of forward + backward at the device's peak x mfu, and the memory-bound passes at its
bandwidth, but never less than the kernels each part launches times the device's per-kernel
floor (an eager step of a small model is launch-bound on a GPU). Kernels are the aten ops that
compute something: views (view, t, detach, transpose, ...) alias their input and launch nothing.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable

from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode


class KernelCounter(TorchDispatchMode):
    """Counts kernel-launching aten ops, booked to whatever `where()` names at the time."""

    def __init__(self, where: Callable[[], str] = lambda: "all") -> None:
        super().__init__()
        self.where = where
        self.kernels: Counter[str] = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if not func.is_view:
            self.kernels[self.where()] += 1
        return func(*args, **(kwargs or {}))


def count_gradient(run: Callable[[], object]) -> tuple[float, int]:
    """(FLOPs, kernels) of `run()`, one worker's forward + backward, in two passes: under
    FlopCounterMode some ops dispatch differently, so kernels are counted on a plain run."""
    with FlopCounterMode(display=False) as flops:
        run()
    with KernelCounter() as kernels:
        run()
    return float(flops.get_total_flops()), kernels.kernels["all"]
