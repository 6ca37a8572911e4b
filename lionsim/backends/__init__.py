"""Where collectives run: `sim` (N virtual workers in one process) or a real process group.

A transport is written once against `Comm`; every tensor it passes carries a leading
local-worker dimension `w`: w = W on the simulator (all workers at once), w = 1 on a real
rank. So the same maths serves N virtual workers and one real rank.
"""

from lionsim.backends.comm import Comm
from lionsim.backends.dist import ProcessGroupComm
from lionsim.backends.sim import SimComm

BACKENDS = ("sim", "gloo", "nccl")

__all__ = ["BACKENDS", "Comm", "ProcessGroupComm", "SimComm"]
