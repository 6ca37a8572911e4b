"""A bench, resolved: the one object below the command.

    command (flags, TOML, run.json) -> BenchConfig (lionsim.config) -> plan(cfg) -> BenchPlan
        -> Runner (lionsim.training.runner: trains every run) -> records
        -> Results (lionsim.training.results: frames, summary, trace, run.json) -> files

The command layer validates its BenchConfig once and resolves it into a BenchPlan
(lionsim.config.planning.plan); everything below reads the plan and nothing else: each run with
its strategy's config, hyperparameters and options, the workload, the network and its library,
the device, the compute spread, the overlap settings, the backend's layout, the summary rule
and the replayable record. Every part is a frozen dataclass (given tables read-only: FrozenMap),
so no layer can change what another reads.

A plan crosses a process boundary (a spawned gloo rank, a sweep's worker process or Ray task)
as its record (`record()`, plain JSON values) and is rebuilt there once (`from_record`), its
plug-ins loaded first: nothing is validated again, and the rebuilt plan equals the original.
A sweep books one training on several networks with `with_network` (dataclasses.replace).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

from lionsim.compute.device_file import get_device
from lionsim.compute import MEASURED, Device, device_library  # MEASURED: importable from here, as it always was
from lionsim.frozen import frozen, thawed
from lionsim.network import Network, network_for
from lionsim.reports.summary import SummaryRule
from lionsim.runs import RunSpec
from lionsim.steptime.overlap import OverlapConfig
from lionsim.steptime.spread import ComputeSpread
from lionsim.strategies import STRATEGIES
from lionsim.strategies.core.base import Hyper, StrategyConfig
from lionsim.strategies.core.given import flat_options, split_options
from lionsim.workloads import WorkloadConfig


@dataclass(frozen=True, slots=True)
class RunPlan:
    """One run (strategy@transport) as it trains."""

    run: RunSpec
    strategy: StrategyConfig
    """What its strategy is built with: the common options, its hyper table, its own options given."""
    hyper: Hyper
    """The hyperparameters it trains with (given, else tuned for the workload, else the defaults)."""
    options: object
    """Its strategy's resolved Options (given, else tuned, else the defaults; checked)."""
    extra_rows: int
    """fp32 [w, P] rows its strategy holds beyond the ones every strategy holds (the memory guard)."""

    @property
    def label(self) -> str:
        return self.run.label

    def record(self) -> dict:
        """What from_record rebuilds it from (plain JSON values)."""
        config = {f.name: getattr(self.strategy, f.name) for f in dataclasses.fields(StrategyConfig)}
        config.update(betas=thawed(config["betas"]), options=thawed(config["options"]))
        return {"strategy": self.run.strategy, "transport": self.run.transport, "config": config,
                "hyper": {"lr": self.hyper.lr, "weight_decay": self.hyper.weight_decay, "betas": list(self.hyper.betas)},
                "options": dataclasses.asdict(self.options), "extra_rows": self.extra_rows}

    @classmethod
    def from_record(cls, d: Mapping) -> RunPlan:
        strategy = STRATEGIES.get(d["strategy"])
        config = dict(d["config"])
        config.update(betas=None if config["betas"] is None else tuple(config["betas"]),
                      options=frozen(config["options"]))
        hyper = d["hyper"]
        return cls(run=RunSpec(d["strategy"], d["transport"]), strategy=StrategyConfig(**config),
                   hyper=Hyper(lr=hyper["lr"], weight_decay=hyper["weight_decay"], betas=tuple(hyper["betas"])),
                   options=strategy.Options(**d["options"]), extra_rows=d["extra_rows"])


@dataclass(frozen=True, slots=True)
class Choices:
    """The runs and strategy options as the command gave them. run.json's `config` records these
    (a replay resolves them again); the RunPlans hold what they resolved to."""

    strategies: tuple[str, ...]
    """`NAME` or `NAME@TRANSPORT` per run, in their registered spelling."""
    transport: str | None
    """Transport for every strategy given without one (where it fits)."""
    lr: float | None
    weight_decay: float | None
    betas: tuple[float, float] | None
    hyper: Mapping[str, Mapping[str, Any]]
    """Per run or strategy: {lr, weight_decay, betas} that win over the options above."""
    momentum_sync: str
    sync_tensors: str
    tie: str
    options: Mapping[str, Any]
    """Strategy options given, by flag key or `NAME.FIELD` (lionsim.strategies.core.given)."""


