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

from torch.utils import flop_counter
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode


def _without_dynamo_guard(mode: type) -> None:
    """Spare a torch dispatch mode the import of torch._dynamo on its first op.

    torch wraps every TorchDispatchMode's __torch_dispatch__ in torch._disable_dynamo, which
    imports torch._dynamo (1-3 s, most of a sweep worker's start-up) on first use, only to keep
    torch.compile out of the mode. lionsim never compiles: the wrapper's cache slot is filled
    with the plain function, so the import never happens. A torch without that slot keeps its
    wrapper (a slower start, the same counts)."""
    raw = getattr(mode.__dict__.get("__torch_dispatch__"), "__wrapped__", None)
    if raw is not None:
        setattr(raw, "__dynamo_disable", raw)


_without_dynamo_guard(flop_counter._FlopCounterMode)  # what FlopCounterMode dispatches through


class KernelCounter(TorchDispatchMode):
    """Counts kernel-launching aten ops, booked to whatever `where()` names at the time (None:
    not counted, lionsim.timing.Clock.counted)."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        """No torch._disable_dynamo wrapper (and no torch._dynamo import): lionsim never compiles."""
        return False

    def __init__(self, where: Callable[[], str | None] = lambda: "all") -> None:
        super().__init__()
        self.where = where
        self.kernels: Counter[str] = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if not func.is_view:
            where = self.where()
            if where is not None:
                self.kernels[where] += 1
        return func(*args, **(kwargs or {}))


def count_gradient(run: Callable[[], object]) -> tuple[float, int]:
    """(FLOPs, kernels) of `run()`, one worker's forward + backward, in two passes: under
    FlopCounterMode some ops dispatch differently, so kernels are counted on a plain run."""
    with FlopCounterMode(display=False) as flops:
        run()
    with KernelCounter() as kernels:
        run()
    return float(flops.get_total_flops()), kernels.kernels["all"]
