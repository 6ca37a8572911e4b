"""Real gloo ranks for the tests: spawn them, let each save its results, read them back."""

from __future__ import annotations

import torch
import torch.multiprocessing as mp

from lionsim.launch import free_port


def spawned_results(rank_main, nprocs: int, directory, *args) -> list:
    """Run rank_main(rank, *args, port, out) on `nprocs` spawned processes, each saving its
    results to f"{out}.{rank}"; return them in rank order."""
    out = str(directory / "result")
    mp.start_processes(rank_main, args=(*args, free_port(), out), nprocs=nprocs, start_method="spawn")
    return [torch.load(f"{out}.{r}") for r in range(nprocs)]
