"""Where collectives run: `sim` (N virtual workers in one process) or a real process group.

A transport is written once against `Comm`; every tensor it passes carries a leading
local-worker dimension `w`: w = W on the simulator (all workers at once), w = 1 on a real
rank. So the same maths serves N virtual workers and one real rank.

The classes load with their module on first use (lionsim._lazy): BACKENDS alone needs no torch,
so a command checks `--backend` before anything imports it.
"""

from lionsim._lazy import lazy_exports

BACKENDS = ("sim", "gloo", "nccl")

__getattr__, __dir__, _lazy = lazy_exports(__name__, {".comm": "Comm", ".dist": "ProcessGroupComm", ".sim": "SimComm"})
__all__ = ["BACKENDS", *_lazy]
