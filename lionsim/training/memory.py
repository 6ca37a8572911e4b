"""The memory guard: what a run will hold at its peak, estimated before anything is allocated.

A bench that does not fit used to run until the kernel's OOM killer stopped it (24 GB for
`-w vit -b 100000`). `check_memory` adds up, from the configuration alone:

    data         the training set (generated: its size from W x B; --data: the files on disk, x2
                 while they are read) and the held-out samples
    model        P parameters x GLOBAL_COPIES fp32 copies (the model, the initial weights every
                 run restarts from, its gradients, a global optimizer's two moments, one spare)
    workers      P x w workers x WORKER_COPIES fp32 rows ([w, P]: gradients, the strategy's
                 per-worker state, the encoded vote or payload, one temporary), plus one more
                 row per worker where gradients are vmapped (torch.func returns them apart),
                 plus the rows a strategy holds beyond those (Strategy.extra_rows: DiLoCo's and
                 local SGD's per-worker replicas and their inner AdamW moments, 2 more)
    activations  the bytes autograd saves for backward, measured on one sample of the workload
                 (the model and a zero sample, Workload.probe: no data is built), x B samples x
                 the workers computed at once (all W with vmap, one with the loop)

and compares the sum with the machine's MemAvailable (/proc/meminfo). A run that needs more
stops with one line saying what it needs and what fits, before any data or state is made.
The estimate errs high by design (every strategy is priced as the hungriest); it is an order
of magnitude guard, not a profiler.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import torch

from lionsim.errors import LionsimError
from lionsim.workloads import WorkloadConfig, workload_class
from lionsim.workloads.config import EVAL_DEFAULT

GLOBAL_COPIES = 6
"""fp32 copies of the parameters a bench holds once (see the module docstring)."""
WORKER_COPIES = 4
"""fp32 [w, P] rows per worker (see the module docstring)."""
MEMINFO = Path("/proc/meminfo")


@dataclass(frozen=True, slots=True)
class MemoryNeed:
    """Bytes a run holds at its peak, by part."""

    data: int
    model: int
    workers: int
    activations: int

    @property
    def total(self) -> int:
        return self.data + self.model + self.workers + self.activations

    def describe(self) -> str:
        parts = (("data", self.data), ("model", self.model), ("worker state", self.workers),
                 ("activations", self.activations))
        return ", ".join(f"{name} {human_bytes(n)}" for name, n in parts if n)


def human_bytes(n: float) -> str:
    """1e9 bytes is a GB, as everywhere in lionsim."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} B"


def available_memory() -> int | None:
    """MemAvailable of /proc/meminfo in bytes; None where the file is absent (not Linux)."""
    try:
        text = MEMINFO.read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return None


@functools.lru_cache(maxsize=32)
def _probe(workload: str, size: str, seed: int = 0) -> tuple[int, int, int, str]:
    """(parameters, activation bytes autograd saves per sample, stored bytes per unit of training
    data, gradient method) of a workload: its model and one sample, no data built."""
    cls = workload_class(workload)
    model, inputs, targets, per_unit = cls.probe(WorkloadConfig(name=workload, workers=1, batch_size=1, size=size,
                                                                seed=seed))
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        saved[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        cls.loss(None, model, inputs, targets)
    activation = sum(n for ptr, n in saved.items() if ptr not in params)
    n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return n_params, activation, per_unit, cls.gradients


def _data_bytes(path: Path) -> int:
    path = Path(path)
    if path.is_dir():
        return sum(p.stat().st_size for p in path.iterdir() if p.is_file())
    return path.stat().st_size if path.is_file() else 0


def estimate_memory(cfg: WorkloadConfig, local_workers: int | None = None, extra_rows: int = 0) -> MemoryNeed:
    """Peak bytes of a bench of `cfg` on a process holding `local_workers` of its workers (all),
    whose hungriest strategy holds `extra_rows` more [w, P] rows (Strategy.extra_rows)."""
    w = cfg.workers if local_workers is None else local_workers
    params, activation, per_unit, gradients = _probe(cfg.name, cfg.size, cfg.seed)
    cls = workload_class(cfg.name)
    if cfg.data is None:
        data = cls.generated_units(cfg) * per_unit
    else:
        data = 2 * _data_bytes(cfg.data)  # the files as read, then as tensors
    evals = EVAL_DEFAULT if not isinstance(cfg.eval_samples, int) else cfg.eval_samples
    data += evals * per_unit
    vmap = gradients == "vmap"
    workers = params * 4 * w * (WORKER_COPIES + (1 if vmap else 0) + extra_rows)
    at_once = w if vmap else 1  # evaluation runs under no_grad: it saves nothing for backward
    activations = activation * cfg.batch_size * at_once
    return MemoryNeed(data=int(data), model=params * 4 * GLOBAL_COPIES, workers=int(workers),
                      activations=int(activations))


def check_memory(cfg: WorkloadConfig, processes: int = 1, what: str = "this run",
                 local_workers: int | None = None, available: int | None = None, extra_rows: int = 0) -> MemoryNeed:
    """Fail (LionsimError) unless `processes` runs of `cfg` at once (each holding `local_workers`
    of its workers: all by default, and `extra_rows` more [w, P] rows for its hungriest strategy)
    fit in the available memory (MemAvailable unless given; no check where it cannot be read).
    Returns the estimate."""
    need = estimate_memory(cfg, local_workers, extra_rows)
    free = available_memory() if available is None else available
    total = need.total * processes
    if free is not None and total > free:
        times = f"{processes} at once x " if processes > 1 else ""
        raise LionsimError(
            f"{what} needs about {human_bytes(total)} of memory ({times}{need.describe()}) but "
            f"{human_bytes(free)} is available: use fewer --workers or a smaller --batch-size"
            + (" or fewer --jobs" if processes > 1 else ""))
    return need
