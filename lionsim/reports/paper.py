"""The Distributed Lion paper's CIFAR-10 ViT accuracy table (Liu et al., "Communication Efficient
Distributed Training with Distributed Lion", NeurIPS 2024), the check of its ordering against a
sweep's accuracies, and what a run's configuration does not share with the paper's.

The paper: ViT with 6 layers and 8 heads on CIFAR-10, local batch 32, test accuracy % by worker
count after its full training schedule.
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
PAPER_SOURCE = "Liu et al., Distributed Lion, NeurIPS 2024: its CIFAR-10 ViT accuracy table"
PAPER_SETUP = ("a ViT of 6 layers and 8 heads (vit --model-size paper) on CIFAR-10 at local batch 32, "
               "over its full training schedule")
"""The paper's configuration behind PAPER_ACCURACY, in the words a report prints."""
PAPER_BATCH = 32
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


PAPER_WHERE = "lionsim/reports/paper.py and docs/sweeps-and-reports.md"
"""Where a reader finds the paper's figures when a report leaves them out (a run of another setup)."""


def paper_setup(model_size: str | None, data: str | None, batch_size: int | None) -> bool:
    """Whether a vit run trains the workload PAPER_ACCURACY measured: the paper's model on CIFAR-10
    (data given; None is the generated images) at its local batch. Only then do the paper's figures
    stand beside the run's: on a proxy workload 90.9 beside 15.1 compares nothing."""
    return model_size == "paper" and bool(data) and batch_size == PAPER_BATCH


def comparability(model_size: str | None, data: str | None, steps: int | None, batch_size: int | None) -> str:
    """What a vit run's configuration (as run.json or sweep.json records it; data None: generated)
    shares with PAPER_SETUP, in one sentence: 'not comparable: this run trains vit tiny on generated
    data for 40 steps, the paper ...' where the model, data or batch differ."""
    size = model_size or "small"
    run = (f"vit {size} on {'CIFAR-10 from ' + str(data) if data else 'generated pattern images'}"
           f"{'' if batch_size is None else f' at local batch {batch_size}'}"
           f"{'' if steps is None else f' for {steps} steps'}")
    if paper_setup(size, data, batch_size):
        return (f"Same model, data and local batch as the paper: this run trains {run}, the paper "
                f"{PAPER_SETUP}; the figures differ in training length.")
    return f"Not comparable: this run trains {run}, the paper {PAPER_SETUP}."
