"""`lionsim sweep`'s values checked before torch loads, as BenchConfig.check_plain is bench's and
lionsim.estimate.plain estimate's: the grid's axes without the registries
(lionsim.sweep.grid.check_axes), the executor, --ray-address, --backend, and every bench option at
each workload and worker count of the grid (BenchConfig.check_plain of each cell_bench), each
refused in one line in a moment (the command then checks the strategies' and transports' names
before torch too: lionsim.name_table). What needs the registries (strategies, transports, a
workload file's function, the lr axis against each strategy's own lr) is SweepConfig.validate's
(lionsim.config.sweep), which makes these checks again with the same functions."""

from __future__ import annotations

import dataclasses
from typing import Iterable

from lionsim.config.bench import BenchConfig
from lionsim.errors import LionsimError
from lionsim.plugin_load import is_spec
from lionsim.sweep.execute import canonical_executor, check_jobs
from lionsim.sweep.grid import Axes


def check_options(jobs: int | None, executor: str, ray_address: str | None, backend: str) -> str:
    """--jobs, --executor (returned in its listed spelling), --ray-address with it, and --backend."""
    check_jobs(jobs)
    executor = canonical_executor(executor)
    if ray_address is not None and executor != "ray":
        raise LionsimError(f"--ray-address {ray_address} needs --executor ray (the executor is {executor})")
    if backend != "sim":
        raise LionsimError(f"lionsim sweep runs on the sim backend only, not {backend}; "
                           "use `lionsim bench --backend gloo|nccl` for real collectives")
    return executor


def cell_bench(whole: BenchConfig, workload: str, workers: int, most: int) -> BenchConfig:
    """`whole` at one workload and worker count of the grid, as a check sees it: --bucket-mb only at
    the grid's `most` workers, where some cell uses it (bench refuses it where no run exchanges per
    bucket, and one worker exchanges nothing)."""
    return dataclasses.replace(whole, workload=workload, workers=workers,
                               bucket_mb=whole.bucket_mb if workers == most else None)


def check_model_size(model_size: str, workloads: Iterable[str]) -> None:
    """--model-size other than the default applies to the built-in workloads: refused where every
    workload is a file, which builds its own model."""
    if model_size != "small" and all(is_spec(w) for w in workloads):
        raise LionsimError(f"--model-size {model_size} applies to no workload of this sweep: a workload "
                           "file builds its own model (--model-size is for the built-in workloads: lionsim workloads)")


def check_cells(axes: Axes, bench: BenchConfig) -> None:
    """The bench options at each workload and worker count of the grid (BenchConfig.check_plain of
    each cell_bench, its lr the axis's first given, as SweepConfig.validate checks them), then
    --model-size against the workloads."""
    lr = next((v for v in axes.lrs if v is not None), None)
    whole = dataclasses.replace(bench, lr=lr)
    most = max(axes.workers)
    for workload in axes.workloads:
        for workers in axes.workers:
            cell_bench(whole, workload, workers, most).check_plain()
    check_model_size(bench.model_size, axes.workloads)
