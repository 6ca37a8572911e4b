"""The strategy template: what a worker does with its gradient, and how the replica moves.

A training step reads top to bottom (lionsim.engine.train_step):

    grads [w, P] -> strategy.encode (local update rule, quantize) -> transport.aggregate
    (collective, decode, vote) -> strategy.apply (update the replica) -> strategy.sync
    (optional momentum sync) -> cost of every collective issued

Strategies fill in `encode` and `apply` and hold their state in [w, P] tensors (one row per
worker this process holds), so no step loops over workers in Python. The params the template
passes is the one shared replica; a strategy whose replicas differ between syncs (local SGD,
DiLoCo) holds its workers' own as `replicas` [w, P] (the loop computes each worker's gradient
at its row) and returns no payload on a step between syncs (nothing is sent, apply gets None).
"""

from __future__ import annotations

import copy
import sys
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, fields, replace
from fractions import Fraction
from typing import ClassVar

import torch
from torch import Tensor

from lionsim.backends import Comm
from lionsim.errors import LionsimError
from lionsim.forms import MomentumSync, TensorSelection
from lionsim.network.calls import CollectiveCall
from lionsim.registry import Registry
from lionsim.steptime.strategy_bytes import StrategyBytes
from lionsim.strategies.core.form import NoOptions, resolve_options, tuning_for
from lionsim.strategies.core.layout import ParamLayout
from lionsim.strategies.core.inner import InnerOptimizer
from lionsim.timing import Clock
from lionsim.transports import AFTER_BACKWARD, TRANSPORTS, Payload, PayloadSpec

WARMUP = "warm-up"
"""Strategy.phase of a step that trains as another method before the strategy's own (a full-precision
start): a time to target made of such steps alone is its warm-up's, which estimate says."""
NEVER = sys.maxsize
"""Strategy.next_change where what a step does never changes again: a step no run reaches."""


@dataclass(frozen=True, kw_only=True, slots=True)
class StrategyConfig:
    """Hyperparameters; None means the strategy's own default (see `lionsim strategies`)."""

    lr: float | None = None
    """Learning rate."""
    weight_decay: float | None = None
    """Decoupled weight decay (L2 for sgdm, terngrad and dgc, as their papers)."""
    betas: tuple[float, float] | None = None
    """(beta1, beta2) of Lion/AdamW; beta1 is the momentum of signum, sgdm, terngrad, dgc."""
    momentum_sync: str = "never"
    """Lion family: never | every:K | schedule:K."""
    sync_tensors: str = "all"
    """Lion family: the tensors a momentum sync averages: all | min-numel:N | GLOB[,GLOB]."""
    seed: int = 0
    """Seed of stochastic quantizers (terngrad) and of the random tie rule."""
    tie: str = "zero"
    """MaVo tie rule: zero (sign(0) = 0) | alternate (+1/-1 by step) | random (a seeded coin)."""
    workload: str | None = None
    """Workload trained: picks the measured defaults of the (strategy, workload) pair (its `tuning`)."""
    options: dict[str, object] = field(default_factory=dict)
    """Strategy options given (None: not given), by flag key (`demo_topk`: every strategy with that
    flag) or `NAME.FIELD` (`demo.topk`: that strategy's); each strategy resolves its own
    (lionsim.strategies.core.form.resolve_options)."""

    def to_dict(self) -> dict:
        return {**{f.name: getattr(self, f.name) for f in fields(self)}, "options": dict(self.options)}


@dataclass(frozen=True, slots=True)
class Hyper:
    """A strategy's default hyperparameters, tuned for lionsim's small CPU workloads (about
    100 steps). The Lion authors advise an lr 3-10x below AdamW's; on the default vit bench
    Lion at 1e-3 reached 51% eval accuracy against 79% at 3e-3 (AdamW at 3e-3: 79%), so these
    tiny, short runs get the same lr 3e-3 and weight decay 0.01 for both. The papers' lr 1e-4
    suits large models and long runs: pass --lr/--weight-decay for those."""

    lr: float
    weight_decay: float
    betas: tuple[float, float]


