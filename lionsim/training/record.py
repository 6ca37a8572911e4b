"""run.json: the replayable record of a bench.

Built from what it records (the plan's options, each run's resolved hyperparameters, the
workload, network, compute figure), never from the runner that holds them. It holds the resolved configuration with every run's hyperparameters as they were used
(`config`, in the option names of `lionsim bench`, so `lionsim bench --config run.json`
trains the same runs again), how each time column was obtained, argv, start time, duration,
status, versions (and the git commit when lionsim runs from a checkout) and the host.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import os
import platform
import socket
import subprocess
import sys
import time
from pathlib import Path

import torch

import lionsim
from lionsim.compute import Device
from lionsim.host_cpu import cpu_capability, cpu_model
from lionsim.group.hosts import by_host, one_machine_link, shared_cores
from lionsim.network import Network
from lionsim.option_paths import absolute, placed
from lionsim.plan import BenchPlan
from lionsim.runs import RunSpec
from lionsim.strategies.core.base import Hyper
from lionsim.training.compute_figure import ComputeFigure
from lionsim.workloads import Workload


def run_entry(run: RunSpec, hyper: Hyper, diverged_at: int | None, options: object | None = None,
              warmup_until: int | None = None) -> dict:
    """One run as run.json lists it: its label, the hyperparameters it was trained with, its
    strategy's resolved options (its module's Options), and where every step fell inside its
    warm-up, the first step past it (RunRecord.warmup_until)."""
    return {"run": run.label, "strategy": run.strategy, "transport": run.transport, "lr": hyper.lr,
            "weight_decay": hyper.weight_decay, "betas": list(hyper.betas),
            "options": {} if options is None else dataclasses.asdict(options), "diverged_at_step": diverged_at,
            **({} if warmup_until is None else {"warmup_until": warmup_until})}


def bench_record(*, options: dict, runs: list[dict], timing: dict, workload: Workload, network: Network,
                 started: float, status: str, error: str | None, hosts: list[dict] | None = None,
                 comm_model: str | None = None, resumed: tuple[dict, dict] | None = None,
                 network_given: bool = True) -> dict:
    """run.json of a bench: `options` is its BenchPlan.options(), `runs` its run_entry()s,
    `timing` its timing_notes(), `started` a time.time(); on a real backend `hosts` where its
    ranks ran (lionsim.group.hosts) and `comm_model` what priced comm_model_s (priced_by);
    `resumed`: the interrupted run's run.json and this resume's note (lionsim.training.resume);
    `network_given` False where --network was left at its default (NetworkPlan.given)."""
    record = {
        "command": "bench",
        "status": status,
        "error": error,
        "config": replayable_config(options, runs),
        "runs": runs,
        "timing": timing,
        **({"comm_model": comm_model} if comm_model else {}),
        "evaluation": {"samples": workload.eval_size, "requested": options["eval_samples"] or "default",
                       "of": workload.describe()},
        "network": network.to_dict(),
        **({"hosts": hosts_record(hosts)} if hosts else {}),
        "seed": options["seed"],
        "argv": sys.argv,
        "cwd": os.getcwd(),  # where argv's relative paths are (a report runs it from there)
        "started": datetime.datetime.fromtimestamp(started, datetime.timezone.utc).isoformat(timespec="seconds"),
        "duration_s": round(time.time() - started, 3),
        "versions": {"python": sys.version.split()[0], "torch": torch.__version__, "lionsim": lionsim.__version__,
                     "git_commit": git_commit()},
        "host": {"hostname": socket.gethostname(), "platform": platform.platform(), "cpus": torch.get_num_threads(),
                 "processor": platform.processor() or platform.machine(),
                 # the losses depend on these: another CPU or kernel set rounds differently
                 "cpu_model": cpu_model(), "cpu_capability": cpu_capability()},
    }
    if options["backend"] != "sim":  # what the measured collectives crossed (the plots name it)
        record["ranks_on_one_host"] = len(by_host(hosts)) == 1 if hosts else ranks_on_one_host()
        if hosts and (own := one_machine_link(hosts)):  # not its loopback: the interfaces they were bound to
            record["link"] = own
        record["network_given"] = network_given  # False: the model priced a default, not the link measured
    if resumed is not None:  # the first session's start, every session's time, each resume's point
        earlier, note = resumed
        record["started"] = earlier.get("started", record["started"])
        record["duration_s"] = round(record["duration_s"] + float(earlier.get("duration_s") or 0.0), 3)
        record["resumed"] = [*earlier.get("resumed", []), note]
    return record


def ranks_on_one_host() -> bool:
    """Whether every rank of a real backend runs on this host: lionsim started them itself (no
    launcher's WORLD_SIZE), or the launcher put all of them here (LOCAL_WORLD_SIZE = WORLD_SIZE)."""
    world = os.environ.get("WORLD_SIZE")
    return world is None or os.environ.get("LOCAL_WORLD_SIZE") == world


def resolved_config(plan: BenchPlan) -> dict:
    """A plan's options as run.json's `config` records them, every run's hyperparameters fixed
    (what `--resume` compares)."""
    return replayable_config(plan.options(), [run_entry(r.run, r.hyper, None, r.options) for r in plan.runs])


def replayable_config(options: dict, runs: list[dict]) -> dict:
    """The options of `lionsim bench`, as `--config` reads them, with each run's hyperparameters fixed
    and every path absolute (recorded_paths)."""
    config = dict(options)
    config["strategy"] = config.pop("strategies")
    config["plugin"] = config.pop("plugins", [])
    config["betas"] = None if config["betas"] is None else ",".join(f"{b:g}" for b in config["betas"])
    config["hyper"] = {r["run"]: {key: r[key] for key in ("lr", "weight_decay", "betas") if key not in _ignores(r)}
                       for r in runs}
    return recorded_paths(config)


def recorded_paths(config: dict) -> dict:
    """A bench's options with each path in them (a profile, --data, a trace:FILE, --out, a plug-in or
    workload file: lionsim.option_paths) absolute, as run.json records them: a replay from another
    working directory reads the same files (`argv` keeps what was typed)."""
    return placed(config, absolute, "bench")[0]


def _ignores(run: dict) -> tuple[str, ...]:
    """The hyperparameters a run's strategy takes none of (signSGD has no betas): left out of the
    replayable config, which `--config` refuses to carry for it."""
    from lionsim.strategies import STRATEGIES

    return STRATEGIES.get(run["strategy"]).ignores if run["strategy"] in STRATEGIES.names() else ()


def timing_notes(*, options: dict, device: Device | None, compute: ComputeFigure, network: Network,
                 comm_model: str | None = None, ranks: int = 2) -> dict:
    """How every time column of steps.csv was obtained (lionsim.training.booking); `options` as
    in bench_record, `device` the --compute device whose times are modelled (None: measured),
    `comm_model` what priced comm_model_s on a real backend (priced_by)."""
    real = options["backend"] != "sim"
    if real and ranks == 1:  # one process holds every worker: no collective crossed a process boundary
        notes = timing_notes(options={**options, "backend": "sim"}, device=device, compute=compute, network=network)
        notes["comm_s"] = (f"modelled: one rank holds all {options['workers']} workers, so its collectives "
                           f"crossed no process boundary; priced on {network.name} with {network.traits.name} traits")
        return notes
    if device is not None:
        part = f"modelled for {device.name}: memory passes at its bandwidth, at least kernels x {device.kernel_s:g} s"
    else:
        part = (f"measured: per step the median of its kind (same collectives) over each run's steps, the first "
                f"{options['warmup_steps']} left out; per worker" + ("; the slowest rank's" if real else ""))
    notes = {
        "compute_s": compute.describe(),
        "encode_s": part,
        "decode_s": part,
        "update_s": part,
        "comm_s": ("measured: every real collective timed between two barriers, billed as its slowest rank's time, "
                   "summed per step, median of its kind; no overlap" if real else
                   f"modelled: the collectives priced on {network.name} for {options['workers']} workers, "
                   f"per bucket during backward or after it as --overlap {options.get('overlap', 'auto')} picks "
                   "(comm_exposed_s; lionsim.steptime.overlap)"),
        "comm_model_s": (f"the network model's mean price of the collectives each step ran (R ranks, real sizes "
                         f"and dtypes) on {comm_model}" if real else "equal to comm_s (the model is the time on sim)"),
        **({"comm_measured_s": "measured: each collective between two barriers (the second untimed), the slowest "
                               "rank's time of that call, summed per step; calls.csv has every call",
            "barrier_wait_s": "measured: per call, the latest rank's arrival at the leading barrier minus the "
                              "earliest's (rank imbalance), summed per step"} if real else {}),
        "warmup_steps": options["warmup_steps"],
    }
    if real and device is not None:  # the ranks' measured compute is this CPU's, not the device's
        notes["compute_median_s"] = notes["compute_max_s"] = (f"modelled for {device.name} as compute_s "
                                                              "(x the --compute-spread factors), not measured")
    if compute.samples:
        notes["compute_samples_s"] = compute.samples
    else:
        notes["compute_counted"] = {"flops": compute.flops, "kernels": compute.kernels}
    return notes


def priced_by(network: Network, calibrated: bool, given: bool = True) -> str:
    """What comm_model_s was priced with: the network's links and the library's traits; `given`
    False: --network was left at its default, which describes no link the run measured."""
    if calibrated:
        return "calibration.toml (fitted on this run's group before training: its error is out of sample)"
    return f"{network.name} + {network.traits.name} traits" + ("" if given else " (--network's default, not the link measured)")


def hosts_record(hosts: list[dict]) -> dict:
    """run.json's `hosts`: one entry per machine, and whether ranks shared its cores."""
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
