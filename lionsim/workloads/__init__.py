"""Workloads: model + data + loss, split into per-worker shards.

    cfg = WorkloadConfig(name="vit", workers=8, data_split="dirichlet:0.3")
    wl = build_workload(cfg)
    for x, y in wl.batches(step): wl.loss(wl.model, x, y).backward()   # one batch per worker
    wl.evaluate(wl.model)   # {"eval_loss": ..., "eval_acc": ...}

`WORKLOADS` maps names to classes; each class has a one-line `summary` for listings.
`workload_class` also finds a user's own workload: `FILE.py:FUNC`, `module:FUNC` or an
installed plugin (lionsim.workloads.plugin).
"""

from lionsim.forms import SPLIT_FORMS, parse_split
from lionsim.workloads.base import WORKLOADS, Workload
from lionsim.workloads.config import SIZES, WorkloadConfig
from lionsim.workloads.lookup import build_workload, canonical_workload, check_workload, workload_class
from lionsim.workloads.plugin import WorkloadParts
from lionsim.workloads.splits import split_indices

# importing the modules registers the workloads, in listing order
from lionsim.workloads import mlp, vit, gpt  # noqa: E402,F401  isort: skip

__all__ = [
    "WORKLOADS",
    "SIZES",
    "SPLIT_FORMS",
    "Workload",
    "WorkloadConfig",
    "build_workload",
    "canonical_workload",
    "check_workload",
    "workload_class",
    "WorkloadParts",
    "parse_split",
    "split_indices",
]
