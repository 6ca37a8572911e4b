"""A step's compute-stream work (timeline.StepWork), from a device model or from measurements.

- On a device: forward and backward take their FLOPs at the device's peak x mfu (backward is
  twice the forward: compute.flops); encode, decode and update move passes.py's bytes per
  parameter at the device's memory bandwidth; a momentum sync's copy (passes.sync_copy) is a
  pass of its own added to the update. Where the kernels a part launches are known (lionsim
  bench counts them), the part takes at least kernels x the device's per-kernel floor:
  max(work / throughput, kernels x kernel_s), since an eager step of a small model is bound by
  launches, not by FLOPs or bytes. With a KernelCost (kernel_passes.py) encode, decode and
  update take the codec kernel table's real throughput instead of one fused pass each.
- Measured (lionsim bench on this machine): the measured seconds, with the measured forward +
  backward split by the same 1 : 2 ratio, since one timer covers both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from lionsim.compute import Device, compute_time, memory_pass_time
from lionsim.steptime.passes import NO_SYNC, PassBytes, SyncCopy
from lionsim.steptime.timeline import StepWork

if TYPE_CHECKING:
    from lionsim.steptime.kernel_passes import KernelCost

BACKWARD_SHARE = 2.0 / 3.0
"""Backward's share of forward + backward FLOPs (backward = 2 x forward; Kaplan et al. 2020)."""


@dataclass(frozen=True, slots=True)
class Kernels:
    """Kernels each part of one worker's step launches (0: unknown, no floor)."""

    compute: int = 0
    """Forward + backward."""
    encode: int = 0
    decode: int = 0
    update: int = 0


def device_work(training_flops: float, params: int, passes: PassBytes, device: Device,
                mfu: float | None = None, kernels: Kernels = Kernels(), sync: SyncCopy = NO_SYNC,
                cost: KernelCost | None = None, update_flops: float = 0.0, update_launches: int = 0) -> StepWork:
    """One worker's step on `device`: `training_flops` of forward + backward, passes over `params`
    parameters, each part at least its kernels x device.kernel_s; the update also runs `sync` and
    `update_flops` of the strategy's own matrix products (Strategy.update_flops) at peak x mfu, at least
    its `update_launches` x device.kernel_s (Muon's Newton-Schulz on small matrices is launch-bound).
    `cost`: encode, decode and update (with its sync, cost.sync) at the kernel table's speeds."""

    def floor(seconds: float, count: int) -> float:
        return max(seconds, count * device.kernel_s)

    compute = floor(compute_time(training_flops, device, mfu), kernels.compute)
    products = floor(compute_time(update_flops, device, mfu), update_launches)
    if cost is not None:
        return StepWork(
            forward_s=(1 - BACKWARD_SHARE) * compute,
            backward_s=BACKWARD_SHARE * compute,
            encode_s=floor(cost.seconds("encode", params), kernels.encode),
            decode_s=floor(cost.seconds("decode", params), kernels.decode),
            update_s=floor(cost.seconds("update", params), kernels.update) + products,
        )
    return StepWork(
        forward_s=(1 - BACKWARD_SHARE) * compute,
        backward_s=BACKWARD_SHARE * compute,
        encode_s=floor(memory_pass_time(passes.encode * params, device), kernels.encode),
        decode_s=floor(memory_pass_time(passes.decode * params, device), kernels.decode),
        update_s=floor(memory_pass_time(passes.update * params, device), kernels.update)
        + floor(memory_pass_time(sync.nbytes, device), sync.kernels)
        + products,
    )


def measured_work(compute_s: float, encode_s: float, decode_s: float, update_s: float) -> StepWork:
    """One worker's step as measured, forward + backward split 1 : 2."""
    return StepWork(forward_s=(1 - BACKWARD_SHARE) * compute_s, backward_s=BACKWARD_SHARE * compute_s,
                    encode_s=encode_s, decode_s=decode_s, update_s=update_s)
