"""The Distributed Lion paper's CIFAR-10 ViT accuracy table (Liu et al. 2024; REFERENCE.md 2),
and the check of its ordering against a sweep's accuracies.

The paper: ViT with 6 layers and 8 heads, local batch 32, test accuracy % by worker count.
lionsim's strategy names stand for the paper's methods: sgdm (SGD momentum, gradients
averaged), signum-mv (SIGNUM: sign of momentum, majority vote), dlion-avg, dlion-mavo.
"""

from __future__ import annotations

import math

PAPER_ACCURACY: dict[str, dict[int, float]] = {
    "sgdm": {4: 79.3, 8: 81.8, 16: 82.5},
    "signum-mv": {4: 88.3, 8: 87.2, 16: 85.5},
    "dlion-mavo": {4: 90.9, 8: 89.6, 16: 88.9},
    "dlion-avg": {4: 90.5, 8: 87.9, 16: 87.9},
}
PAPER_NAMES = {"sgdm": "SGD momentum", "signum-mv": "SIGNUM", "dlion-mavo": "D-Lion MaVo", "dlion-avg": "D-Lion Avg"}
PAPER_ORDER = "SGD-M < SIGNUM < D-Lion Avg <= D-Lion MaVo"
"""The ordering the paper reports at every worker count (strict except Avg <= MaVo)."""
_CHAIN = (("sgdm", "signum-mv", False), ("signum-mv", "dlion-avg", False), ("dlion-avg", "dlion-mavo", True))


def ordering_holds(acc: dict[str, float]) -> bool | None:
    """Whether accuracies (strategy -> %) follow PAPER_ORDER; None if a method is missing or NaN."""
    if any(name not in acc or not math.isfinite(acc[name]) for name in PAPER_ACCURACY):
        return None
    return all(acc[low] <= acc[high] if ties else acc[low] < acc[high] for low, high, ties in _CHAIN)


def ordering_breaks(acc: dict[str, float]) -> list[str]:
    """The links of PAPER_ORDER that `acc` breaks, e.g. ["SIGNUM 71.2 >= D-Lion Avg 70.8"]."""
    broken = []
    for low, high, ties in _CHAIN:
        a, b = acc.get(low, math.nan), acc.get(high, math.nan)
        if math.isfinite(a) and math.isfinite(b) and not (a <= b if ties else a < b):
            broken.append(f"{PAPER_NAMES[low]} {a:.1f} {'>' if ties else '>='} {PAPER_NAMES[high]} {b:.1f}")
    return broken
