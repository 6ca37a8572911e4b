"""`lionsim bench`: train one workload with N workers under several strategies and book, step
by step, compute, encoding, communication, decoding and the update (lionsim.training.booking
says how each second is obtained).

Every strategy starts from the same initial model and sees the same batches (same seed). The
same code runs on every backend: on `sim` this process holds all W workers; on gloo/nccl
each of R processes holds W/R of them (lionsim.launch starts them, or torchrun does)
and process 0 books and writes.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Callable

import pandas as pd

from lionsim.aggregators import check_tie
from lionsim.backends import BACKENDS, SimComm
from lionsim.compute import DEVICES
from lionsim.errors import LionsimError
from lionsim.network import canonical_network, network_for
from lionsim.registry import did_you_mean
from lionsim.reports import STEP_COLUMNS, summarize
from lionsim.reports.summary import pick_baseline
from lionsim.plan import BenchPlan, plan
from lionsim.plugins import load_plugins
from lionsim.resume import Resume
from lionsim.runs import RunSpec, parse_runs
from lionsim.steptime import OverlapConfig
from lionsim.steptime.spread import ComputeSpread
from lionsim.strategies import MomentumSync, StrategyConfig, momentum_strategies
from lionsim.strategies.momentum_sync import TensorSelection
from lionsim.strategies.given import check_given, flat_options, options_for, split_options
from lionsim.training.booking import CALL_COLUMNS, Booking, book_run, call_rows, slowest_process
from lionsim.training.spans import gather_spans
from lionsim.training.compute import ComputeFigure, count_compute, measure_compute
from lionsim.training.checkpoint import RunCheckpoint
from lionsim.training.loop import Place, RunRecord, RunStopped, StepFn, train_run
from lionsim.training.record import bench_record, priced_by, run_entry, timing_notes
from lionsim.training.threads import torch_threads
from lionsim.plugin_load import is_spec
from lionsim.training.memory import check_model_fits
from lionsim.workloads import WORKLOADS, WorkloadConfig, build_workload, canonical_workload, check_workload
from lionsim.workloads.config import parse_eval_samples

DEFAULT_STRATEGIES = ("adamw", "lion", "dlion-mavo", "dlion-mavo@a2a-1bit", "lioncub-l1")
DEFAULT_DEVICE = "h100"
"""--compute on sim unless given (BenchConfig.compute)."""
DEFAULT_WARMUP = 3
"""--warmup-steps unless given (fewer in a shorter run)."""
MEASURED = "measured"
"""--compute: time compute, encode, decode and update on this machine."""
EXTRA_STEP_COLUMNS = ["comm_exposed_s", "comm_model_s", "comm_model_p10_s", "comm_model_p90_s", "comm_measured_s",
                      "barrier_wait_s", "calls", "ranks", "diverged_at_step", "compute_median_s", "compute_max_s",
                      "wait_s", "vote_agreement", "synced", "aggregate_rel_error", "eval_metric",
                      "eval_higher_is_better"]
"""Written after the contract columns of steps.csv. `synced`: 1 where the step exchanged what the
strategy sends (every step, but for localsgd/diloco every --local-steps-th only), 0 on a local step.
`aggregate_rel_error`: a lossy float transport's (bf16-allreduce, fp8-*) error against the exact
mean, ||aggregate - mean|| / ||mean||, on the simulator; NaN elsewhere (lionsim.transports.error).
`eval_metric`, `eval_higher_is_better`: what eval_acc holds and its direction (1: higher is better),
the workload's (Workload.metric_name, higher_is_better: "accuracy", 1 for the built-ins)."""


