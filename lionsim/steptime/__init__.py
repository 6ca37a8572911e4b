"""The per-step time model that `lionsim bench` and `lionsim estimate` share.

    work  (compute, encode, decode, update: measured, or modelled for a device)
    + the collectives a step issues, priced on a network and overlapped with backward
    -> StepTimes (compute_s, encode_s, comm_s, comm_exposed_s, decode_s, update_s, step_s)

timeline.py combines them, overlap.py says when a step's exchange runs (per bucket during backward
or after it: the transport's declaration, the strategy's reference schedule, --overlap),
passes.py counts the bytes each memory-bound pass (and a momentum sync's copy) moves, work.py
turns FLOPs and bytes (or measurements) into StepWork.
"""

from lionsim.steptime.overlap import MODES, Buckets, OverlapConfig, serial_end
from lionsim.steptime.passes import NO_SYNC, PassBytes, SyncCopy, pass_bytes, sync_copy
from lionsim.steptime.timeline import Priced, StepTimes, StepWork, price_calls, step_times
from lionsim.steptime.work import Kernels, device_work, measured_work

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