class Strategy(ABC):
    name: ClassVar[str]
    summary: ClassVar[str]
    payload_kind: ClassVar[str]
    default_transport: ClassVar[str]
    defaults: ClassVar[Hyper]
    known_as: ClassVar[tuple[str, ...]] = ()
    """What papers and users call it besides its name ("distributed-lion"), lower case with hyphens:
    an unknown name equal to one is answered with this strategy (Registry.suggest), never run as it."""
    has_momentum_sync: ClassVar[bool] = False
    authors_warmup: ClassVar[tuple[float, float, str] | None] = None
    """Where its warm-up option (acts=SETS_WARMUP) has a default sized for lionsim's 100-step bench
    and its authors size theirs by the run: (lowest, highest share of a run's steps, who says so).
    A whole run priced with the default below that share gets a note (strategies.core.unacted)."""
    shape_dependent: ClassVar[bool] = False
    """What it sends depends on its tensors' shapes (PowerSGD's matrices, DeMo's DCT chunks), so
    `lionsim estimate` needs a --model preset's shapes (Strategy.spec_for)."""
    after_step: ClassVar[bool] = False
    """Its exchange needs the step's result (DiLoCo's pseudo-gradient exists only after the inner
    step), so its reference implementation exchanges after backward (lionsim.steptime.overlap)."""
    step_in_backward: ClassVar[bool] = False
    """An after_step strategy whose step is elementwise per bucket: an implementation that runs it
    in backward, on each bucket as backward produces it (PyTorch's optimizer-in-backward hooks),
    can exchange the bucket's result then, and `--overlap buckets` prices that (the DiLoCo papers'
    simulations reduce the outer gradients over the backward pass: lionsim.steptime.overlap)."""
    schedule: ClassVar[str] = AFTER_BACKWARD
    """When its reference implementation exchanges (lionsim.transports.SCHEDULES): PER_BUCKET from a
    backward hook (a DDP comm hook, Horovod's per-tensor hooks), AFTER_BACKWARD in the optimizer's
    step. `--overlap auto` runs that where its transport can (Transport.overlap), else after
    backward (lionsim.steptime.overlap). Say in a comment which implementation it follows. The
    default, after backward, is the safe one for a strategy that says nothing: its time is never hidden."""
    reads: ClassVar[tuple[str, ...]] = ()
    """StrategyConfig fields it reads besides lr, weight decay, betas, seed, its Options and the
    momentum sync (`lionsim strategies --matrix` lists them; bench refuses --tie where no run reads it)."""
    ignores: ClassVar[tuple[str, ...]] = ()
    """Common hyperparameters (lr, weight_decay, betas) it has no use for (signSGD has no moments to
    take betas): bench refuses them where no run reads them, and in a run's own hyper table."""
    pricing_only: ClassVar[tuple[str, ...]] = ()
    """Options fields that change what is priced (estimate, the step time) but not what is trained;
    each one's help says "pricing only" (tests/strategies/test_options_act.py holds every other option to acting)."""
    Options: ClassVar[type] = NoOptions
    """Its own options: a frozen kw_only dataclass of lionsim.strategies.core.form.option fields, each
    with a docstring (flags, config keys, `--opt NAME.FIELD=VALUE` and the matrix come from it)."""
    tuning: ClassVar[dict[str, dict]] = {}
    """workload -> the Hyper fields (lr, weight_decay, betas) and Options fields measured better
    there than the defaults, each entry with its measurement in a comment."""
    bytes: ClassVar[StrategyBytes | None] = None
    """What its own kernels move per parameter at a step that exchanges (lionsim.steptime.passes
    adds its payload, its transport's packing and the aggregate); None: the modelled compute cannot
    price it, so estimate, and bench and sweep on a --compute device, refuse it (lionsim.steptime.undeclared)."""
    local_step_bytes: ClassVar[float | None] = None
    """Bytes per parameter of a local step (no exchange) of a strategy with sync_every > 1; as its
    kernels, a local step runs its rule's step (StrategyBytes.rule_step) alone. None: the modelled
    compute refuses a run of it with more than one step per sync (lionsim.steptime.undeclared)."""
    replicas: Tensor | None = None
    """Per-worker parameters [w, P] for a strategy whose replicas differ between syncs (local SGD,
    DiLoCo): each worker computes its gradient on its own row. None: every worker computes on
    the shared replica (the fast path of every strategy that keeps replicas identical)."""

    def __init__(self, cfg: StrategyConfig, layout: ParamLayout, comm: Comm) -> None:
        self.cfg = cfg
        self.layout = layout
        self.workers = comm.world_size  # W: workers voting
        self.local = comm.local_workers  # w: rows of state this process holds
        self.hyper = self.resolve_hyper(cfg)
        self.opts = self.resolve_options(cfg)
        """Its Options, resolved for this run."""
        self.sync_rule = MomentumSync.parse(cfg.momentum_sync)
        picked = TensorSelection.parse(cfg.sync_tensors).picks(layout.names, layout.numels)
        if not all(picked) and self.has_momentum_sync and self.sync_rule.mode == "never":
            raise LionsimError(f"--sync-tensors {cfg.sync_tensors} picks tensors for a momentum sync; "
                               f"give --momentum-sync every:K or schedule:K too")
        # flat positions whose momentum a sync averages (None: all of them), from the picked segments'
        # bounds rather than nonzero() of a mask, whose size depends on data (so it cannot run on meta)
        self.sync_index = None if all(picked) else torch.cat(
            [torch.arange(s.start, s.stop, device=layout.device) for s, on in zip(layout.slices, picked) if on])
        self.sync_numel = layout.numel if self.sync_index is None else int(self.sync_index.numel())
        if self.sync_rule.mode != "never" and not self.has_momentum_sync:
            raise LionsimError(
                f"--momentum-sync {cfg.momentum_sync} needs a strategy with per-worker momentum; "
                f"{self.name} has none (accepted: {', '.join(momentum_strategies())})"
            )

    @classmethod
    def defaults_for(cls, workload: str | None) -> Hyper:
        """Its own defaults with the measured overrides of (strategy, workload) (its `tuning`)."""
        from dataclasses import fields, replace

        hyper = {f.name for f in fields(Hyper)}
        return replace(cls.defaults, **{k: v for k, v in cls.tuned(workload).items() if k in hyper})

    @classmethod
    def tuned(cls, workload: str | None) -> dict:
        """Its measured overrides for `workload` (its `tuning`)."""
        return tuning_for(cls, workload)

    @classmethod
    def resolve_options(cls, cfg: StrategyConfig):
        """Its Options for this run: given, else tuned for the workload, else the defaults; checked."""
        return resolve_options(cls, cls.name, cfg.options, cls.tuned(cfg.workload))

    @classmethod
    def extra_rows(cls, cfg: StrategyConfig) -> int:
        """fp32 [w, P] rows per worker it holds beyond what lionsim.training.memory counts for
        every strategy (gradients, one state row, the payload, a temporary): replicas and their
        inner optimizer's state."""
        return 0

    @classmethod
    def steps_per_sync(cls, cfg: StrategyConfig) -> int:
        """sync_every of a run with `cfg`, without building the strategy."""
        return 1

    @property
    def sync_every(self) -> int:
        """Steps per exchange: 1, or H for a strategy that takes H local steps per sync."""
        return 1

    @property
    def send_rate(self) -> Fraction:
        """Exchanges per step, exactly: 1 / sync_every (Streaming DiLoCo's P fragments in H steps:
        P / H, where P need not divide H). `estimate` prices a step as this share of a sending step
        and the rest a local one."""
        return Fraction(1, self.sync_every)

    def spec_scaled(self, params: int, tensors: int) -> PayloadSpec:
        """What it would send for `params` parameters in `tensors` tensors of unknown shapes
        (`lionsim estimate --params`): its payload at that size (a sparse strategy says its k)."""
        return replace(self.payload_spec(), numel=params, k=0)

    def spec_for(self, shapes: list[tuple[int, ...]]) -> PayloadSpec:
        """What it would send for tensors of these shapes (shape_dependent strategies; lionsim.estimate)."""
        raise NotImplementedError(f"{self.name} sends the same for any shapes: its payload_spec scaled")

    def short_bench_default(self) -> str:
        """Where this run took a default measured on lionsim's short bench that its authors set otherwise
        at scale (a local-step method's H): their value and its source, which `estimate` prints under its
        table; "" where it took none (the default here)."""
        return ""

    def scale_note(self) -> str:
        """bench's line where this run took a default tuned for lionsim's short runs that its authors set
        otherwise at scale, given or not by the workload (a local-step method's H); "" here."""
        return ""

    def built_note(self) -> str:
        """One line where this run was built otherwise than its options read, for the notes under
        bench's and estimate's tables (Streaming DiLoCo's default fragments on a model of fewer
        tensors); "" here."""
        return ""

    def capped_note(self, shapes: list[tuple[int, ...]] | None = None) -> str:
        """One line where an option asks for more than it can act on and is capped (a top-k above
        what a chunk holds: lionsim.strategies.core.capped), for the notes under bench's and
        estimate's tables; "" here. `shapes`: the tensors priced (estimate's model), None: its own."""
        return ""

    def kernel_bytes(self) -> StrategyBytes | None:
        """Its bytes as this instance runs them: Strategy.bytes, with the optimizer steps its options
        choose (an --inner-optimizer) where they depend on them."""
        return self.bytes

    def update_flops(self, shapes: list[tuple[int, ...]]) -> float:
        """FLOPs one worker's step spends beyond forward and backward and the memory-bound passes, for
        tensors of these shapes (Muon's Newton-Schulz, Dion's power iteration): `estimate` adds them
        to the update at the device's peak x mfu. 0: its rule and update are elementwise."""
        return 0.0

    def tensor_names(self, shapes: list[tuple[int, ...]]) -> list[str] | None:
        """The names of the tensors of `shapes` (spec_for's, update_flops'), where known: estimate builds
        the strategy on a layout named as the model's tensors when the model says them (a preset, a
        counted module); None otherwise (--params: a stand-in layout, ParamLayout.named False)."""
        names = list(self.layout.names)
        return names if self.layout.named and len(names) == len(shapes) else None

    def update_launches(self, shapes: list[tuple[int, ...]]) -> int:
        """Kernels that matrix work launches a step (Muon's Newton-Schulz: 44 a matrix): `estimate` prices
        update_flops at no less than these x the device's kernel_s. 0: not counted, no floor."""
        return 0

    def per_parameter_state(self) -> list[Tensor]:
        """Every float state tensor indexed by parameter on its last dimension ([P] or [w, P]: momenta,
        errors, replicas), found among the strategy's attributes, in lists of them and in the
        optimizers it holds: what a step must leave alone for a tensor nobody has a gradient for."""
        found: list[Tensor] = []

        def visit(value) -> None:
            if isinstance(value, Tensor):
                if value.is_floating_point() and value.dim() >= 1 and value.shape[-1] == self.layout.numel:
                    found.append(value)
            elif isinstance(value, (list, tuple)):
                for item in value:
                    visit(item)
            elif isinstance(value, InnerOptimizer):
                visit(value.state)
                visit(value.steps)

        for value in vars(self).values():
            visit(value)
        return found

    def state_rows(self) -> float:
        """Rows of P floats one worker holds as optimizer state: every per_parameter_state tensor
        (momenta, AdamW's two moments, error-feedback buffers, local replicas and their inner
        optimizer's state), a shared [P] once and a [w, P] one row per worker, less the per-position
        step counters lionsim keeps for AdamW's bias correction (frameworks count steps per tensor:
        nothing per parameter). Replicas made by start() count too: where it has not run, it runs on
        a shallow copy (this strategy left as it was; P-sized: meant for estimate's stand-in layout,
        lionsim.estimate.probe). `estimate`'s memory check reads it (lionsim.estimate.memory)."""
        held = self
        if self.replicas is None:
            held = copy.copy(self)
            held.start(torch.zeros(self.layout.numel, device=self.layout.device))
        counters = {id(value.steps) for value in vars(held).values() if isinstance(value, InnerOptimizer)}
        if isinstance(getattr(held, "steps", None), Tensor):
            counters.add(id(held.steps))
        rows = 0.0
        for t in held.per_parameter_state():
            if id(t) in counters:
                continue
            rows += t.numel() / t.shape[-1] / (self.local if t.dim() > 1 and t.shape[0] == self.local else 1)
        return rows

    def phase(self, step: int) -> str:
        """The kind of work (1-based) step `step` does, where it changes during a run (a full-precision
        warm-up, a local step, a sync): a device's kernels are counted once per phase."""
        return "steady"

    def run_spec(self, step: int, steady: PayloadSpec) -> PayloadSpec | None:
        """What (1-based) step `step` of a whole run sends, given the steady state's spec at the
        model's size (lionsim estimate --steps prices each kind of step once): the steady spec,
        unless the strategy's phases differ (a warm-up sends its gradient dense; a local step
        sends nothing: None). A pure function of the step: it reads no training state."""
        return steady

    def sent_payloads(self, spec: PayloadSpec) -> tuple[PayloadSpec, ...]:
        """The payloads encode really sends on the steps run_spec gives `spec` for: `spec` itself. A
        strategy whose run_spec prices a step by a stand-in (streaming-diloco: the mean fragment, so
        that a step costs the mean send) names each payload it stands for: the plan-time walk reports
        these (lionsim.strategies.core.sends), so the transport is asked about, and bench --calibrate
        measures, the sizes training sends."""
        return (spec,)

    def next_change(self, step: int) -> int:
        """A step after `step` such that every step before it, from `step` on, does what `step`
        does: sends the same (run_spec), calls the same (extra_calls), in the same phase. A run's
        steps are counted, and what it sends walked, from change to change, not step by step
        (lionsim.strategies.core.schedule). NEVER here, where all three are the same at every
        step. A class that overrides any of them states its own (step + 1 is always right): one
        stated above that override is not trusted, and every step is walked (a plug-in's)."""
        return NEVER

    def repeats(self) -> tuple[int, int] | None:
        """(w, p): past step w, step s + p does what step s does (run_spec, extra_calls and phase,
        compared as values): a warm-up's length, a sync period. A run is counted by whole periods,
        and what it sends walked to step w + p, not to its last (lionsim.strategies.core.schedule);
        None where no period holds (momentum syncs whose gaps grow). Trusted as next_change is."""
        return (0, 1)

    def start(self, params: Tensor) -> None:
        """Called once with the replica params [P] before the first step (replicas are made here)."""

    @classmethod
    def resolve_hyper(cls, cfg: StrategyConfig) -> Hyper:
        """The hyperparameters a run uses: cfg's where given, else the defaults for its workload."""
        base = cls.defaults_for(cfg.workload)
        return Hyper(
            lr=base.lr if cfg.lr is None else cfg.lr,
            weight_decay=base.weight_decay if cfg.weight_decay is None else cfg.weight_decay,
            betas=base.betas if cfg.betas is None else tuple(cfg.betas),
        )

    def zeros(self, rows: int | None = None) -> Tensor:
        """A [w, P] (or [rows, P]) float32 state buffer on the parameters' device."""
        return torch.zeros(self.local if rows is None else rows, self.layout.numel, device=self.layout.device)

    @abstractmethod
    def payload_spec(self) -> PayloadSpec:
        """What this strategy sends, without data (for pricing and validation)."""

    @abstractmethod
    def encode(self, grads: Tensor, params: Tensor, comm: Comm, clock: Clock) -> Payload | None:
        """Local update rule on grads [w, P]; returns what each worker sends (None: nothing this
        step, a local step)."""

    @abstractmethod
    def apply(self, params: Tensor, aggregate: Tensor | None) -> None:
        """Move the replica params [P] by the aggregate [w, P] (rows are identical; None after a
        local step that sent nothing)."""

    def extra_calls(self, step: int) -> list[CollectiveCall]:
        """Collectives the strategy issues itself at this step (besides the transport's)."""
        return []

    def sync(self, comm: Comm, step: int, clock: Clock) -> None:
        """Optional state synchronization after the update (e.g. momentum averaging)."""


STRATEGIES: Registry[type[Strategy]] = Registry("strategy", entry_points="lionsim.strategies")


def valid_transports(strategy: type[Strategy]) -> list[str]:
    """The registered transports `strategy` can use (hier:T of those that take the prefix too: can_use)."""
    return [name for name, t in TRANSPORTS.items() if strategy.payload_kind in t.carries and t.accepts(strategy)]


def can_use(strategy: type[Strategy], transport: str) -> bool:
    """Whether `strategy` can use the transport named `transport` (registered, or made from a
    prefix such as hier:; an unknown name raises LionsimError with the list)."""
    t = TRANSPORTS.get(transport)
    return strategy.payload_kind in t.carries and t.accepts(strategy)


def momentum_strategies() -> list[str]:
    return [name for name, s in STRATEGIES.items() if s.has_momentum_sync]
