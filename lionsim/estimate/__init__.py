"""Step-time model without training: compute, memory passes, communication and its overlap.

    from lionsim.estimate import EstimateConfig, estimate
    frame = estimate(EstimateConfig(model="transformer-3b", workers=64, network="a100x8-4hdr", device="a100"))

`timeline.step_times` is the per-step model `lionsim bench` shares.
"""

from lionsim.estimate.config import DEFAULT_STRATEGIES, EstimateConfig, Resolved, resolve, with_gpus_per_node
from lionsim.estimate.overlap import MODES, Buckets, OverlapConfig
from lionsim.estimate.passes import PassBytes, pass_bytes
from lionsim.estimate.probe import Probe, probe
from lionsim.estimate.table import ESTIMATE_COLUMNS, EXTRA_COLUMNS, estimate, estimate_rows
from lionsim.estimate.timeline import StepTimes, StepWork, serial_end, step_times

__all__ = [
    "DEFAULT_STRATEGIES",
    "ESTIMATE_COLUMNS",
    "EXTRA_COLUMNS",
    "MODES",
    "Buckets",
    "EstimateConfig",
    "OverlapConfig",
    "PassBytes",
    "Probe",
    "Resolved",
    "StepTimes",
    "StepWork",
    "estimate",
    "estimate_rows",
    "pass_bytes",
    "probe",
    "resolve",
    "serial_end",
    "step_times",
    "with_gpus_per_node",
]
