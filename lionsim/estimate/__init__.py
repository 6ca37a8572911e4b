"""`lionsim estimate`: the per-step breakdown of each strategy for a model size, no training.

    from lionsim.estimate import EstimateConfig, estimate
    frame = estimate(EstimateConfig(model="transformer-3b", workers=64, network="a100x8-4hdr", device="a100"))

The step-time model itself lives in lionsim.steptime, which `lionsim bench` shares; this
package holds the command's own parts: its configuration, the probe that reads a strategy's
payload without training, the table, the sweep and its plot.
"""

from lionsim.estimate.config import DEFAULT_STRATEGIES, EstimateConfig, Resolved, resolve, with_gpus_per_node
from lionsim.estimate.probe import Probe, probe
from lionsim.estimate.table import ESTIMATE_COLUMNS, EXTRA_COLUMNS, estimate, estimate_rows

__all__ = [
    "DEFAULT_STRATEGIES",
    "ESTIMATE_COLUMNS",
    "EXTRA_COLUMNS",
    "EstimateConfig",
    "Probe",
    "Resolved",
    "estimate",
    "estimate_rows",
    "probe",
    "resolve",
    "with_gpus_per_node",
]
