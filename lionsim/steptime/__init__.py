"""The per-step time model that `lionsim bench` and `lionsim estimate` share.

    work  (compute, encode, decode, update: measured, or modelled for a device)
    + the collectives a step issues, priced on a network and overlapped with backward
    -> StepTimes (compute_s, encode_s, comm_s, comm_exposed_s, decode_s, update_s, step_s)

timeline.py combines them, overlap.py says when a step's exchange runs (per bucket during backward
or after it: the transport's declaration, the strategy's reference schedule, --overlap),
passes.py counts the bytes each memory-bound pass (and a momentum sync's copy) moves, work.py
turns FLOPs and bytes (or measurements) into StepWork; answers.py asks a transport, before anything
runs, what pricing a payload will ask of it, and asked.py asks each such question once a command.
"""

from lionsim._lazy import lazy_exports

# Lazy: the configuration reads OverlapConfig before anything imports torch (lionsim._lazy).
__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    ".overlap": "MODES Buckets OverlapConfig serial_end",
    ".passes": "NO_SYNC PassBytes SyncCopy pass_bytes sync_copy",
    ".timeline": "Priced StepTimes StepWork price_calls step_times",
    ".work": "Kernels device_work measured_work",
})
