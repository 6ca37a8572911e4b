"""BenchConfig: `lionsim bench`'s options as the command gathers them (flags, a TOML file, a
run.json to replay), checked once by `validate` and resolved by lionsim.config.planning.plan
into the BenchPlan that everything below the command reads (lionsim.plan). Nothing below the
command imports this module (tests/architecture/test_layers.py)."""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from lionsim.backends import BACKENDS, check_timeout
from lionsim.backends.scope import SCOPES, acts
from lionsim.compute import DEVICES, MEASURED, device_library
from lionsim.compute.device_file import check_profile_device, get_device, is_device_file
from lionsim.compute.devices import device_choices
from lionsim.config.defaults import DEFAULT_STRATEGIES, DEFAULT_WORKLOAD
from lionsim.errors import LionsimError
from lionsim.forms import (MomentumSync, TensorSelection, beyond_float32, check_workload_name,
                           parse_eval_samples, parse_split)
from lionsim.network import canonical_network, network_for
from lionsim.numbers import plural
from lionsim.plugin_load import is_spec, parse_spec
from lionsim.ranges import (AT_LEAST_0, AT_LEAST_1, EVERY_STEPS, LR, MAX_SEED, SEED, STEPS, TARGET_LOSS, WEIGHT_DECAY, WORKERS,
                            is_number, refusal, span)
from lionsim.registry import did_you_mean
from lionsim.steptime import OverlapConfig
from lionsim.steptime.spread import ComputeSpread
from lionsim.whole import MAX_STEPS, MAX_WORKERS
from lionsim.whole_nodes import check_workers

if TYPE_CHECKING:  # the rest import torch: validate imports them after check_plain (lionsim.config's docstring)
    from lionsim.runs import RunSpec
    from lionsim.strategies import StrategyConfig
    from lionsim.workloads import WorkloadConfig

DEFAULT_DEVICE = "h100"
"""--compute on sim unless given (BenchConfig.compute)."""
HYPER_KEYS = ("lr", "weight_decay", "betas")
"""The keys a run's hyper table ([hyper.RUN] in a config file, --hyper's objects) takes."""
DEFAULT_TIMEOUT = 60.0
"""--timeout on gloo/nccl unless given: seconds a collective or the rendezvous may wait."""
MAX_THREADS = 1024
"""The most torch threads a training process takes: more than its cores only wait on each other,
and far more is no size at all (--threads 100000 aborted in libgomp's allocator, exit 1, no line;
a sweep left its root half made)."""
THREADS = span(1, MAX_THREADS, whole=True, why="torch threads of one training process; more than its cores only "
               "wait on each other")
BETA = span(0, 1, below=True).removeprefix("a number ")
"""What each of --betas' two numbers may be (bench's parse_betas says it too)."""


def for_backend(values: dict, backend: str, compute: str | None = None) -> tuple[dict, dict]:
    """A configuration's options (a TOML file's, a run.json's) replayed on `backend` where they
    name another: (what is kept, what is dropped), the settings that cannot act on `backend`
    dropped (lionsim.backends.scope, whose lines check_plain refuses them with) so the replay runs;
    the rest is the run as it was. `compute` is the --compute the command line types, which the
    replay runs with over the recorded one (a gloo run's record with --backend sim --compute h100
    runs without its warm-up, with --compute measured keeps it); None: the recorded one."""
    compute = compute or values.get("compute") or (DEFAULT_DEVICE if backend == "sim" else MEASURED)
    dropped = {k: v for k, v in values.items()
               if k != "backend" and not acts(k.replace("-", "_"), v, backend, compute)}
    return {k: v for k, v in values.items() if k not in dropped}, dropped


