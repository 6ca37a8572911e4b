"""The forward + backward figure a bench books for every strategy.

Forward and backward are the same for every strategy (same model, same batches), so a bench
measures them once per workload and worker count, in a timing pass before any strategy
trains, and books that one figure on every step of every run: a speedup then comes only from
what the strategies change, never from which run happened to train first or was unlucky.

    measured   TIMING_WARMUP passes dropped, then the median of TIMING_REPEATS passes of this
               process's w workers, divided by w (the slowest process's, on a real backend)
    a device   one worker's FLOPs and kernels counted on its first batch (lionsim.training.
               counting), booked by lionsim.steptime.work.device_work
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

import torch

from lionsim.simulator import GRADIENT_METHODS, gradient_method
from lionsim.training.counting import count_gradient
from lionsim.training.loop import Place
from lionsim.workloads import Workload

TIMING_WARMUP = 3
"""Gradient passes run first and dropped (allocator, first-use kernels, caches)."""
TIMING_REPEATS = 10
"""Gradient passes whose median is booked."""


@dataclass(frozen=True, slots=True)
class ComputeFigure:
    """One worker's forward + backward per step."""

    seconds: float = 0.0
    """Measured median, seconds per worker (0 when modelled for a device)."""
    samples: list[float] = field(default_factory=list)
    """Every timed pass, seconds per worker."""
    flops: float = 0.0
    """One worker's forward + backward FLOPs (counted when modelled for a device)."""
    kernels: int = 0
    """Kernels one worker's forward + backward launches (counted when modelled for a device)."""

    def describe(self) -> str:
        if self.samples:
            return (f"measured once per bench: median of {len(self.samples)} forward+backward passes of this "
                    f"process's workers (after {TIMING_WARMUP} dropped), per worker; the same figure on every step")
        return ("modelled: one worker's FLOPs (torch.utils.flop_counter) at the device's peak x mfu, "
                "at least its kernels x the device's per-kernel floor")


def measure_compute(workload: Workload, place: Place, warmup: int = TIMING_WARMUP,
                    repeats: int = TIMING_REPEATS) -> ComputeFigure:
    """Time forward + backward of this process's workers on the first batches (model unchanged)."""
    w = place.comm.local_workers
    grads = torch.zeros(w, workload.params, device=place.device)
    gradients = GRADIENT_METHODS[gradient_method(workload.gradients, w)]
    cuda = place.device.type == "cuda"
    samples = []
    for i in range(warmup + repeats):
        batches = workload.batches(i, place.workers, place.device)
        if cuda:
            torch.cuda.synchronize(place.device)
        start = time.perf_counter()
        gradients(workload.model, workload.loss, batches, grads)
        if cuda:
            torch.cuda.synchronize(place.device)
        if i >= warmup:
            samples.append((time.perf_counter() - start) / w)
    workload.model.zero_grad(set_to_none=True)
    # every process books the slowest process's figure: a step waits for its slowest worker
    slowest = place.comm.max_over_ranks(torch.tensor(samples, dtype=torch.float64, device=place.device))
    samples = slowest.cpu().tolist()
    return ComputeFigure(seconds=statistics.median(samples), samples=samples)


def count_compute(workload: Workload, place: Place) -> ComputeFigure:
    """Count one worker's forward + backward FLOPs and kernels on its first batch."""
    inputs, targets = workload.batches(0, range(place.workers.start, place.workers.start + 1), place.device)[0]
    flops, kernels = count_gradient(lambda: workload.loss(workload.model, inputs, targets).backward())
    workload.model.zero_grad(set_to_none=True)
    return ComputeFigure(flops=flops, kernels=kernels)
