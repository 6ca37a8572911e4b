"""The per-step time model that `lionsim bench` and `lionsim estimate` share.

    work  (compute, encode, decode, update: measured, or modelled for a device)
    + the collectives a step issues, priced on a network and overlapped with backward
    -> StepTimes (compute_s, encode_s, comm_s, comm_exposed_s, decode_s, update_s, step_s)

timeline.py combines them, overlap.py says which transports run per bucket during backward,
passes.py counts the bytes each memory-bound pass moves, work.py turns FLOPs and bytes (or
measurements) into StepWork.
"""

from lionsim._lazy import lazy_attributes

_NAMES = {
    'MODES': '.overlap',
    'Buckets': '.overlap',
    'OverlapConfig': '.overlap',
    'PassBytes': '.passes',
    'pass_bytes': '.passes',
    'Priced': '.timeline',
    'StepTimes': '.timeline',
    'StepWork': '.timeline',
    'price_calls': '.timeline',
    'serial_end': '.timeline',
    'step_times': '.timeline',
    'Kernels': '.work',
    'device_work': '.work',
    'measured_work': '.work',
}
__getattr__, __dir__ = lazy_attributes(__name__, _NAMES)

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