@dataclass(kw_only=True, slots=True)
class BenchConfig:
    """A benchmark run: one workload, N workers, one network, several strategies."""

    workload: str = DEFAULT_WORKLOAD
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
    """Strategy options given (each strategy module's Options; lionsim.strategies.core.form): by flag
    key (`demo_topk`: every run whose strategy has that flag) or `NAME.FIELD` (`demo.topk`, from
    --opt: that strategy's runs); a value may be text (`--opt`), converted and checked per field.
    run.json and sweep.json record them flat, each flag key beside the other options."""
    plugins: list[str] = field(default_factory=list)
    """Plug-in files (--plugin), resolved paths: `validate` loads them before any name is looked
    up, and every process that rebuilds the plan from its record (a spawned rank, a sweep's worker)
    loads them first (lionsim.plugins); run.json records them for a replay."""
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
    DEFAULT_WARMUP where the run measures a time (`measures`), fewer in a run too short for it (at
    least one step is always timed); none on sim with a --compute device, which measures nothing
    (given there, it is refused)."""
    compute_spread: list[str] = field(default_factory=list)
    """Uneven workers: specs multiplying each worker's compute per step (lionsim.steptime.spread:
    lognormal:SIGMA, slow:K:FACTOR, episodes:P:FACTOR:STEPS, trace:FILE.csv); seeded by `seed`.
    On gloo/nccl each rank sleeps to match (its factor - 1) x its measured compute."""
    bucket_mb: float | None = None
    """Overlap bucket, MB (1e6 bytes) of fp32 gradients, as DDP's bucket_cap_mb; None: DDP's 25
    (lionsim.steptime.overlap.DEFAULT_BUCKET_MB). It sizes only the exchanges that run per bucket: on
    sim, under --overlap auto or buckets, of a run whose strategy and transport exchange so, with
    more than one worker; given where no exchange runs per bucket it is refused (check_buckets)."""
    overlap: str = "auto"
    """sim: when each step's exchange runs (lionsim.steptime.overlap): auto (each strategy's reference
    schedule where its transport can run it, else after backward) | buckets (per bucket wherever the
    transport can) | tensors (per parameter tensor wherever the transport can) | none (after
    backward). gloo/nccl send after backward and book what they measured."""
    threads: int = 1
    """torch CPU threads while building the workload and training. One by default: the small workloads' kernels gain
    nothing from more, and with several threads on a busy 2-core machine measured compute
    jumped 10-100x (threads waiting on each other), which swamps the time breakdown."""
    timeout: float | None = None
    """gloo/nccl: seconds a collective or the rendezvous may wait before the run fails; None:
    DEFAULT_TIMEOUT there, and none on sim (which waits on no process: refused there)."""
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
        if self.timeout is None and acts("timeout", DEFAULT_TIMEOUT, self.backend, self.compute):
            self.timeout = DEFAULT_TIMEOUT
        self._default_warmup()
        self._canonical_names()

    @property
    def measures(self) -> bool:
        """Whether the run measures any time --warmup-steps could leave out: gloo/nccl (comm), or
        --compute measured (the codec and update on this machine); sim on a device models them all: where
        a warm-up acts (lionsim.backends.scope)."""
        return acts("warmup_steps", 1, self.backend, self.compute)

    def _default_warmup(self) -> None:
        """--warmup-steps unless given: DEFAULT_WARMUP, fewer in a run too short to time a step after
        it; none where nothing is measured."""
        from lionsim.timing import DEFAULT_WARMUP

        if self.warmup_steps is None and isinstance(self.steps, int) and self.measures:
            self.warmup_steps = max(0, min(DEFAULT_WARMUP, self.steps - 1))

    def _canonical_names(self, registries: bool = False) -> None:
        """Workload and network preset in their listed spelling (`MLP` -> `mlp`, `10GbE` -> `10gbe`),
        so run.json and steps.csv record one spelling; a profile file path, or an unknown name
        (which validate and load_network reject), stays as given. A FILE.py:FUNC workload gets its
        file's absolute path, so a resume or a rank in another directory imports the same file.
        A built-in workload's name waits for `registries` (validate: the registry imports torch)."""
        spec = isinstance(self.workload, str) and is_spec(self.workload)
        if spec and Path(self.workload.rpartition(":")[0]).is_file():  # a missing one: validate says so
            self.workload = parse_spec(self.workload, "--workload").text
        if registries and isinstance(self.workload, str):
            from lionsim.workloads import WORKLOADS, canonical_workload

            if self.workload in WORKLOADS or is_spec(self.workload):
                self.workload = canonical_workload(self.workload)
        if isinstance(self.network, (str, os.PathLike)):
            self.network = canonical_network(self.network)
        if isinstance(self.compute, str) and self.compute.strip().lower() == MEASURED:  # as a device's name, any case
            self.compute = MEASURED
        elif isinstance(self.compute, str) and is_device_file(self.compute):  # recorded as plug-ins are: absolute
            self.compute = str(Path(self.compute).resolve())
        if isinstance(self.momentum_sync, str) and self.momentum_sync.strip().lower() != self.momentum_sync:
            self.momentum_sync = self.momentum_sync.strip().lower()  # one spelling in run.json (Every:10)

    def check_plain(self) -> ComputeSpread | None:
        """The checks that need no torch (the numbers, the hyperparameters, the workload's name, the
        data split, the momentum sync and its tensors, the evaluation's samples, the network, the
        device, the backend's layout, the overlap bucket, the compute spread): `validate` makes
        them first, so a bad value among them is refused in a moment, before torch loads. Returns
        --compute-spread parsed (None: none given), which the plan runs with (`checked`): parsing
        it is its check, and a trace:FILE is read once."""
        self._canonical_names()
        self._default_warmup()
        for name, value, low, top, accepted in (
                ("workers", self.workers, 1, MAX_WORKERS, WORKERS), ("batch-size", self.batch_size, 1, None, AT_LEAST_1),
                ("steps", self.steps, 1, MAX_STEPS, STEPS), ("eval-every", self.eval_every, 1, MAX_STEPS, EVERY_STEPS),
                ("threads", self.threads, 1, MAX_THREADS, THREADS),
                ("warmup-steps", self.warmup_steps, 0, None, AT_LEAST_0), ("seed", self.seed, 0, MAX_SEED, SEED)):
            if value is not None and not (low <= value and (top is None or value <= top)):
                raise LionsimError(refusal(f"--{name}", value, accepted))
        _check_hyper(lambda key: f"--{key.replace('_', '-')}", self.lr, self.weight_decay, self.betas)
        if self.target_loss is not None and not (math.isfinite(self.target_loss) and self.target_loss > 0):
            raise LionsimError(refusal("--target-loss", self.target_loss, TARGET_LOSS))
        if self.timeout is not None:
            check_timeout(self.timeout)
        if self.backend not in BACKENDS:
            raise LionsimError(f"unknown backend {self.backend!r}; choose from: {', '.join(BACKENDS)}")
        if self.ranks is not None and self.ranks < 1:  # 0 would read as "not given" where ranks default
            raise LionsimError(refusal("--ranks", self.ranks, span(1, f"--workers ({self.workers:,})", whole=True)))
        if isinstance(self.overlap, str):
            self.overlap = self.overlap.strip().lower()
        overlap = OverlapConfig(mode=self.overlap, bucket_mb=self.bucket_mb).mode  # fails on a bad mode or bucket size
        for scope in SCOPES:  # each value checked above first: then where it acts
            value = getattr(self, scope.key)
            if not scope.acts(value, self.backend, self.compute):
                raise LionsimError(scope.refuse(value, self.backend, self.compute))
        # where a warm-up applies at all (above), then how many steps it may take
        if self.warmup_steps is not None and self.warmup_steps >= self.steps:
            raise LionsimError(refusal("--warmup-steps", self.warmup_steps, span(0, self.steps - 1, whole=True),
                                       f"a run of {plural(self.steps, 'step')} would have no timed step left"))
        check_workload_name(self.workload)  # a spec's file and function: validate imports them
        parse_split(self.data_split)
        MomentumSync.parse(self.momentum_sync)
        TensorSelection.parse(self.sync_tensors)
        if self.sync_tensors != "all" and self.momentum_sync == "never":
            raise LionsimError(f"--sync-tensors {self.sync_tensors} needs --momentum-sync every:K or schedule:K")
        self.eval_samples = parse_eval_samples(self.eval_samples)
        if self.traits is not None:
            from lionsim.network import TRAITS

            self.traits = TRAITS.canonical(self.traits)
        net = network_for(self.network, traits=self.traits, backend=self.backend,
                          library=device_library(self.compute))  # a bad profile fails before any work
        check_profile_device(self.network, net)  # as estimate and comm: its traits follow the device
        check_workers(self.workers, net.workers_per_node, net.name)  # before --out is looked at
        if self.compute != MEASURED and is_device_file(self.compute):
            get_device(self.compute, "--compute")  # a bad file: one line naming it and the option
        elif self.compute != MEASURED and self.compute not in DEVICES:
            near = did_you_mean(self.compute, [MEASURED, *DEVICES.names()])
            raise LionsimError(f"bad --compute {self.compute!r}; accepted: {MEASURED}, a device: {device_choices()}, "
                               f"or a device file FILE.toml of its datasheet (docs/clusters.md){near}")
        if self.bucket_mb is not None and overlap in ("none", "tensors"):
            how = "tensor by tensor" if overlap == "tensors" else "after backward"
            raise LionsimError(f"--bucket-mb {self.bucket_mb:g} sizes per-bucket exchanges and --overlap "
                               f"{overlap} runs every exchange {how}; accepted with --overlap auto or buckets")
        spread = ComputeSpread.parse(self.compute_spread, self.seed)  # fails on a bad spec, a bad trace
        if spread is not None:
            spread.check(self.workers)
        for key, values in self.hyper.items():
            unknown = sorted(set(values) - set(HYPER_KEYS))
            if unknown:
                raise LionsimError(f"bad hyper.{key}: unknown key{'s' if len(unknown) > 1 else ''} "
                                   f"{', '.join(map(repr, unknown))}; accepted: {', '.join(HYPER_KEYS)}"
                                   f"{did_you_mean(unknown[0], HYPER_KEYS)}")
            _check_hyper(lambda name, key=key: f"hyper.{key}.{name}", values.get("lr"), values.get("weight_decay"),
                         values.get("betas"))
        return spread

    def validate(self) -> list[RunSpec]:
        """Every check, once (`checked`); the runs."""
        return self.checked()[0]

    def checked(self) -> tuple[list[RunSpec], ComputeSpread | None]:
        """Every check, once: check_plain's, then those that read the registries (plug-ins loaded
        first, strategies, their options, the workload: these import torch); the runs, and
        --compute-spread as check_plain parsed it (lionsim.config.planning builds the plan with it).
        A bad strategy or transport name is refused before torch loads too (lionsim.name_table)."""
        spread = self.check_plain()
        from lionsim.name_table import check_runs
        from lionsim.plugins import load_plugins

        self.plugins = load_plugins(self.plugins)  # before any strategy name is looked up
        default = tuple(self.strategies) == DEFAULT_STRATEGIES  # none given (bench_cmd), or the same set named
        source = "bench's default strategies" if default else None
        check_runs(list(self.strategies), self.transport, source)
        from lionsim.aggregators import check_tie
        from lionsim.reports.summary import pick_baseline
        from lionsim.runs import parse_runs
        from lionsim.strategies import STRATEGIES, momentum_strategies
        from lionsim.strategies.core.given import check_given
        from lionsim.training.memory import check_model_fits
        from lionsim.workloads import check_workload

        self._canonical_names(registries=True)
        runs = parse_runs(list(self.strategies), self.transport, source)
        pick_baseline([r.label for r in runs], [r.strategy for r in runs], self.baseline)  # before any training
        check_tie(self.tie)
        if self.tie != "zero" and not any("tie" in r.strategy_class.reads for r in runs):
            readers = ", ".join(name for name, cls in STRATEGIES.items() if "tie" in cls.reads)
            raise LionsimError(f"--tie {self.tie} applies to {readers} (the strategies that read it) and no run is one of them")
        if self.momentum_sync != "never" and not any(r.strategy_class.has_momentum_sync for r in runs):
            raise LionsimError(f"--momentum-sync {self.momentum_sync} applies to strategies with per-worker momentum "
                               f"and none of these runs has it; accepted: {', '.join(momentum_strategies())}")
        for key, value in (("lr", self.lr), ("weight_decay", self.weight_decay), ("betas", self.betas)):
            if value is not None and all(key in r.strategy_class.ignores for r in runs):
                names = sorted({r.strategy for r in runs})
                raise LionsimError(f"--{key.replace('_', '-')} applies to none of these runs: "
                                   f"{', '.join(names)} {'takes' if len(names) == 1 else 'take'} no {key}")
        check_given(self.options, [r.strategy for r in runs])
        self.check_buckets(runs)
        labels = {r.label for r in runs} | {r.strategy for r in runs}
        for key, values in self.hyper.items():
            if key not in labels:
                raise LionsimError(f"bad hyper.{key}: it names no run of this bench; accepted: its runs "
                                   f"({', '.join(sorted({r.label for r in runs}))}) or their strategies' names"
                                   f"{did_you_mean(key, labels)}")
            ignored = [name for name in values if all(name in r.strategy_class.ignores for r in runs
                                                      if key in (r.label, r.strategy))]
            if ignored:
                taken = [name for name in HYPER_KEYS if name not in ignored and name not in
                         {n for r in runs if key in (r.label, r.strategy) for n in r.strategy_class.ignores}]
                raise LionsimError(f"bad hyper.{key}.{ignored[0]}: {key} takes no {ignored[0]}; accepted: "
                                   f"{', '.join(taken) or 'none of ' + ', '.join(HYPER_KEYS)}")
        check_model_fits(self.workload_config())  # a user's model, counted on the meta device, before it is built
        check_workload(self.workload_config())  # a user's workload: its pieces checked before anything is written
        return runs, spread

    def bucketed(self, runs: list[RunSpec]) -> list[RunSpec]:
        """The runs whose exchanges --bucket-mb sizes: per bucket (OverlapConfig.buckets), on sim,
        with more than one worker (one worker exchanges nothing)."""
        from lionsim.transports import TRANSPORTS

        if self.backend != "sim" or self.workers < 2:
            return []
        overlap = OverlapConfig(mode=self.overlap)
        return [r for r in runs if overlap.buckets(TRANSPORTS.get(r.transport), r.strategy_class)]

    def check_buckets(self, runs: list[RunSpec]) -> None:
        """A --bucket-mb given where no run exchanges per bucket is refused (it would change nothing)."""
        if self.bucket_mb is None or self.bucketed(runs):
            return
        why = ("1 worker exchanges nothing" if self.workers < 2 else
               f"under --overlap {self.overlap} {', '.join(r.label for r in runs)} "
               f"{'exchanges' if len(runs) == 1 else 'exchange'} after backward (`lionsim strategies` lists each "
               "run's overlap under auto; --overlap buckets runs per bucket wherever the transport can)")
        raise LionsimError(f"--bucket-mb {self.bucket_mb:g} sizes per-bucket exchanges and no run here has one: {why}")

    def strategy_config(self, run: RunSpec | None = None) -> StrategyConfig:
        """A run's hyperparameters: every StrategyConfig field this config names too, with the
        run's own `hyper` table (by label, else by strategy name) winning."""
        from lionsim.strategies import StrategyConfig
        from lionsim.strategies.core.given import options_for

        given = {f.name: getattr(self, f.name) for f in fields(StrategyConfig) if hasattr(self, f.name)}
        if run is not None and not run.strategy_class.has_momentum_sync:
            given["momentum_sync"] = "never"  # an option of some strategies applies to those it fits
        if run is not None:
            own = self.hyper.get(run.label, self.hyper.get(run.strategy, {}))
            given.update({k: tuple(v) if k == "betas" else v for k, v in own.items()})
        given["options"] = dict(self.options) if run is None else options_for(self.options, run.strategy)
        return StrategyConfig(**given)

    def workload_config(self) -> WorkloadConfig:
        from lionsim.workloads import WorkloadConfig

        return WorkloadConfig(name=self.workload, workers=self.workers, batch_size=self.batch_size, seed=self.seed,
                              data=self.data, data_split=self.data_split, size=self.model_size,
                              eval_samples=self.eval_samples)

    def to_dict(self) -> dict:
        """Every option, strategy options flat by flag key (None: not given) and `opt` (NAME.FIELD=VALUE)."""
        d = asdict(self)
        from lionsim.plugins import foreign_strategies
        from lionsim.strategies.core.given import flat_options

        d["data"] = None if self.data is None else str(self.data)
        options = d.pop("options")
        return {**d, **flat_options(options, foreign_strategies(self.plugins))}

    @classmethod
    def from_dict(cls, d: dict) -> BenchConfig:
        """The inverse of to_dict (a sweep.json's or run.json's options)."""
        from lionsim.strategies.core.given import split_options

        plain, options = split_options(d)
        return cls(**plain, options=options)


def _check_hyper(name: Callable[[str], str], lr, weight_decay, betas) -> None:
    """lr, weight decay and betas (None: not given) meet one set of rules, whether they come
    from the flags or from a run's own hyper table; `name(key)` says where, for the message."""
    for key, value, accepted in (("lr", lr, LR), ("weight_decay", weight_decay, WEIGHT_DECAY)):
        if value is not None and not (accepted(value) and not beyond_float32(value)):
            raise LionsimError(accepted.refusal(name(key), value, beyond_float32(value) if accepted(value) else ""))
    if betas is not None and not (isinstance(betas, (list, tuple)) and len(betas) == 2
                                  and all(is_number(b) and 0 <= b < 1 for b in betas)):
        raise LionsimError(f"bad {name('betas')} {betas!r}; accepted: two numbers, each {BETA}")
