"""The memory guard: what a run will hold at its peak, estimated before anything is allocated.

A bench that does not fit used to run until the kernel's OOM killer stopped it (24 GB for
`-w vit -b 100000`). `check_memory` adds up, from the configuration alone:

    data         the training set (generated: its size from W x B; --data: the files on disk, x2
                 while they are read)
    held-out     the samples each evaluation scores (--eval-samples), stored as the training
                 set's are
    model        P parameters x GLOBAL_COPIES fp32 copies (the model, the initial weights every
                 run restarts from, its gradients, a global optimizer's two moments, one spare)
    workers      P x w workers x WORKER_COPIES fp32 rows ([w, P]: gradients, the strategy's
                 per-worker state, the encoded vote or payload, one temporary), plus one more
                 row per worker where gradients are vmapped (torch.func returns them apart),
                 plus the rows a strategy holds beyond those (Strategy.extra_rows: DiLoCo's and
                 local SGD's per-worker replicas and their inner AdamW moments, 2 more)
    activations  the bytes autograd saves for backward, measured on the workload's model and
                 PROBE_SAMPLES copies of a zero sample (Workload.probe: no data is built; two, as
                 a BatchNorm in training mode needs more than one value per channel), per
                 sample, x B samples x the workers computed at once (all W with vmap, one with
                 the loop)

and compares the sum with the machine's MemAvailable (/proc/meminfo). A run that needs more
stops with one line saying what it needs, what fits and which option shrinks its largest part,
before any data or state is made. A user's workload function (lionsim.workloads.plugin) is
first run on the meta device, where tensors have shapes but no storage: its model's
parameters are counted and the model and worker-state parts alone checked before the function
builds anything for real, so a 7B module is refused as quickly as a small one is accepted.
The estimate errs high by design (every strategy is priced as the hungriest); it is an order
of magnitude guard, not a profiler.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import torch

from lionsim.errors import LionsimError
from lionsim.numbers import bytes_text
from lionsim.workloads import WorkloadConfig, workload_class
from lionsim.workloads.config import EVAL_DEFAULT

GLOBAL_COPIES = 6
"""fp32 copies of the parameters a bench holds once (see the module docstring)."""
WORKER_COPIES = 4
"""fp32 [w, P] rows per worker (see the module docstring)."""
PROBE_SAMPLES = 2
"""Samples the activation probe runs (a BatchNorm in training mode needs more than one)."""
MEMINFO = Path("/proc/meminfo")


@dataclass(frozen=True, slots=True)
class MemoryNeed:
    """Bytes a run holds at its peak, by part."""

    data: int
    model: int
    workers: int
    activations: int
    heldout: int = 0

    @property
    def total(self) -> int:
        return self.data + self.heldout + self.model + self.workers + self.activations

    @property
    def parts(self) -> tuple[tuple[str, int], ...]:
        return (("data", self.data), ("held-out data", self.heldout), ("model", self.model),
                ("worker state", self.workers), ("activations", self.activations))

    def describe(self) -> str:
        return ", ".join(f"{name} {bytes_text(n)}" for name, n in self.parts if n)

    def remedy(self, free: int) -> str:
        """What to change: the model where it alone does not fit in `free` bytes, else the
        option that shrinks the largest part."""
        largest = "model" if self.model > free else max(self.parts, key=lambda part: part[1])[0]
        return REMEDIES[largest]


REMEDIES = {
    "data": "less training data (generated data holds 8 batches a worker: a smaller --batch-size or fewer "
            "--workers; or a smaller --data)",
    "held-out data": "fewer --eval-samples",
    "model": "a smaller model (--model-size, or a smaller module of your own)",
    "worker state": "fewer --workers",
    "activations": "a smaller --batch-size",
}
"""What to change, by the part of MemoryNeed that is largest."""


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
    data, gradient method) of a workload: its model and PROBE_SAMPLES copies of one sample, no
    data built."""
    cls = workload_class(workload)
    model, inputs, targets, per_unit = cls.probe(WorkloadConfig(name=workload, workers=1, batch_size=1, size=size,
                                                                seed=seed))
    inputs, targets = (t.expand(PROBE_SAMPLES, *t.shape[1:]).contiguous() for t in (inputs, targets))
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        saved[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        cls.loss(None, model, inputs, targets)
    activation = sum(n for ptr, n in saved.items() if ptr not in params) // PROBE_SAMPLES
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
    at_once = w if gradients == "vmap" else 1  # evaluation runs under no_grad: it saves nothing for backward
    return _need(params, gradients, w, extra_rows, data=int(data), heldout=evals * per_unit,
                 activations=activation * cfg.batch_size * at_once)


def _need(params: int, gradients: str, w: int, extra_rows: int, data: int = 0, heldout: int = 0,
          activations: int = 0) -> MemoryNeed:
    """The model and worker-state parts of `params` parameters (see the module docstring), and
    the measured parts as given."""
    rows = WORKER_COPIES + (1 if gradients == "vmap" else 0) + extra_rows
    return MemoryNeed(data=int(data), heldout=int(heldout), model=params * 4 * GLOBAL_COPIES,
                      workers=params * 4 * w * rows, activations=int(activations))


def model_need(cfg: WorkloadConfig, local_workers: int | None = None, extra_rows: int = 0) -> MemoryNeed | None:
    """The model and worker-state parts of a user's workload, its parameters counted on the meta
    device before its function builds anything (Workload.meta_params); None for a built-in (its
    probe builds a small model) or a function that cannot run on meta."""
    params = workload_class(cfg.name).meta_params(cfg)
    if params is None:
        return None
    w = cfg.workers if local_workers is None else local_workers
    return _need(params, workload_class(cfg.name).gradients, w, extra_rows)


def check_memory(cfg: WorkloadConfig, processes: int = 1, what: str = "this run",
                 local_workers: int | None = None, available: int | None = None, extra_rows: int = 0) -> MemoryNeed:
    """Fail (LionsimError) unless `processes` runs of `cfg` at once (each holding `local_workers`
    of its workers: all by default, and `extra_rows` more [w, P] rows for its hungriest strategy)
    fit in the available memory (MemAvailable unless given; no check where it cannot be read).
    Returns the estimate. A user's workload is first checked on the meta device (check_model_fits)."""
    free = available_memory() if available is None else available
    check_model_fits(cfg, processes, what, local_workers, free, extra_rows)
    need = estimate_memory(cfg, local_workers, extra_rows)
    _refuse_above(need, free, processes, what)
    return need


def check_model_fits(cfg: WorkloadConfig, processes: int = 1, what: str = "this run", local_workers: int | None = None,
                     available: int | None = None, extra_rows: int = 0) -> MemoryNeed | None:
    """Before a user's workload function builds its model for real: fail (LionsimError, the
    guard's line) if its model and worker state alone, counted on the meta device, do not fit.
    Nothing is allocated; a no-op (None) for built-ins and functions that cannot run on meta."""
    need = model_need(cfg, local_workers, extra_rows)
    if need is not None:
        _refuse_above(need, available_memory() if available is None else available, processes, what, bound="at least")
    return need


def _refuse_above(need: MemoryNeed, free: int | None, processes: int, what: str, bound: str = "about") -> None:
    total = need.total * processes
    if free is not None and total > free:
        times = f"{processes} at once x " if processes > 1 else ""
        raise LionsimError(
            f"{what} needs {bound} {bytes_text(total)} of memory ({times}{need.describe()}) but "
            f"{bytes_text(free)} is available: use {need.remedy(free // processes)}"
            + (" or fewer --jobs" if processes > 1 else ""))
