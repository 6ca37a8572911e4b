"""Sweep throughput: cells per hour of one grid with `--jobs 1`, `--jobs 2` and `--executor ray`
on two local Ray nodes of one CPU each, each a whole `lionsim sweep` command in a fresh
process (start-up, training, CSVs and plots: what a user waits for).

Runs alternate (jobs1, jobs2, ray, jobs1, ...) so a load that drifts touches each alike; the
figure is the median of `runs`, with the load average (1 min) before each run beside it (no
CPU seconds: a forkserver's workers are never this process's children, so their time would be
missing from the --jobs 2 figure). The Ray cluster is started once,
before the runs (a user's cluster is up already), and always shut down.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

from lionsim.perf.rows import Figure, by_case

GRID = ["--workload", "vit", "--model-size", "tiny", "--workers", "2,4", "--network", "1gbe,10gbe", "--seed", "0,1",
        "-s", "dlion-mavo@a2a-1bit"]
"""The grid timed: 4 trainings, 8 cells (docs/sweeps-and-reports.md quotes its figures)."""
CELLS = 8
EXECUTORS = {"jobs1": ["--jobs", "1"], "jobs2": ["--jobs", "2"], "ray": ["--executor", "ray"]}


def _one(extra: list[str], steps: int) -> float:
    """Wall seconds of one sweep command."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "lionsim", "sweep", *GRID, "--steps", str(steps),
                               "--out", f"{tmp}/s", *extra], capture_output=True, text=True)
        wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"lionsim sweep {' '.join(extra)} failed: {done.stderr.strip()[-500:]}")
    return wall


def bench_sweep(steps: int = 300, runs: int = 3, executors: list[str] | None = None) -> list[Figure]:
    executors = executors or list(EXECUTORS)
    cluster = None
    if "ray" in executors:
        from ray.cluster_utils import Cluster

        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    walls: dict[str, list[float]] = {e: [] for e in executors}
    loads: dict[str, list[float]] = {e: [] for e in executors}
    try:
        if cluster is not None:
            cluster.add_node(num_cpus=1)
            cluster.wait_for_nodes()
        for _ in range(runs):
            for name in executors:
                extra = EXECUTORS[name] + (["--ray-address", cluster.address] if name == "ray" else [])
                loads[name].append(os.getloadavg()[0])
                walls[name].append(_one(extra, steps))
    finally:
        if cluster is not None:
            cluster.shutdown()
    figures = []
    base = statistics.median(walls[executors[0]])
    for name in executors:
        wall = statistics.median(walls[name])
        how = (f"median of {runs} whole commands ({', '.join(f'{w:.1f}' for w in walls[name])} s), load average "
               f"{', '.join(f'{v:.1f}' for v in loads[name])} before each; {CELLS} cells, {steps} steps; "
               f"{os.cpu_count()} cores" + ("; two local Ray nodes of 1 CPU" if name == "ray" else ""))
        case = f"sweep {name}"
        figures.append(Figure("sweep", case, "wall_s", wall, how))
        figures.append(Figure("sweep", case, "cells_per_hour", CELLS / wall * 3600, how))
        figures.append(Figure("sweep", case, f"speedup_over_{executors[0]}", base / wall, how))
    return figures


def print_sweep(figures: list[Figure]) -> None:
    print(f"sweep throughput ({' '.join(GRID)}: {CELLS} cells, whole commands, median):")
    for case, r in by_case(figures).items():
        ratio = next(f for m, f in r.items() if m.startswith("speedup_over_"))
        print(f"  {case:<12} {r['wall_s'].value:7.1f} s   {r['cells_per_hour'].value:7.0f} cells/h   "
              f"x{ratio.value:4.2f} over {ratio.metric.removeprefix('speedup_over_')}")
        print(f"    {r['wall_s'].how}")
