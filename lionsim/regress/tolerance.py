"""Tolerances from measurements, not guesses: float noise (float mode) and seed spread (spread mode).

Float mode (another platform): `--update` also reruns each case at its fixed seed with
float-level noise of NOISE_DRAWS draws (noise.py); with rms the root-mean-square change of a
metric from the noiseless run,

    float_tol = max(FLOAT_K * rms, floor)    FLOAT_K = 5; the floors below

A metric whose change on another platform stays within what rounding alone does passes; a
broken weight decay, lr or vote moves it far past (tests/regress/test_float.py). FLOAT_K = 5
leaves room for four draws measuring an rms (they may land low) and for a platform rounding a
little more than the noise does; on the emulated other platform the largest change was 0.58
of a tolerance, and every break's worst check 15 tolerances or more.

Spread mode, seed-to-seed spread:

`lionsim regress --update` trains every case at its fixed seed s and at S more seeds
s+1 .. s+S (S = 4 by default, `--seeds`). For each run and metric, with sd the sample
standard deviation of the metric over those S+1 runs:

    tol = max(K * sd, FLOOR)        K = 3; FLOOR 0.001 for losses and gaps, 0.002 for accuracy

The checked run uses the fixed seed, so on an unchanged tree and machine "now" equals the
baseline exactly: there the check runs in strict mode (fingerprint.py) and these tolerances
are not used. They are spread mode's room for legitimate numeric drift (another CPU, another
torch), which perturbs a run by far less than a new seed does (a new seed draws new data,
a new initial model and new batches). K * sd is therefore generous for drift while still
small next to a broken algorithm. The floor keeps a metric whose spread happens to be tiny
from failing on the last bits of float noise (0.002 is two samples of the 1024 held out).
"""

from __future__ import annotations

import statistics

from lionsim.ranges import span

K = 3.0
"""Tolerance in standard deviations of the seed-to-seed spread."""
LOSS_FLOOR = 1e-3
ACCURACY_FLOOR = 2e-3
DEFAULT_SEEDS = 4
"""Extra seeds `--update` trains to measure the spread."""
SEEDS = span(1, whole=True, why="extra seeds that measure the spread")
"""What --seeds accepts (regress, and update_suite's callers)."""
FLOAT_K = 5.0
"""Float tolerance in root-mean-square changes under float noise."""
RULE = (f"tol = max({K:g} * sd, floor); sd = sample standard deviation of the metric over the "
        f"case's fixed seed and the calibration seeds after it; floor {LOSS_FLOOR:g} for losses "
        f"and gaps, {ACCURACY_FLOOR:g} for accuracy")
FLOAT_RULE = (f"noise_tol = max({FLOAT_K:g} * rms, floor); rms = root-mean-square change of the metric over "
              f"the fixed seed rerun with float noise (lionsim.regress.noise); the same floors")


def floor(metric: str) -> float:
    from lionsim.regress.metrics import ACCURACY_METRICS  # metrics imports pandas: not at CLI start-up

    return ACCURACY_FLOOR if metric in ACCURACY_METRICS else LOSS_FLOOR


def spread(values: list[float]) -> float:
    """Sample standard deviation (n - 1); needs at least two values."""
    if len(values) < 2:
        raise ValueError(f"a spread needs at least two values, got {len(values)}")
    return statistics.stdev(values)


def tolerance(metric: str, sd: float) -> float:
    """The rule above (the caller makes sure the spread is finite)."""
    return max(K * sd, floor(metric))


def rms_change(values: list[float], reference: float) -> float:
    """Root-mean-square of the changes from `reference` (needs at least one value)."""
    if not values:
        raise ValueError("an rms change needs at least one value")
    return (sum((v - reference) ** 2 for v in values) / len(values)) ** 0.5


def float_tolerance(metric: str, rms: float) -> float:
    """The float-mode rule above."""
    return max(FLOAT_K * rms, floor(metric))
