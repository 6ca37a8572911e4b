"""run.json: the replayable record of a bench.

It holds the resolved configuration with every run's hyperparameters as they were used
(`config`, in the option names of `lionsim bench`, so `lionsim bench --config run.json`
trains the same runs again), how each time column was obtained, argv, start time, duration,
status, versions (and the git commit when lionsim runs from a checkout) and the host.
"""

from __future__ import annotations

import datetime
import functools
import platform
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import torch

import lionsim

if TYPE_CHECKING:
    from lionsim.bench import Bench


def bench_record(bench: Bench, status: str, error: str | None) -> dict:
    cfg = bench.cfg
    runs = []
    for run in bench.runs:
        hyper = run.strategy_class.resolve_hyper(cfg.strategy_config(run))
        done = next((r for r in bench.records if r.run == run), None)
        runs.append({"run": run.label, "strategy": run.strategy, "transport": run.transport, "lr": hyper.lr,
                     "weight_decay": hyper.weight_decay, "betas": list(hyper.betas),
                     "diverged_at_step": None if done is None else done.diverged_at})
    return {
        "command": "bench",
        "status": status,
        "error": error,
        "config": replayable_config(bench, runs),
        "runs": runs,
        "timing": timing_notes(bench),
        **({"comm_model": priced_by(bench)} if bench.cfg.backend != "sim" else {}),
        "evaluation": {"samples": bench.workload.eval_size, "requested": cfg.eval_samples or "default",
                       "of": bench.workload.describe()},
        "network": bench.network.to_dict(),
        **({"hosts": hosts_record(bench.hosts)} if bench.hosts else {}),
        "seed": cfg.seed,
        "argv": sys.argv,
        "started": datetime.datetime.fromtimestamp(bench.started, datetime.timezone.utc).isoformat(timespec="seconds"),
        "duration_s": round(time.time() - bench.started, 3),
        "versions": {"python": sys.version.split()[0], "torch": torch.__version__, "lionsim": lionsim.__version__,
                     "git_commit": git_commit()},
        "host": {"hostname": socket.gethostname(), "platform": platform.platform(), "cpus": torch.get_num_threads(),
                 "processor": platform.processor() or platform.machine()},
    }


def replayable_config(bench: Bench, runs: list[dict]) -> dict:
    """The options of `lionsim bench`, as `--config` reads them, with each run's hyperparameters fixed."""
    config = bench.cfg.to_dict()
    config["strategy"] = config.pop("strategies")
    config["betas"] = None if config["betas"] is None else ",".join(f"{b:g}" for b in config["betas"])
    config["hyper"] = {r["run"]: {"lr": r["lr"], "weight_decay": r["weight_decay"], "betas": r["betas"]} for r in runs}
    return config


def timing_notes(bench: Bench) -> dict:
    """How every time column of steps.csv was obtained (lionsim.training.booking)."""
    device = bench.device
    real = bench.cfg.backend != "sim"
    if device is not None:
        part = f"modelled for {device.name}: memory passes at its bandwidth, at least kernels x {device.kernel_s:g} s"
    else:
        part = (f"measured: per step the median of its kind (same collectives) over each run's steps, the first "
                f"{bench.cfg.warmup_steps} left out; per worker" + ("; the slowest rank's" if real else ""))
    notes = {
        "compute_s": bench.compute.describe(),
        "encode_s": part,
        "decode_s": part,
        "update_s": part,
        "comm_s": ("measured: every real collective timed after a barrier, summed per step, the slowest rank's, "
                   "median of its kind; no overlap" if real else
                   f"modelled: the collectives priced on {bench.network.name} for {bench.cfg.workers} workers, "
                   "DDP-style bucket overlap (comm_exposed_s)"),
        "comm_model_s": (f"the network model's mean price of the collectives each step ran (R ranks, real sizes "
                         f"and dtypes) on {priced_by(bench)}" if real else "equal to comm_s (the model is the time on sim)"),
        **({"comm_measured_s": "measured: each collective between two barriers (the second untimed), the slowest "
                               "rank's time of that call, summed per step; calls.csv has every call",
            "barrier_wait_s": "measured: per call, the latest rank's arrival at the leading barrier minus the "
                              "earliest's (rank imbalance), summed per step"} if real else {}),
        "warmup_steps": bench.cfg.warmup_steps,
    }
    if bench.compute.samples:
        notes["compute_samples_s"] = bench.compute.samples
    else:
        notes["compute_counted"] = {"flops": bench.compute.flops, "kernels": bench.compute.kernels}
    return notes


def priced_by(bench: Bench) -> str:
    """What comm_model_s was priced with: the network's links and the library's traits."""
    if bench.calibration is not None:
        return "calibration.toml (fitted on this run's group before training: its error is out of sample)"
    return f"{bench.network.name} + {bench.network.traits.name} traits"


def hosts_record(hosts: list[dict]) -> dict:
    """run.json's `hosts`: one entry per machine, and whether ranks shared its cores."""
    from lionsim.launch.hosts import by_host, shared_cores

    return {"machines": by_host(hosts), "ranks": len(hosts), "shared_cores": shared_cores(hosts)}


@functools.cache
def git_commit() -> str | None:
    """The commit lionsim runs from, when it runs from a git checkout (None otherwise)."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(lionsim.__file__).parent, capture_output=True,
                             text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None
