"""The per-step time model that `lionsim bench` and `lionsim estimate` share.

    work  (compute, encode, decode, update: measured, or modelled for a device)
    + the collectives a step issues, priced on a network and overlapped with backward
    -> StepTimes (compute_s, encode_s, comm_s, comm_exposed_s, decode_s, update_s, step_s)

timeline.py combines them, overlap.py says which transports run per bucket during backward,
passes.py counts the bytes each memory-bound pass moves, work.py turns FLOPs and bytes (or
measurements) into StepWork.
"""

from lionsim.steptime.overlap import MODES, Buckets, OverlapConfig
from lionsim.steptime.passes import PassBytes, pass_bytes
from lionsim.steptime.timeline import Priced, StepTimes, StepWork, price_calls, serial_end, step_times
from lionsim.steptime.work import Kernels, device_work, measured_work

__all__ = [
    "MODES",
    "Buckets",
    "Kernels",
    "OverlapConfig",
    "PassBytes",
    "Priced",
    "StepTimes",
    "StepWork",
    "device_work",
    "measured_work",
    "pass_bytes",
    "price_calls",
    "serial_end",
    "step_times",
]