@dataclass(kw_only=True, slots=True)
class BenchConfig:
    """A benchmark run: one workload, N workers, one network, several strategies."""

    workload: str = "vit"
    """Workload name (`lionsim workloads`), or a user's FILE.py:FUNC | module:FUNC (lionsim.workloads.plugin),
    kept with the file's absolute path."""
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
    network: str = "1gbe"
    """Network preset or profile file."""
    traits: str | None = None
    """Collective library traits the network is run by (lionsim.network.libraries: ideal, gloo,
    nccl); None: the profile's own, else the backend's (ideal on sim)."""
    backend: str = "sim"
    """Where collectives run: sim (one process, modelled), gloo or nccl (real processes, measured)."""
    ranks: int | None = None
    """gloo/nccl: processes lionsim starts (W/R workers each); None: 2 for gloo, one per visible
    GPU for nccl (lionsim.launch.default_ranks), or the launcher's WORLD_SIZE under torchrun."""
    lr: float | None = None
    """Learning rate for every strategy (None: each strategy's default for the workload)."""
    weight_decay: float | None = None
    """Weight decay for every strategy (None: each strategy's default for the workload)."""
    betas: tuple[float, float] | None = None
    """(beta1, beta2) for every strategy (None: each strategy's default)."""
    hyper: dict[str, dict] = field(default_factory=dict)
    """Per run ("strategy@transport" or a strategy name): {lr, weight_decay, betas} that win
    over the options above (a config file's [hyper."dlion-mavo@a2a-1bit"] table; run.json
    records every run's resolved values here, so a replay trains exactly the same)."""
    momentum_sync: str = "never"
    """Lion family momentum sync: never | every:K | schedule:K."""
    sync_tensors: str = "all"
    """Tensors a momentum sync averages: all | min-numel:N | GLOB[,GLOB] (tensor names)."""
    tie: str = "zero"
    """dlion-mavo tie rule: zero (sign(0) = 0) | alternate (+1/-1 step by step) | random (a coin seeded
    by the seed and the step)."""
    options: dict[str, object] = field(default_factory=dict)
    """Strategy options given (each strategy module's Options; lionsim.strategies.form): by flag
    key (`demo_topk`: every run whose strategy has that flag) or `NAME.FIELD` (`demo.topk`, from
    --opt: that strategy's runs); a value may be text (`--opt`), converted and checked per field.
    run.json and sweep.json record them flat, each flag key beside the other options."""
    plugins: list[str] = field(default_factory=list)
    """Plug-in files (--plugin), resolved paths: every process that validates this config loads
    them first (gloo ranks, sweep cells, --resume, --config run.json: lionsim.plugins)."""
    data: Path | None = None
    """Dataset path (CIFAR-10 python dir for vit, a text file for gpt); None: generated."""
    data_split: str = "iid"
    """iid | dirichlet:ALPHA."""
    eval_every: int = 25
    """Evaluate on held-out data every this many steps (and at the last step)."""
    eval_samples: int | str | None = None
    """Held-out samples each evaluation scores: a count, "all" (the whole test set), or None: 1024,
    fewer where a real test set holds fewer (lionsim.workloads.config.eval_count); run.json's
    `evaluation` says how many were used."""
    baseline: str | None = None
    """Run the speedups are against (default: the first)."""
    target_loss: float | None = None
    """Training loss for time to target (> 0); None: the baseline run's smoothed loss at 90% of
    its steps, so a run that trains badly cannot move it (lionsim.reports.summary)."""
    compute: str | None = None
    """measured (this machine) or a device preset: compute, encode, decode, update modelled for it.
    None: h100 on sim (a GPU-like step, where communication matters: the regime lionsim is for),
    measured on gloo/nccl (every time column of a real run is measured on its ranks)."""
    warmup_steps: int | None = None
    """Leading steps of each run whose measured times are left out of the medians; None:
    DEFAULT_WARMUP, fewer in a run too short for it (at least one step is always timed)."""
    compute_spread: list[str] = field(default_factory=list)
    """Uneven workers: specs multiplying each worker's compute per step (lionsim.steptime.spread:
    lognormal:SIGMA, slow:K:FACTOR, episodes:P:FACTOR:STEPS, trace:FILE.csv); seeded by `seed`.
    On gloo/nccl each rank sleeps to match (its factor - 1) x its measured compute."""
    bucket_mb: float = 25.0
    """Overlap bucket, MB (1e6 bytes) of fp32 gradients, as DDP's bucket_cap_mb."""
    threads: int = 1
    """torch CPU threads while building the workload and training. One by default: the small workloads' kernels gain
    nothing from more, and with several threads on a busy 2-core machine measured compute
    jumped 10-100x (threads waiting on each other), which swamps the time breakdown."""
    timeout: float = 60.0
    """gloo/nccl: seconds a collective or the rendezvous may wait before the run fails."""
    iface: str | None = None
    """gloo/nccl: the network interface the ranks talk over (sets GLOO_SOCKET_IFNAME and
    NCCL_SOCKET_IFNAME); None: the library's choice, or what those variables already say."""
    calibrate: bool = False
    """gloo/nccl: before training, measure on the run's own group the collectives the strategies
    will issue, fit the backend's traits and price comm_model_s with them (lionsim.measure.calibrate)."""
    trace: bool = False
    """Write trace.json: each step of every worker (sim: modelled) or rank (gloo/nccl: measured)
    in the Chrome trace-event format, for Perfetto (lionsim.reports.trace)."""

    def __post_init__(self) -> None:
        if self.compute is None:
            self.compute = DEFAULT_DEVICE if self.backend == "sim" else MEASURED
        self._default_warmup()
        self._canonical_names()

    def _default_warmup(self) -> None:
        """--warmup-steps unless given: DEFAULT_WARMUP, fewer in a run too short to time a step after it."""
        if self.warmup_steps is None and isinstance(self.steps, int):
            self.warmup_steps = max(0, min(DEFAULT_WARMUP, self.steps - 1))

    def _canonical_names(self) -> None:
        """Workload and network preset in their listed spelling (`MLP` -> `mlp`, `10GbE` -> `10gbe`),
        so run.json and steps.csv record one spelling; a profile file path, or an unknown name
        (which validate and load_network reject), stays as given. A FILE.py:FUNC workload gets its
        file's absolute path, so a resume or a rank in another directory imports the same file."""
        if isinstance(self.workload, str) and (self.workload in WORKLOADS or is_spec(self.workload)):
            self.workload = canonical_workload(self.workload)
        if isinstance(self.network, (str, os.PathLike)):
            self.network = canonical_network(self.network)

    def validate(self) -> list[RunSpec]:
        self.plugins = load_plugins(self.plugins)  # before any strategy name is looked up
        self._canonical_names()
        self._default_warmup()
        for name, value, low in (("workers", self.workers, 1), ("batch-size", self.batch_size, 1),
                                 ("steps", self.steps, 1), ("eval-every", self.eval_every, 1),
                                 ("threads", self.threads, 1), ("warmup-steps", self.warmup_steps, 0)):
            if value < low:
                raise LionsimError(f"bad --{name} {value}; accepted: an integer >= {low}")
        if not 0 <= self.seed < 2**63:  # torch generators take a signed 64-bit seed
            raise LionsimError(f"bad --seed {self.seed}; accepted: an integer from 0 to 2**63 - 1")
        _check_hyper(lambda key: f"--{key.replace('_', '-')}", self.lr, self.weight_decay, self.betas)
        if self.warmup_steps >= self.steps:
            steps = f"{self.steps} step{'' if self.steps == 1 else 's'}"
            raise LionsimError(f"bad --warmup-steps {self.warmup_steps}: a run of {steps} would have no timed step "
                               f"left; accepted: 0 to {self.steps - 1}")
        if self.target_loss is not None and not (math.isfinite(self.target_loss) and self.target_loss > 0):
            raise LionsimError(f"bad --target-loss {self.target_loss}; accepted: a finite loss > 0 (a cross-entropy "
                               "is never below 0, and only a perfect model reaches 0)")
        if not (math.isfinite(self.timeout) and self.timeout > 0):
            raise LionsimError(f"bad --timeout {self.timeout}; accepted: seconds > 0")
        if self.backend not in BACKENDS:
            raise LionsimError(f"unknown backend {self.backend!r}; choose from: {', '.join(BACKENDS)}")
        if self.backend == "sim" and self.ranks not in (None, 1):
            raise LionsimError(f"--ranks {self.ranks} needs --backend gloo or nccl; sim is one process")
        for flag, given in (("--calibrate", self.calibrate), (f"--iface {self.iface}", self.iface is not None)):
            if given and self.backend == "sim":
                raise LionsimError(f"{flag} needs --backend gloo or nccl: sim measures nothing")
        if self.traits is not None:
            from lionsim.network import TRAITS

            self.traits = TRAITS.canonical(self.traits)
        network_for(self.network, traits=self.traits, backend=self.backend)  # a bad profile fails before any work
        if self.compute != MEASURED and self.compute not in DEVICES:
            choices = [MEASURED, *DEVICES.names()]
            raise LionsimError(f"bad --compute {self.compute!r}; accepted: {MEASURED} or a device: "
                               f"{', '.join(choices[1:])}{did_you_mean(self.compute, choices)}")
        OverlapConfig(bucket_mb=self.bucket_mb)  # fails on a bad bucket size
        spread = ComputeSpread.parse(self.compute_spread, self.seed)  # fails on a bad spec, a bad trace
        if spread is not None:
            spread.check(self.workers)
        runs = parse_runs(list(self.strategies), self.transport)
        pick_baseline([r.label for r in runs], [r.strategy for r in runs], self.baseline)  # before any training
        MomentumSync.parse(self.momentum_sync)
        TensorSelection.parse(self.sync_tensors)
        if self.sync_tensors != "all" and self.momentum_sync == "never":
            raise LionsimError(f"--sync-tensors {self.sync_tensors} needs --momentum-sync every:K or schedule:K")
        self.eval_samples = parse_eval_samples(self.eval_samples)
        check_tie(self.tie)
        if self.tie != "zero" and not any("tie" in r.strategy_class.reads for r in runs):
            raise LionsimError(f"--tie {self.tie} applies to dlion-mavo's majority vote and no run is dlion-mavo")
        if self.momentum_sync != "never" and not any(r.strategy_class.has_momentum_sync for r in runs):
            raise LionsimError(f"--momentum-sync {self.momentum_sync} applies to strategies with per-worker momentum "
                               f"and none of these runs has it; accepted: {', '.join(momentum_strategies())}")
        check_given(self.options, [r.strategy for r in runs])
        labels = {r.label for r in runs} | {r.strategy for r in runs}
        for key, values in self.hyper.items():
            if key not in labels:
                raise LionsimError(f"hyper table for {key!r} names no run of this bench; runs: {', '.join(sorted(labels))}")
            unknown = set(values) - {"lr", "weight_decay", "betas"}
            if unknown:
                raise LionsimError(f"hyper.{key}: unknown key(s) {', '.join(sorted(unknown))}; accepted: lr, weight_decay, betas")
            _check_hyper(lambda name, key=key: f"hyper.{key}.{name}", values.get("lr"), values.get("weight_decay"),
                         values.get("betas"))
        check_model_fits(self.workload_config())  # a user's model, counted on the meta device, before it is built
        check_workload(self.workload_config())  # a user's workload: its pieces checked before anything is written
        return runs

    def strategy_config(self, run: RunSpec | None = None) -> StrategyConfig:
        """A run's hyperparameters: every StrategyConfig field this config names too, with the
        run's own `hyper` table (by label, else by strategy name) winning."""
        given = {f.name: getattr(self, f.name) for f in fields(StrategyConfig) if hasattr(self, f.name)}
        if run is not None and not run.strategy_class.has_momentum_sync:
            given["momentum_sync"] = "never"  # an option of some strategies applies to those it fits
        if run is not None:
            own = self.hyper.get(run.label, self.hyper.get(run.strategy, {}))
            given.update({k: tuple(v) if k == "betas" else v for k, v in own.items()})
        given["options"] = dict(self.options) if run is None else options_for(self.options, run.strategy)
        return StrategyConfig(**given)

    def workload_config(self) -> WorkloadConfig:
        return WorkloadConfig(name=self.workload, workers=self.workers, batch_size=self.batch_size, seed=self.seed,
                              data=self.data, data_split=self.data_split, size=self.model_size,
                              eval_samples=self.eval_samples)

    def to_dict(self) -> dict:
        """Every option, strategy options flat by flag key (None: not given) and `opt` (NAME.FIELD=VALUE)."""
        d = asdict(self)
        d["data"] = None if self.data is None else str(self.data)
        options = d.pop("options")
        return {**d, **flat_options(options)}

    @classmethod
    def from_dict(cls, d: dict) -> BenchConfig:
        """The inverse of to_dict (a sweep.json's or run.json's options)."""
        plain, options = split_options(d)
        return cls(**plain, options=options)


