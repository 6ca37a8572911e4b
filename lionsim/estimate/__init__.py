"""`lionsim estimate`: the per-step breakdown of each strategy for a model size, no training.

    from lionsim.estimate import EstimateConfig, estimate
    frame = estimate(EstimateConfig(model="transformer-3b", workers=64, network="a100x8-4hdr", device="a100"))

The step-time model itself lives in lionsim.steptime, which `lionsim bench` shares; this
package holds the command's own parts: its configuration, the probe that reads a strategy's
payload without training, the table, the sweep and its plot.
"""

import sys

from lionsim._lazy import ShadowingModule, lazy_attributes

_NAMES = {
    'DEFAULT_STRATEGIES': '.config',
    'EstimateConfig': '.config',
    'Resolved': '.config',
    'resolve': '.config',
    'with_gpus_per_node': '.config',
    'Probe': '.probe',
    'probe': '.probe',
    'ESTIMATE_COLUMNS': '.table',
    'EXTRA_COLUMNS': '.table',
    'estimate': '.table',
    'estimate_rows': '.table',
}
__getattr__, __dir__ = lazy_attributes(__name__, _NAMES)


class _Package(ShadowingModule):
    _shadowed = ("probe",)  # the function, not the submodule lionsim.estimate.probe


sys.modules[__name__].__class__ = _Package

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