@dataclass(frozen=True, slots=True)
class Training:
    """How long and how each run trains."""

    steps: int
    """Training steps per run."""
    eval_every: int
    """Evaluate every this many steps (and at the last)."""
    threads: int
    """torch CPU threads while building the workload and training."""
    trace: bool
    """Write trace.json (lionsim.reports.trace)."""


@dataclass(frozen=True, slots=True)
class NetworkPlan:
    """The network a bench is priced on, and the collective library that runs it."""

    spec: str
    """The preset name or profile file as run.json's `config` records it."""
    traits: str | None
    """--traits as given (None: the profile's own, else the backend's)."""
    network: Network
    """The resolved network (lionsim.network.network_for)."""
    given: bool = True
    """False: --network was left at its default (no flag, no config key). On gloo/nccl that
    preset describes no link the collectives crossed, so the reports leave the model's error
    out (lionsim.reports.titles.unchecked_model) rather than compare with another link."""


@dataclass(frozen=True, slots=True)
class BackendPlan:
    """Where collectives run, and how a real group's processes are laid out."""

    name: str
    """sim (one process, modelled), gloo or nccl (real processes, measured)."""
    ranks: int | None
    """gloo/nccl: processes to start (None: the default for the backend, or the launcher's)."""
    timeout: float | None
    """gloo/nccl: seconds a collective or the rendezvous may wait (None on sim: it waits on no process)."""
    iface: str | None
    """gloo/nccl: the network interface the ranks talk over."""
    calibrate: bool
    """gloo/nccl: fit the backend's traits on the run's own group before training."""


@dataclass(frozen=True, slots=True)
class ComputePlan:
    """How compute, encode, decode and update are timed."""

    source: str
    """MEASURED (this machine) or a device preset's name (--compute)."""
    device: Device | None
    """The device whose times are modelled (None: measured)."""
    spread: ComputeSpread | None
    """--compute-spread: uneven workers (lionsim.steptime.spread); None: every worker alike."""


@dataclass(frozen=True, slots=True)
class BenchPlan:
    """A bench, resolved (module doc)."""

    runs: tuple[RunPlan, ...]
    """Every run, in the order it trains (and is booked, summarised, listed)."""
    choices: Choices
    """The runs and strategy options as given (the replayable record)."""
    workload: WorkloadConfig
    """What every run trains on: model, data, split, N workers, batch, seed."""
    training: Training
    """Steps, evaluations, threads, the trace."""
    network: NetworkPlan
    """The network and collective library the runs are priced on."""
    backend: BackendPlan
    """sim, or a real group's backend and layout."""
    compute: ComputePlan
    """Measured compute, or a device's; the compute spread."""
    overlap: OverlapConfig
    """How a step's communication may overlap its backward pass (lionsim.steptime.overlap)."""
    rule: SummaryRule
    """How its summary is computed (baseline, target loss, warm-up steps)."""
    plugins: tuple[str, ...]
    """Plug-in files, resolved paths: loaded before a rebuilt plan looks up any name."""

    @property
    def specs(self) -> list[RunSpec]:
        return [r.run for r in self.runs]

    @property
    def labels(self) -> list[str]:
        return [r.label for r in self.runs]

    @property
    def steps(self) -> int:
        return self.training.steps

    @property
    def extra_rows(self) -> int:
        """The hungriest run's extra [w, P] rows (the memory guard sizes the bench by it)."""
        return max((r.extra_rows for r in self.runs), default=0)

    def with_network(self, spec: str) -> BenchPlan:
        """The same bench priced on another network (a sweep books one training per network)."""
        network = network_for(spec, traits=self.network.traits, backend=self.backend.name,
                              library=device_library(self.compute.source))
        return dataclasses.replace(self, network=NetworkPlan(spec=spec, traits=self.network.traits, network=network))

    def with_default_network(self) -> BenchPlan:
        """The same bench, its network marked as --network's default rather than chosen (NetworkPlan.given)."""
        return dataclasses.replace(self, network=dataclasses.replace(self.network, given=False))

    def options(self) -> dict:
        """Every option in `lionsim bench`'s names, as BenchConfig.to_dict gives them: what
        run.json's `config` records (with each run's hyperparameters), what `--resume` compares
        and what every rank checks it shares."""
        from lionsim.plugins import foreign_strategies

        c, w = self.choices, self.workload
        return {
            "workload": w.name, "model_size": w.size, "workers": w.workers, "batch_size": w.batch_size,
            "steps": self.training.steps, "seed": w.seed, "strategies": list(c.strategies), "transport": c.transport,
            "network": self.network.spec, "traits": self.network.traits, "backend": self.backend.name,
            "ranks": self.backend.ranks, "lr": c.lr, "weight_decay": c.weight_decay, "betas": c.betas,
            "hyper": thawed(c.hyper), "momentum_sync": c.momentum_sync, "sync_tensors": c.sync_tensors, "tie": c.tie,
            "plugins": list(self.plugins), "data": None if w.data is None else str(w.data), "data_split": w.data_split,
            "eval_every": self.training.eval_every, "eval_samples": w.eval_samples, "baseline": self.rule.baseline,
            "target_loss": self.rule.target_loss, "compute": self.compute.source,
            "warmup_steps": self.rule.warmup_steps,
            "compute_spread": [s.text for s in self.compute.spread.specs] if self.compute.spread else [],
            "bucket_mb": self.overlap.bucket_mb, "overlap": self.overlap.mode, "threads": self.training.threads, "timeout": self.backend.timeout,
            "iface": self.backend.iface, "calibrate": self.backend.calibrate, "trace": self.training.trace,
            **flat_options(c.options, foreign_strategies(self.plugins)),
        }

    def record(self) -> dict:
        """The plan as plain JSON values: its options, the strategy options as given (`opt` values
        keep their type: the flat form makes them text) and every run as resolved (from_record)."""
        return {"options": self.options(), "given": thawed(self.choices.options), "runs": [r.record() for r in self.runs],
                "network_given": self.network.given}

    @classmethod
    def from_record(cls, record: Mapping) -> BenchPlan:
        """The plan `record()` describes, rebuilt (in another process: its plug-ins loaded first)."""
        from lionsim.plugins import load_plugins

        load_plugins(record["options"].get("plugins"))
        options = record["options"]
        spread = ComputeSpread.parse(options["compute_spread"], options["seed"])  # another process: parsed here once
        plan = build(options, tuple(RunPlan.from_record(r) for r in record["runs"]), record["given"], spread=spread)
        return plan if record.get("network_given", True) else plan.with_default_network()

    def __reduce__(self):
        """Pickled (a spawned rank's or a pool worker's argument) as its record, rebuilt there once."""
        return (BenchPlan.from_record, (self.record(),))