def _check_hyper(name: Callable[[str], str], lr, weight_decay, betas) -> None:
    """lr, weight decay and betas (None: not given) meet one set of rules, whether they come
    from the flags or from a run's own hyper table; `name(key)` says where, for the message."""
    def number(x) -> bool:
        return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)

    if lr is not None and not (number(lr) and lr > 0):
        raise LionsimError(f"bad {name('lr')} {lr!r}; accepted: a finite number > 0")
    if weight_decay is not None and not (number(weight_decay) and weight_decay >= 0):
        raise LionsimError(f"bad {name('weight_decay')} {weight_decay!r}; accepted: a finite number >= 0")
    if betas is not None and not (isinstance(betas, (list, tuple)) and len(betas) == 2
                                  and all(number(b) and 0 <= b < 1 for b in betas)):
        raise LionsimError(f"bad {name('betas')} {betas!r}; accepted: two numbers, each in [0, 1)")


@dataclass(slots=True)
class BenchResult:
    steps: pd.DataFrame
    summary: pd.DataFrame
    meta: dict
    calls: pd.DataFrame | None = None
    """calls.csv on a real backend (lionsim.training.booking.CALL_COLUMNS); None on sim."""
    files: dict[str, str] = field(default_factory=dict)
    """Further files of the run, name -> text (a calibrated run's calibration.toml and .csv)."""

    @property
    def diverged(self) -> list[str]:
        """Labels of the runs that diverged."""
        hit = self.summary[self.summary["diverged_at_step"].notna()]
        return [f"{s}@{t} at step {int(at)}" for s, t, at in zip(hit["strategy"], hit["transport"], hit["diverged_at_step"])]


