"""`lionsim estimate`: the per-step breakdown of each strategy for a model size, no training.

    from lionsim.estimate import EstimateConfig, estimate
    frame = estimate(EstimateConfig(model="transformer-3b", workers=64, network="a100x8-4hdr", device="a100"))

The step-time model itself lives in lionsim.steptime, which `lionsim bench` shares; this
package holds the command's own parts: its configuration, the probe that reads a strategy's
payload without training, the table, the sweep and its plot.
"""

import sys

from lionsim._lazy import ShadowingModule, lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    ".config": "DEFAULT_STRATEGIES EstimateConfig Resolved resolve with_gpus_per_node",
    ".probe": "Probe probe",
    ".captioned": "estimate",
    ".table": "ESTIMATE_COLUMNS EXTRA_COLUMNS estimate_rows",
})


class _Package(ShadowingModule):
    _shadowed = ("probe",)  # the function, not the submodule lionsim.estimate.probe


sys.modules[__name__].__class__ = _Package
