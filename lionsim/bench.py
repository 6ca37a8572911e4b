"""`lionsim bench`: train one workload with N workers under several strategies and account,
step by step, for compute, encoding, modelled communication, decoding and the update.

Every strategy starts from the same initial model and sees the same batches (same seed).
Time per step, for one worker (workers run in parallel):

    compute_s  measured gradient time of all W virtual workers / W
    encode_s   measured local rule + packing / w (w = workers this process holds)
    comm_s     the network model's time for every collective the step issued (exact bytes)
    comm_exposed_s  the part of comm_s the step waits for: exchanges a DDP-style hook can run
               per bucket overlap the backward pass (lionsim.steptime.overlap, --bucket-mb)
    decode_s   measured unpacking + voting / w
    update_s   measured replica update (one replica's work)
    step_s     compute + encode + comm_exposed + decode + update (lionsim.steptime.timeline);
               sim_time_s its running total (modelled wall clock)

With `--compute DEVICE` compute, encode, decode and update are modelled for that device
instead of measured (lionsim.steptime.work): forward + backward take the FLOPs that
torch.utils.flop_counter counts in step 1 (one worker's share; every step has the same
shapes) at the device's peak x mfu, and encode/decode/update the memory passes of
lionsim.steptime.passes, so a CPU run reports a GPU-like breakdown. The losses are the same.
"""

from __future__ import annotations

import math
import platform
import socket
import sys
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Callable

import pandas as pd
import torch
from torch.utils.flop_counter import FlopCounterMode

import lionsim
from lionsim.backends import SimComm
from lionsim.compute import DEVICES
from lionsim.engine import train_step
from lionsim.errors import LionsimError
from lionsim.steptime import OverlapConfig, pass_bytes, step_times
from lionsim.steptime.work import device_work, measured_work
from lionsim.network import load_network, wire_bytes
from lionsim.reports import STEP_COLUMNS, summarize
from lionsim.reports.summary import pick_baseline
from lionsim.runs import RunSpec, parse_runs
from lionsim.simulator import GRADIENT_METHODS, check_finite
from lionsim.strategies import StrategyConfig, flatten_parameters
from lionsim.timing import Clock
from lionsim.transports import TRANSPORTS
from lionsim.workloads import Workload, WorkloadConfig, build_workload

DEFAULT_STRATEGIES = ("adamw", "lion", "dlion-mavo", "dlion-avg", "lioncub-l1")
MEASURED = "measured"
"""--compute: time compute, encode, decode and update on this machine."""


@dataclass(kw_only=True, slots=True)
class BenchConfig:
    """A benchmark run: one workload, N workers, one network, several strategies."""

    workload: str = "vit"
    """Workload name (`lionsim workloads`)."""
    model_size: str = "small"
    """Model size preset of the workload: tiny | small | paper."""
    workers: int = 8
    """N: data-parallel workers."""
    batch_size: int = 32
    """Samples per worker per step."""
    steps: int = 100
    """Training steps per strategy."""
    seed: int = 0
    """Seed of model init, data, splits and stochastic quantizers."""
    strategies: list[str] = field(default_factory=lambda: list(DEFAULT_STRATEGIES))
    """`NAME` or `NAME@TRANSPORT` per run."""
    transport: str | None = None
    """Transport for every strategy given without one (where it fits)."""
    network: str = "10gbe"
    """Network preset or profile file."""
    backend: str = "sim"
    """Where collectives run: sim (modelled)."""
    lr: float | None = None
    """Learning rate for every strategy (None: each strategy's default)."""
    weight_decay: float | None = None
    """Weight decay for every strategy (None: each strategy's default)."""
    betas: tuple[float, float] | None = None
    """(beta1, beta2) for every strategy (None: each strategy's default)."""
    momentum_sync: str = "never"
    """Lion family momentum sync: never | every:K | schedule:K."""
    topk_ratio: float = 0.01
    """dgc: fraction of parameters sent."""
    data: Path | None = None
    """Dataset path (CIFAR-10 python dir for vit, a text file for gpt); None: generated."""
    data_split: str = "iid"
    """iid | dirichlet:ALPHA."""
    eval_every: int = 25
    """Evaluate on held-out data every this many steps (and at the last step)."""
    baseline: str | None = None
    """Run the speedups are against (default: the first)."""
    compute: str = MEASURED
    """measured (this machine) or a device preset: compute, encode, decode, update modelled for it."""
    bucket_mb: float = 25.0
    """Overlap bucket, MB (1e6 bytes) of fp32 gradients, as DDP's bucket_cap_mb."""
    threads: int = 1
    """torch CPU threads while training. One by default: the small workloads' kernels gain
    nothing from more, and with several threads on a busy 2-core machine measured compute
    jumped 10-100x (threads waiting on each other), which swamps the time breakdown."""

    def validate(self) -> list[RunSpec]:
        for name, value, low in (("workers", self.workers, 1), ("batch-size", self.batch_size, 1),
                                 ("steps", self.steps, 1), ("eval-every", self.eval_every, 1),
                                 ("threads", self.threads, 1)):
            if value < low:
                raise LionsimError(f"bad --{name} {value}; accepted: an integer >= {low}")
        for name, value in (("lr", self.lr), ("weight-decay", self.weight_decay)):
            if value is not None and not (math.isfinite(value) and value >= 0 and (name != "lr" or value > 0)):
                raise LionsimError(f"bad --{name} {value}; accepted: a finite number "
                                   f"{'> 0' if name == 'lr' else '>= 0'}")
        if self.backend != "sim":
            raise LionsimError(f"backend {self.backend!r} is not available for bench yet; accepted: sim")
        if self.compute != MEASURED and self.compute not in DEVICES:
            raise LionsimError(f"bad --compute {self.compute!r}; accepted: {MEASURED} or a device: {', '.join(DEVICES.names())}")
        OverlapConfig(bucket_mb=self.bucket_mb)  # fails on a bad bucket size
        runs = parse_runs(list(self.strategies), self.transport)
        pick_baseline([r.label for r in runs], [r.strategy for r in runs], self.baseline)  # before any training
        return runs

    def strategy_config(self) -> StrategyConfig:
        """The strategies' hyperparameters: every StrategyConfig field this config names too."""
        given = {f.name: getattr(self, f.name) for f in fields(StrategyConfig) if hasattr(self, f.name)}
        return StrategyConfig(**given)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["data"] = None if self.data is None else str(self.data)
        return d


