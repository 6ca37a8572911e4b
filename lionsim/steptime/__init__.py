"""The per-step time model that `lionsim bench` and `lionsim estimate` share.

    work  (compute, encode, decode, update: measured, or modelled for a device)
    + the collectives a step issues, priced on a network and overlapped with backward
    -> StepTimes (compute_s, encode_s, comm_s, comm_exposed_s, decode_s, update_s, step_s)

timeline.py combines them, overlap.py says when a step's exchange runs (per bucket during backward
or after it: the transport's declaration, the strategy's reference schedule, --overlap),
passes.py counts the bytes each memory-bound pass (and a momentum sync's copy) moves, work.py
turns FLOPs and bytes (or measurements) into StepWork.
"""

from lionsim._lazy import lazy_attributes

_NAMES = {
    'MODES': '.overlap',
    'Buckets': '.overlap',
    'OverlapConfig': '.overlap',
    'NO_SYNC': '.passes',
    'PassBytes': '.passes',
    'SyncCopy': '.passes',
    'pass_bytes': '.passes',
    'sync_copy': '.passes',
    'Priced': '.timeline',
    'StepTimes': '.timeline',
    'StepWork': '.timeline',
    'price_calls': '.timeline',
    'serial_end': '.overlap',
    'step_times': '.timeline',
    'Kernels': '.work',
    'device_work': '.work',
    'measured_work': '.work',
}
__getattr__, __dir__ = lazy_attributes(__name__, _NAMES)

__all__ = [
    "MODES",
    "NO_SYNC",
    "Buckets",
    "Kernels",
    "OverlapConfig",
    "PassBytes",
    "Priced",
    "StepTimes",
    "StepWork",
    "SyncCopy",
    "device_work",
    "measured_work",
    "pass_bytes",
    "price_calls",
    "serial_end",
    "step_times",
    "sync_copy",
]
