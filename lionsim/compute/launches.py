"""Where a step's compute is its kernels' launches, not its FLOPs: an eager step launches every
kernel at no less than the device's per-kernel floor, so a small model on a big GPU takes its
kernels x that floor whatever the device's peak. estimate's caption and bench's name the bound in
the same words (lionsim.estimate.launch_note, lionsim.reports.obtained)."""

from __future__ import annotations

from lionsim.compute.devices import Device
from lionsim.compute.flops import compute_time


def launch_times(flops: float, kernels: int, device: Device, mfu: float | None = None) -> tuple[float, float]:
    """(the kernels' launch floor, the FLOPs' time at peak x mfu) in seconds; launch-bound where
    the first is the larger."""
    return kernels * device.kernel_s, compute_time(flops, device, mfu)


def launch_words(kernels: int, device: Device, counted: str = "") -> str:
    """"launch-bound: N kernels at 10 us each", `counted` (how they were counted) after the kernels."""
    return f"launch-bound: {kernels:,} kernels{counted} at {device.kernel_s * 1e6:g} us each"
