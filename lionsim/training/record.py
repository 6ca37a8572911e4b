"""run.json: the replayable record of a bench.

It holds the resolved configuration with every run's hyperparameters as they were used
(`config`, in the option names of `lionsim bench`, so `lionsim bench --config run.json`
trains the same runs again), how each time column was obtained, argv, start time, duration,
status, versions (and the git commit when lionsim runs from a checkout) and the host.
"""

from __future__ import annotations

import datetime
import functools
import os
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
    runs = resolved_runs(bench.cfg)
    for entry in runs:
        entry["diverged_at_step"] = bench.diverged_at(entry["run"])
    record = {
        "command": "bench",
        "status": status,
        "error": error,
        "config": resolved_config(cfg, runs),
        "runs": runs,
        "timing": timing_notes(bench),
        "evaluation": {"samples": bench.workload.eval_size, "requested": cfg.eval_samples or "default",
                       "of": bench.workload.describe()},
        "network": bench.network.to_dict(),
        "seed": cfg.seed,
        "argv": sys.argv,
        "started": datetime.datetime.fromtimestamp(bench.started, datetime.timezone.utc).isoformat(timespec="seconds"),
        "duration_s": round(time.time() - bench.started, 3),
        "versions": {"python": sys.version.split()[0], "torch": torch.__version__, "lionsim": lionsim.__version__,
                     "git_commit": git_commit()},
        "host": {"hostname": socket.gethostname(), "platform": platform.platform(), "cpus": torch.get_num_threads(),
                 "processor": platform.processor() or platform.machine()},
    }
    if cfg.backend != "sim":  # what the measured collectives crossed (the plots name it)
        record["ranks_on_one_host"] = ranks_on_one_host()
    if bench.resume is not None:  # the first session's start, every session's time, each resume's point
        earlier = bench.resume.meta
        record["started"] = earlier.get("started", record["started"])
        record["duration_s"] = round(record["duration_s"] + float(earlier.get("duration_s") or 0.0), 3)
        record["resumed"] = [*earlier.get("resumed", []), bench.resume.describe()]
    return record


def ranks_on_one_host() -> bool:
    """Whether every rank of a real backend runs on this host: lionsim started them itself (no
    launcher's WORLD_SIZE), or the launcher put all of them here (LOCAL_WORLD_SIZE = WORLD_SIZE)."""
    world = os.environ.get("WORLD_SIZE")
    return world is None or os.environ.get("LOCAL_WORLD_SIZE") == world


def resolved_runs(cfg) -> list[dict]:
    """Every run of the configuration with the hyperparameters it trains with."""
    runs = []
    for run in cfg.validate():
        hyper = run.strategy_class.resolve_hyper(cfg.strategy_config(run))
        runs.append({"run": run.label, "strategy": run.strategy, "transport": run.transport, "lr": hyper.lr,
                     "weight_decay": hyper.weight_decay, "betas": list(hyper.betas)})
    return runs


def resolved_config(cfg, runs: list[dict] | None = None) -> dict:
    """The options of `lionsim bench`, as `--config` reads them, with each run's hyperparameters
    fixed (what run.json records, and what `--resume` compares)."""
    runs = resolved_runs(cfg) if runs is None else runs
    config = cfg.to_dict()
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
        "comm_model_s": "the network model's price of the collectives each step ran (R ranks, real sizes)" if real
                        else "equal to comm_s (the model is the time on sim)",
        "warmup_steps": bench.cfg.warmup_steps,
    }
    if bench.compute.samples:
        notes["compute_samples_s"] = bench.compute.samples
    else:
        notes["compute_counted"] = {"flops": bench.compute.flops, "kernels": bench.compute.kernels}
    return notes


@functools.cache
def git_commit() -> str | None:
    """The commit lionsim runs from, when it runs from a git checkout (None otherwise)."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(lionsim.__file__).parent, capture_output=True,
                             text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None
