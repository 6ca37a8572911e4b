"""A step's compute-stream work (timeline.StepWork), from a device model or from measurements.

- On a device: forward and backward take their FLOPs at the device's peak x mfu (backward is
  twice the forward: compute.flops); encode, decode and update move passes.py's bytes per
  parameter at the device's memory bandwidth.
- Measured (lionsim bench on this machine): the measured seconds, with the measured forward +
  backward split by the same 1 : 2 ratio, since one timer covers both.
"""

from __future__ import annotations

from lionsim.compute import Device, compute_time, memory_pass_time
from lionsim.steptime.passes import PassBytes
from lionsim.steptime.timeline import StepWork

BACKWARD_SHARE = 2.0 / 3.0
"""Backward's share of forward + backward FLOPs (backward = 2 x forward; Kaplan et al. 2020)."""


def device_work(training_flops: float, params: int, passes: PassBytes, device: Device,
                mfu: float | None = None) -> StepWork:
    """One worker's step on `device`: `training_flops` of forward + backward, passes over `params` parameters."""
    return StepWork(
        forward_s=compute_time((1 - BACKWARD_SHARE) * training_flops, device, mfu),
        backward_s=compute_time(BACKWARD_SHARE * training_flops, device, mfu),
        encode_s=memory_pass_time(passes.encode * params, device),
        decode_s=memory_pass_time(passes.decode * params, device),
        update_s=memory_pass_time(passes.update * params, device),
    )


def measured_work(compute_s: float, encode_s: float, decode_s: float, update_s: float) -> StepWork:
    """One worker's step as measured, forward + backward split 1 : 2."""
    return StepWork(forward_s=(1 - BACKWARD_SHARE) * compute_s, backward_s=BACKWARD_SHARE * compute_s,
                    encode_s=encode_s, decode_s=decode_s, update_s=update_s)
