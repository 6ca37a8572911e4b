"""torch's intra-op thread count for a block of work, restored after; and the note a count
beyond this machine's cores earns."""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Iterator

import torch

from lionsim.numbers import plural


@contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    """Run the block with `threads` intra-op threads, then restore the caller's count.

    Everything a training does runs under it, building the workload included: with torch's
    default (one thread per core) the data generation of two sweep workers on two cores ran
    four threads that waited on each other, 3-20x slower than on one thread (issue 22)."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def machine_cores() -> int:
    """Cores this process may run on: its affinity mask where the OS keeps one (a container's or
    taskset's share of the machine), else every core the OS counts."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def oversubscribed(threads: int, measures: bool, cores: int | None = None, jobs: int = 1) -> str | None:
    """The note for --threads beyond the cores (`cores`, else machine_cores()) of a run that
    measures times (gloo/nccl, or --compute measured): more threads than cores is legal, but they
    wait for a core, and what the run measures includes the waits. `jobs`: processes training at
    once, each with `threads` (sweep's --jobs), so threads x jobs is what the cores hold. None
    where they fit, or where every time is modelled (sim on a device: there the threads only set
    how fast the simulation itself runs, not a figure it reports)."""
    cores = machine_cores() if cores is None else cores
    if not measures or threads * jobs <= cores:
        return None
    if jobs == 1:
        return (f"note: --threads {threads} exceeds the {plural(cores, 'core')} this machine gives "
                "lionsim: the threads will wait for a core and the times this run measures will suffer "
                f"(--threads {cores} or fewer keeps those waits out)")
    return (f"note: --threads {threads} x --jobs {jobs} = {threads * jobs} threads exceed the {plural(cores, 'core')} "
            "this machine gives lionsim: the threads will wait for a core and the times this run measures will "
            f"suffer (--threads x --jobs {cores} or fewer keeps those waits out)")