@dataclass(slots=True)
class BenchResult:
    steps: pd.DataFrame
    summary: pd.DataFrame
    meta: dict


ProgressFn = Callable[[RunSpec, int, float], None]


def run_bench(cfg: BenchConfig, progress: ProgressFn | None = None) -> BenchResult:
    """Train every strategy in cfg; return per-step records, the summary and the metadata."""
    runs = cfg.validate()
    network = load_network(cfg.network)
    workload_cfg = WorkloadConfig(name=cfg.workload, workers=cfg.workers, batch_size=cfg.batch_size,
                                  seed=cfg.seed, data=cfg.data, data_split=cfg.data_split,
                                  size=cfg.model_size)
    workload = build_workload(workload_cfg)  # built once; fails on bad data before any training
    initial = {k: v.detach().clone() for k, v in workload.model.state_dict().items()}
    threads = torch.get_num_threads()
    torch.set_num_threads(cfg.threads)
    try:
        frames = [pd.DataFrame(_train(cfg, workload, initial, run, network, progress)) for run in runs]
    finally:
        torch.set_num_threads(threads)
    extra = [c for c in ("comm_exposed_s",) if c not in STEP_COLUMNS]  # written after the contract columns
    steps = pd.concat(frames, ignore_index=True)[STEP_COLUMNS + extra]
    return BenchResult(steps, summarize(steps, cfg.baseline), run_metadata(cfg, network))


def _train(cfg: BenchConfig, workload: Workload, initial: dict, run: RunSpec, network,
           progress: ProgressFn | None) -> list[dict]:
    torch.manual_seed(cfg.seed)
    workload.model.load_state_dict(initial)  # every run starts from the same model; batches are stateless
    params, layout = flatten_parameters(workload.model)
    comm = SimComm(cfg.workers)
    strategy = run.strategy_class(cfg.strategy_config(), layout, comm)
    transport = TRANSPORTS.get(run.transport)()
    spec = strategy.payload_spec()
    transport.check(spec, cfg.workers)
    bits_up, bits_down = transport.bits_per_param(spec, cfg.workers) if cfg.workers > 1 else (0.0, 0.0)
    grads = torch.zeros(cfg.workers, layout.numel)
    worker_gradients = GRADIENT_METHODS[workload.gradients]
    overlap = OverlapConfig(bucket_mb=cfg.bucket_mb)
    device = None if cfg.compute == MEASURED else DEVICES.get(cfg.compute)
    passes = pass_bytes(run.strategy, run.transport, spec, cfg.workers) if device is not None else None
    flops = None  # one worker's forward + backward FLOPs, counted in step 1 on a device
    clock, sim_time, rows = Clock(), 0.0, []
    for step in range(1, cfg.steps + 1):
        with clock.section("compute"):
            if device is not None and flops is None:
                with FlopCounterMode(display=False) as counter:
                    losses = worker_gradients(workload.model, workload.loss, workload.batches(step - 1), grads)
                flops = counter.get_total_flops() / cfg.workers
            else:
                losses = worker_gradients(workload.model, workload.loss, workload.batches(step - 1), grads)
        check_finite(losses, grads, f"step {step} of {run.label}")
        calls = train_step(strategy, transport, comm, grads, params, step, clock)
        t = clock.take()
        if device is None:
            work = measured_work(t.get("compute", 0.0) / cfg.workers, t.get("encode", 0.0) / comm.local_workers,
                                 t.get("decode", 0.0) / comm.local_workers, t.get("update", 0.0))
        else:
            work = device_work(flops, layout.numel, passes, device)
        extra_calls = strategy.extra_calls(step) if cfg.workers > 1 else []
        times = step_times(work, transport=transport, spec=spec, workers=cfg.workers, network=network,
                           overlap=overlap, extra_calls=extra_calls)
        row = {
            "strategy": run.strategy, "transport": run.transport, "workers": cfg.workers,
            "network": network.name, "backend": cfg.backend, "workload": cfg.workload,
            "seed": cfg.seed, "step": step, "loss": sum(losses) / len(losses),
            **times.columns(),
            "wire_bytes": sum(wire_bytes(c, cfg.workers) for c in calls),
            "bits_per_param_up": bits_up, "bits_per_param_down": bits_down,
            "params": layout.numel, "eval_loss": float("nan"), "eval_acc": float("nan"),
        }
        sim_time += row["step_s"]
        row["sim_time_s"] = sim_time
        if step % cfg.eval_every == 0 or step == cfg.steps:
            row.update(workload.evaluate(workload.model))
        rows.append(row)
        if progress is not None:
            progress(run, step, row["loss"])
    return rows


def run_metadata(cfg: BenchConfig, network) -> dict:
    return {
        "command": "bench",
        "config": cfg.to_dict(),
        "network": network.to_dict(),
        "seed": cfg.seed,
        "versions": {"python": sys.version.split()[0], "torch": torch.__version__,
                     "lionsim": lionsim.__version__},
        "host": {"hostname": socket.gethostname(), "platform": platform.platform(),
                 "cpus": torch.get_num_threads()},
    }
