"""Where collectives run: `sim` (N virtual workers in one process) or a real process group.

A transport is written once against `Comm`; every tensor it passes carries a leading
local-worker dimension `w`: w = W on the simulator (all workers at once), w = 1 on a real
rank. So the same maths serves N virtual workers and one real rank.

The classes load with their module on first use (lionsim._lazy): BACKENDS alone needs no torch,
so a command checks `--backend` before anything imports it.
"""

import math

from lionsim._lazy import lazy_exports
from lionsim.errors import LionsimError
from lionsim.ranges import refusal, span

BACKENDS = ("sim", "gloo", "nccl")
MAX_TIMEOUT_S = 365 * 86400
"""The longest --timeout of a real process group: a year. Below init_process_group torch keeps the
timeout in 64-bit nanoseconds (overflowing near 9.2e9 s): with torch 2.13 a gloo group given
1e10 s failed at once, "timed out after 10000000000000ms", and datetime.timedelta refuses
8.64e13 s; past a year a wait is a typo, not a choice."""


def check_timeout(seconds: float) -> None:
    """--timeout (bench on gloo/nccl, comm measuring): a finite number of seconds in (0, a year];
    nan, inf, 0 and negatives are refused before any process starts."""
    if not (isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
            and math.isfinite(seconds) and 0 < seconds <= MAX_TIMEOUT_S):
        raise LionsimError(refusal("--timeout", seconds, span(0, MAX_TIMEOUT_S, above=True, why="seconds; a year")))

__getattr__, __dir__, _lazy = lazy_exports(__name__, {".comm": "Comm", ".dist": "ProcessGroupComm", ".sim": "SimComm"})
__all__ = ["BACKENDS", "MAX_TIMEOUT_S", "check_timeout", *_lazy]
