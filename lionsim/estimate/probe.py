"""What a strategy sends for a model of P parameters, without training or P-sized state.

The strategy itself decides (its payload kind, vote rule, level count, extra collectives):
lionsim builds it on a stand-in layout with one parameter per tensor (T tensors, so the
per-tensor counts are the model's) and N simulated workers, asks it, and scales the
per-parameter counts to P. Nothing of size P (or N) is allocated.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import torch

from lionsim.compute.models import model_choices
from lionsim.errors import LionsimError
from lionsim.estimate.run import at_scale
from lionsim.network import CollectiveCall
from lionsim.runs import RunSpec
from lionsim.strategies import ParamLayout, Strategy, StrategyConfig
from lionsim.strategies.core.given import options_for
from lionsim.strategies.core.momentum_sync import CALL_LABEL as SYNC_LABEL
from lionsim.transports import TRANSPORTS, PayloadSpec, Transport, spec_problem

STEP = 1
"""The (1-based) step whose extra collectives are priced: a steady step; a local-step strategy's
first sync, step H (Strategy.sync_every), instead. A momentum sync is not among them: it is
periodic (Probe.sync_calls)."""


@dataclass(frozen=True, slots=True)
class Probe:
    """A strategy/transport pair's payload for a model of `spec.numel` parameters on N workers."""

    transport: Transport
    spec: PayloadSpec
    extra_calls: tuple[CollectiveCall, ...]
    """The strategy's own collectives at a steady step (e.g. TernGrad's scale maximum), without the
    momentum sync's."""
    sync_every: int = 1
    """Steps per exchange (H for local SGD and DiLoCo; the others exchange every step)."""
    send_rate: Fraction = Fraction(1)
    """Exchanges per step, exactly (Strategy.send_rate: 1 / H; Streaming DiLoCo's P / H)."""
    strategy: Strategy | None = None
    """The strategy built on the stand-in layout: its run_spec / extra_calls / phase say what
    each step of a whole run does (lionsim.estimate.run)."""
    update_flops: float = 0.0
    """FLOPs of its own matrix work per worker and step (Strategy.update_flops; 0 without shapes)."""
    update_launches: int = 0
    """Kernels that matrix work launches per worker and step (Strategy.update_launches)."""
    sync_calls: tuple[CollectiveCall, ...] = ()
    """--momentum-sync every:K: the sync's fp32 all-reduce of the momenta at the model's size, made on
    one step in K (sync_rate); () otherwise: never, or schedule:K, whose gaps grow over the run
    (only a whole run prices it: lionsim.estimate.run)."""
    sync_rate: Fraction = Fraction(0)
    """The steps that sync the momenta, a share of all: 1 / K for every:K."""


@dataclass(frozen=True, slots=True)
class _OneOfMany:
    """What a strategy reads of its communicator when it is built: N workers voting, one of them
    held here (a strategy's state is [w, P]: for N workers at once, 10^8 workers of a 148-tensor
    stand-in asked for 59 GB; the payload depends on N, not on how many are held)."""

    world_size: int
    local_workers: int = 1
    first_worker: int = 0
    ranks: int = 1


def probe(run: RunSpec, *, params: int, tensors: int, workers: int, tie: str = "zero",
          shapes: list[tuple[int, ...]] | None = None, names: list[str] | None = None,
          options: dict | None = None) -> Probe:
    """Build `run`'s strategy on a stand-in layout and read its payload spec for `params` parameters
    (of the tensor `shapes` of a model preset, when known); `options`: strategy options given (by
    flag key or NAME.FIELD)."""
    # named as the model's tensors where known (Strategy.tensor_names: Muon leaves the embeddings to AdamW)
    named = names is not None and len(names) == tensors
    layout = ParamLayout(names=list(names) if named else [f"t{i}" for i in range(tensors)], numels=[1] * tensors,
                         segment_ids=torch.arange(tensors), named=named)
    options = dict(options or {})
    sync = options.pop("momentum_sync", None)  # common to the Lion family; the others are unaffected
    common = {"momentum_sync": sync} if sync is not None and run.strategy_class.has_momentum_sync else {}
    cfg = StrategyConfig(tie=tie, options=options_for(options, run.strategy), **common)
    strategy = run.strategy_class(cfg, layout, _OneOfMany(workers))
    spec = strategy.spec_scaled(params, tensors)  # a sparse strategy's k is its own (dgc: its ratio)
    if strategy.shape_dependent:  # PowerSGD's matrices, DeMo's chunks: only the shapes say
        if shapes is None:
            raise LionsimError(f"{run.strategy} compresses each tensor by its shape: give --model (a preset: "
                               f"{model_choices()}, or FILE.py:FUNC), not --params/--tensors")
        spec = strategy.spec_for(shapes)
    if problem := spec_problem(spec):  # an installed plug-in's (a --plugin file's is refused as it loads)
        raise LionsimError(f"strategy {run.strategy!r}: what it sends is {problem}")
    transport = TRANSPORTS.get(run.transport)()
    transport.check(spec, workers)
    calls = strategy.extra_calls(max(STEP, strategy.sync_every)) if workers > 1 else []
    extra = tuple(c for c in calls if c.label != SYNC_LABEL)
    sync_calls, sync_rate = momentum_sync(strategy, spec, workers)
    return Probe(transport=transport, spec=spec, extra_calls=extra, sync_every=strategy.sync_every,
                 send_rate=strategy.send_rate,
                 strategy=strategy,
                 update_flops=strategy.update_flops(shapes) if shapes else 0.0,
                 update_launches=strategy.update_launches(shapes) if shapes else 0,
                 sync_calls=sync_calls, sync_rate=sync_rate)


