"""Where collectives run: `sim` (N virtual workers in one process) or a real process group.

A transport is written once against `Comm`; every tensor it passes carries a leading
local-worker dimension `w`: w = W on the simulator (all workers at once), w = 1 on a real
rank. So the same maths serves N virtual workers and one real rank.

The classes load with their module on first use (lionsim._lazy): BACKENDS alone needs no torch,
so a command checks `--backend` before anything imports it.
"""

from lionsim._lazy import lazy_attributes

BACKENDS = ("sim", "gloo", "nccl")

_NAMES = {"Comm": ".comm", "ProcessGroupComm": ".dist", "SimComm": ".sim"}
__getattr__, __dir__ = lazy_attributes(__name__, _NAMES)
__all__ = ["BACKENDS", *sorted(_NAMES)]