class Bench:
    """One bench on this process: the workload built once, the compute figure, then every run.

    `records` grows as runs go, so a bench that fails part way can still book what finished
    (`result(status=...)`). A run stopped at a step boundary leaves its state in `checkpoint`;
    `resume` (lionsim.resume) continues an interrupted bench: its finished runs are kept as
    booked, the run under way continues from its checkpoint."""

    def __init__(self, cfg: BenchConfig | BenchPlan, place: Place | None = None, resume: Resume | None = None) -> None:
        self.plan = cfg if isinstance(cfg, BenchPlan) else plan(cfg)
        """The bench resolved once (lionsim.plan): runs, their strategies' configs, the workload."""
        self.cfg = cfg = self.plan.settings
        self.resume = resume
        self.checkpoint: RunCheckpoint | None = None
        """The state of the run a stop ended (lionsim.training.checkpoint), with the compute figure."""
        self.runs = self.plan.specs
        self.network = network_for(cfg.network, traits=cfg.traits, backend=cfg.backend)
        self.network.nodes(cfg.workers)  # whole nodes (or one): before any training, not when booking
        self.place = place or Place(SimComm(cfg.workers, self.network.workers_per_node))
        with torch_threads(cfg.threads):
            self.workload = build_workload(self.plan.workload)  # fails on bad data before any training
        self.workload.model.to(self.place.device)
        self.initial = {k: v.detach().clone() for k, v in self.workload.model.state_dict().items()}
        self.device = None if cfg.compute == MEASURED else DEVICES.get(cfg.compute)
        self.spread = ComputeSpread.parse(cfg.compute_spread, cfg.seed)
        self.compute = ComputeFigure()
        self.records: list[RunRecord] = []
        self.started = time.time()
        self.on_start: Callable[[RunSpec], None] | None = None
        """Called as each run starts (a watchdog's note of where this process is)."""
        self.hosts: list[dict] = []
        """Where the ranks of a real group run (lionsim.launch.hosts); empty on sim."""
        self.calibration: pd.DataFrame | None = None
        """--calibrate: the fit's error on every measured size (rank 0); self.network is the fit."""

    def _started(self, record: RunRecord) -> None:
        self.records.append(record)
        if self.on_start is not None:
            self.on_start(record.run)

    def run(self, progress: StepFn | None = None, after_run: Callable[[Bench], None] | None = None,
            stop: Callable[[], bool] | None = None) -> BenchResult:
        """Train every run (but those a resume kept); `after_run(self)` after each (to write what
        finished). `stop()` true ends the run under way at a step boundary: RunStopped, with
        `self.checkpoint` set."""
        resumed = self.resume.checkpoint if self.resume is not None else None
        with torch_threads(self.cfg.threads):
            if resumed is not None and resumed.compute is not None:
                self.compute = resumed.compute  # the figure every finished step was booked with
            else:
                self.compute = (measure_compute(self.workload, self.place) if self.device is None
                                else count_compute(self.workload, self.place))
            for planned in self.plan.runs:
                run = planned.run
                if self.resume is not None and run.label in self.resume.finished:
                    continue
                own = resumed if resumed is not None and resumed.label == run.label else None
                try:
                    record = train_run(run, workload=self.workload, initial=self.initial, place=self.place,
                                       strategy_cfg=planned.strategy, steps=self.cfg.steps,
                                       eval_every=self.cfg.eval_every, count_kernels=self.device is not None,
                                       on_step=progress, on_record=self._started, delay=self._straggler(),
                                       stop=stop, resume=own)
                except RunStopped as e:
                    e.checkpoint.compute = self.compute
                    self.checkpoint = e.checkpoint
                    raise
                if self.cfg.trace and self.cfg.backend != "sim":
                    gather_spans(record, self.place.comm)  # every rank's own times, before billing
                slowest_process(record, self.place.comm)
                if after_run is not None:
                    after_run(self)
        return self.result()

    def _straggler(self) -> Callable[[int, float], float] | None:
        """--compute-spread on a real backend with measured compute: this process's sleeps."""
        comm = self.place.comm
        if self.spread is None or comm.ranks == 1 or self.device is not None:
            return None
        return self.spread.delay(comm.first_worker, comm.local_workers, comm.world_size)
    def state_to_keep(self) -> RunCheckpoint | None:
        """After a stop: the state a --resume continues from (the one this session resumed from,
        if it stopped again before training on)."""
        if self.checkpoint is not None:
            return self.checkpoint
        old = self.resume.checkpoint if self.resume is not None else None
        record = next((r for r in self.records if old is not None and r.run.label == old.label), None)
        return old if old is not None and (record is None or len(record.steps) == old.step) else None

    def diverged_at(self, label: str) -> int | None:
        """The step a run diverged at (None: it did not, or has not run)."""
        done = next((r for r in self.records if r.run.label == label), None)
        if done is not None:
            return done.diverged_at
        kept = self.resume.finished.get(label) if self.resume is not None else None
        at = kept["diverged_at_step"].dropna() if kept is not None else ()
        return int(at.iloc[0]) if len(at) else None

    def booking(self) -> Booking:
        comm = self.place.comm
        return Booking(network=self.network, overlap=OverlapConfig(bucket_mb=self.cfg.bucket_mb), compute=self.compute,
                       device=self.device, warmup=self.cfg.warmup_steps, backend=self.cfg.backend,
                       workers=comm.world_size, ranks=comm.ranks, spread=self.spread)

    def result(self, status: str = "complete", error: str | None = None) -> BenchResult:
        """Every finished (or partly finished) run booked: steps, summary, run.json record."""
        kept = self.resume.finished if self.resume is not None else {}
        trained = {r.run.label: r for r in self.records if r.steps}
        frames = [kept[run.label][STEP_COLUMNS + EXTRA_STEP_COLUMNS] if run.label in kept else self._frame(trained[run.label])
                  for run in self.runs if run.label in kept or run.label in trained]
        steps = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=STEP_COLUMNS + EXTRA_STEP_COLUMNS)
        summary = summarize(steps, self.cfg.baseline, self.cfg.target_loss, self.cfg.warmup_steps) if frames else pd.DataFrame()
        calls = None
        if self.place.comm.ranks > 1:
            booking = self.booking()
            calls = pd.DataFrame([row for r in self.records for row in call_rows(r, booking)], columns=CALL_COLUMNS)
            if len(summary):
                summary["comm_priced_by"] = self.priced_by
        files = {}
        if self.calibration is not None:
            from lionsim.network.toml_out import profile_toml

            files = {"calibration.toml": profile_toml(self.network, self.network.description),
                     "calibration.csv": self.calibration.to_csv(index=False)}
        if self.cfg.trace:
            files["trace.json"] = self.trace()
        return BenchResult(steps, summary, self.record(status, error), calls, files)

    def trace(self) -> str:
        """trace.json of the runs trained in this session (lionsim.training.spans)."""
        from lionsim.reports.trace import Track, trace_text
        from lionsim.training.spans import run_tracks

        comm = self.place.comm
        tracks = [Track(name, spans) for name, spans in
                  run_tracks(self.records, self.booking(), self.cfg.backend, comm.local_workers)]
        about = {"command": "bench", "backend": self.cfg.backend, "network": self.network.name,
                 "workers": comm.world_size, "ranks": comm.ranks,
                 "times": "modelled (the network model and the booked work)" if self.cfg.backend == "sim"
                          else "measured on each rank; ranks' clocks aligned at the calls' barriers (median)"}
        return trace_text(tracks, about)

    @property
    def priced_by(self) -> str | None:
        """What prices comm_model_s on a real backend (None on sim, where the model is the time)."""
        return priced_by(self.network, self.calibration is not None) if self.cfg.backend != "sim" else None

    def record(self, status: str, error: str | None) -> dict:
        """run.json (lionsim.training.record): every run with the hyperparameters it trains with."""
        cfg, options = self.cfg, self.cfg.to_dict()
        runs = [run_entry(r.run, r.hyper, self.diverged_at(r.label), r.options) for r in self.plan.runs]
        timing = timing_notes(options=options, device=self.device, compute=self.compute, network=self.network,
                              ranks=self.place.comm.ranks,
                              comm_model=self.priced_by)
        return bench_record(options=options, runs=runs, timing=timing, workload=self.workload, network=self.network,
                            started=self.started, status=status, error=error, hosts=self.hosts,
                            comm_model=self.priced_by,
                            resumed=(self.resume.meta, self.resume.describe()) if self.resume is not None else None)

    def rows(self, record: RunRecord) -> list[dict]:
        """The record's booked steps, one dict each: steps.csv's columns but sim_time_s (a
        running sum over the run, which a caller booking one step at a time adds later)."""
        cfg, comm = self.cfg, self.place.comm
        times = book_run(record, self.booking(), comm.local_workers)
        rows = []
        for s, t in zip(record.steps, times):
            rows.append({
                "strategy": record.run.strategy, "transport": record.run.transport, "workers": comm.world_size,
                "network": self.network.name, "backend": cfg.backend, "workload": cfg.workload, "seed": cfg.seed,
                "step": s.step, "loss": s.loss, **t, "params": record.params,
                "eval_loss": s.evaluation.get("eval_loss", math.nan), "eval_acc": s.evaluation.get("eval_acc", math.nan),
                "ranks": comm.ranks, "diverged_at_step": math.nan if record.diverged_at is None else record.diverged_at,
                "vote_agreement": math.nan if s.sent is None or s.sent.agreement is None else s.sent.agreement,
                "synced": int(s.sent is not None and not s.sent.local),
                "aggregate_rel_error": math.nan if s.sent is None or s.sent.aggregate_error is None
                else s.sent.aggregate_error,
                "eval_metric": self.workload.metric_name, "eval_higher_is_better": int(self.workload.higher_is_better),
            })
        return rows

    def _frame(self, record: RunRecord) -> pd.DataFrame:
        frame = pd.DataFrame.from_records(self.rows(record))
        frame["sim_time_s"] = frame["step_s"].cumsum()
        frame["wire_bytes"] = frame["wire_bytes"].astype("int64")
        return frame[STEP_COLUMNS + EXTRA_STEP_COLUMNS]


def run_bench(cfg: BenchConfig, progress: StepFn | None = None) -> BenchResult:
    """Train every strategy in cfg on the simulator; return the records, summary and run record."""
    return Bench(cfg).run(progress)