def build(options: Mapping, runs: tuple[RunPlan, ...], given: Mapping | None = None, *,
          spread: ComputeSpread | None) -> BenchPlan:
    """The plan of validated options (BenchConfig.to_dict's form) and their resolved runs; `given`:
    the strategy options as given (None: read back from `options`' flat form); `spread`: their
    --compute-spread parsed (by the checks: BenchConfig.checked; by from_record in a rank), so a
    trace:FILE is read once a process. The command's planning and a rebuilt record both come
    here, so both give the same plan."""
    d, flat = split_options(options)
    given = flat if given is None else given
    seed = d["seed"]
    return BenchPlan(
        runs=tuple(runs),
        choices=Choices(strategies=tuple(d["strategies"]), transport=d["transport"], lr=d["lr"],
                        weight_decay=d["weight_decay"], betas=None if d["betas"] is None else tuple(d["betas"]),
                        hyper=frozen(d["hyper"]), momentum_sync=d["momentum_sync"], sync_tensors=d["sync_tensors"],
                        tie=d["tie"], options=frozen(given)),
        workload=WorkloadConfig(name=d["workload"], workers=d["workers"], batch_size=d["batch_size"], seed=seed,
                                data=d["data"], data_split=d["data_split"], size=d["model_size"],
                                eval_samples=d["eval_samples"]),
        training=Training(steps=d["steps"], eval_every=d["eval_every"], threads=d["threads"], trace=d["trace"]),
        network=NetworkPlan(spec=d["network"], traits=d["traits"],
                            network=network_for(d["network"], traits=d["traits"], backend=d["backend"],
                                                    library=device_library(d["compute"]))),
        backend=BackendPlan(name=d["backend"], ranks=d["ranks"], timeout=d["timeout"], iface=d["iface"],
                            calibrate=d["calibrate"]),
        compute=ComputePlan(source=d["compute"], device=None if d["compute"] == MEASURED else get_device(d["compute"]),
                            spread=spread),
        overlap=OverlapConfig(mode=d.get("overlap", "auto"), bucket_mb=d["bucket_mb"]),
        rule=SummaryRule(baseline=d["baseline"], target_loss=d["target_loss"], warmup_steps=d["warmup_steps"]),
        plugins=tuple(d["plugins"]),
    )