def momentum_sync(strategy: Strategy, spec: PayloadSpec, workers: int) -> tuple[tuple[CollectiveCall, ...], Fraction]:
    """(the calls of one momentum sync, the share of steps that make one) under --momentum-sync
    every:K: a sync every K steps costs a step one K-th of it on average, as a local-step
    strategy's exchange every H steps does. The probe's layout holds one parameter a tensor, so
    the sync's all-reduce is scaled to the model's (at_scale). never and schedule:K: none (a
    schedule's gaps grow, so its share depends on the run's length: a whole run prices it)."""
    rule = getattr(strategy, "sync_rule", None)
    if workers < 2 or rule is None or rule.mode != "every":
        return (), Fraction(0)
    calls = tuple(at_scale(c, spec.numel / strategy.layout.numel) for c in strategy.extra_calls(rule.k)
                  if c.label == SYNC_LABEL)
    return calls, Fraction(1, rule.k)


WALKED = 10_000
"""Steps of a run to target walked for its kinds of step where no --steps says its length (its
to-target length is known only at pricing): every warm-up and sync period up to it."""


def probe_resolved(r, run: RunSpec, workers: int | None = None) -> Probe:
    """`run` of a resolved estimate `r` probed on `workers` workers (None: r's): its model, tie rule
    and options, as every pricing of `r` takes them."""
    return probe(run, params=r.params, tensors=r.tensors, workers=r.workers if workers is None else workers,
                 tie=r.tie, shapes=r.shapes, names=r.names, options=r.options)


def issued_calls(r) -> set[tuple[str, str]]:
    """The (op, scope) of every collective the runs of `r` (a resolved estimate) issue on its N
    workers: each steady step's transport plan and own calls, and with a whole run (--steps, --tokens,
    --from-run) every kind of step it has (a dense warm-up, a momentum sync). The scope (calls.py:
    world, intra, inter) says whether NCCL's model or lionsim's plans price it (lionsim.network.cost)."""
    return set().union(*issued_by_run(r).values())


def issued_by_run(r) -> dict[str, set[tuple[str, str]]]:
    """issued_calls, per run of `r` (its label)."""
    from lionsim.estimate.run import step_kinds
    from lionsim.steptime.answers import check_answers
    from lionsim.transports.base import plan_on

    by_run: dict[str, set[tuple[str, str]]] = {}
    gpn, steps = r.network.workers_per_node, r.steps_for(r.workers)
    for run in r.runs:
        calls = by_run.setdefault(run.label, set())
        p = probe_resolved(r, run)
        kinds = [(p.spec, p.extra_calls + p.sync_calls)]
        walked = steps or (WALKED if r.convergence is not None else 0)  # --from-run prices runs to target
        if walked:
            kinds += [(k.spec, k.extra_calls) for k in step_kinds(p.strategy, p.spec, walked, r.workers)]
        for spec, own in kinds:
            if spec is not None:  # a plug-in's wrong answer is one line here too, as where it is priced
                check_answers(p.transport, spec, r.workers, gpn)
            planned = plan_on(p.transport, spec, r.workers, gpn) if spec is not None and r.workers > 1 else []
            calls |= {(c.op, c.scope) for c in (*own, *planned)}
    return by_run


def issued_ops(r) -> set[str]:
    """The collective ops the runs of `r` (a resolved estimate) issue on its N workers (issued_calls)."""
    return {op for op, _ in issued_calls(r)}


def check_algorithm(r) -> None:
    """`--algorithm NAME` (r.algorithm, not auto) prices the ops it implements: some run must issue one,
    else it would change nothing (as --transport must fit some run)."""
    from lionsim.network import COLLECTIVE_ALGORITHMS

    implements = COLLECTIVE_ALGORITHMS.get(r.algorithm).ops
    issued = issued_ops(r)
    if not issued & set(implements):
        runs = ", ".join(run.label for run in r.runs)
        raise LionsimError(f"--algorithm {r.algorithm} runs {', '.join(implements)} and no run issues one on "
                           f"{r.workers} workers ({runs}: {', '.join(sorted(issued)) or 'nothing'}); give auto or "
                           "an algorithm of those ops (`lionsim comm --help`)")
