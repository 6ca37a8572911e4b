"""`lionsim estimate --steps N` (or `--tokens T`): a whole run with every phase it has.

The per-step row is the steady state. A run has more: 1-bit Adam's full-precision steps until
the variance freezes (--freeze-steps), PowerSGD's plain all-reduce warm-up, DGC's warm-up
stages of falling density, momentum-sync steps (--momentum-sync every:K | schedule:K), the
sync step of every H local steps. Each strategy says what its 1-based step s sends
(Strategy.run_spec: a dense warm-up, a stage's density, None for a local step) and which
collectives of its own it issues (Strategy.extra_calls(s)); steps that send the same and call
the same are one kind, priced once:

    run_s = sum over kinds k of count_k x step_s(k)          mean_step_s = run_s / N

With --tokens T, N = ceil(T / (tokens per worker x workers)): the steps that process T tokens.
The steady row's step_s is the mean of a round for a local-step strategy; a run counts its
floor(N / H) sync steps exactly. The kinds are counted from change to change and by whole
periods past a warm-up (KindCount), not step by step: 10^6 steps once cost a second a strategy.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from dataclasses import dataclass

from lionsim.estimate.plain import check_run_length, whole
from lionsim.network import CollectiveCall
from lionsim.strategies import Strategy
from lionsim.strategies.core.momentum_sync import CALL_LABEL as SYNC_LABEL
from lionsim.strategies.core.base import WARMUP
from lionsim.strategies.core.schedule import repeats, spans
from lionsim.transports import PayloadSpec


@dataclass(frozen=True, slots=True)
class StepKind:
    """What one kind of step does: its payload (None: a local step, nothing sent) and its own calls."""

    spec: PayloadSpec | None
    extra_calls: tuple[CollectiveCall, ...]
    phase: str
    """The strategy's name for it (Strategy.phase), "+ sync" where it syncs the momenta (--momentum-sync)."""


def run_steps(steps: int | None, tokens: int | None, tokens_per_worker: int, workers: int) -> int | None:
    """The run's step count from --steps or --tokens (not both, each checked by plain.run_length); None
    when neither is given."""
    check_run_length(steps, tokens, tokens_per_worker, workers)  # both given, or either out of range: refused once
    if steps is not None:
        return whole(steps)
    if tokens is not None:
        return math.ceil(whole(tokens) / (tokens_per_worker * workers))
    return None


def step_kinds(strategy: Strategy, steady: PayloadSpec, steps: int, workers: int) -> Counter[StepKind]:
    """How many of the run's `steps` steps are of each kind (module doc)."""
    return KindCount(strategy, steady, workers).upto(steps)


class KindCount:
    """A strategy's steps counted by kind: from change to change, by whole periods past a warm-up
    (Strategy.next_change, Strategy.repeats: lionsim.strategies.core.schedule), a plug-in's step
    by step. The steps up to the first period's end (a plug-in's: all) are kept, so a longer run
    extends a shorter one's count instead of walking them again (a run to target and its band's
    ends, ascending)."""

    def __init__(self, strategy: Strategy, steady: PayloadSpec, workers: int) -> None:
        self.strategy, self.steady, self.workers = strategy, steady, workers
        self.repeats = repeats(strategy)
        self.walked = 0
        self.counts: Counter[tuple] = Counter()

    def upto(self, steps: int) -> Counter[StepKind]:
        """The kinds of steps 1..`steps` (a shorter run than the one counted so far starts again)."""
        if steps < self.walked:
            self.walked, self.counts = 0, Counter()
        head = steps if self.repeats is None else min(steps, sum(self.repeats))
        self.counts.update(self._count(self.walked + 1, head))
        self.walked = head
        counts = Counter(self.counts)
        if head < steps:  # past the first period: the whole periods left, then the rest of one
            warmup, period = self.repeats
            periods = (steps - warmup) // period
            if periods > 1:
                counts.update({key: n * (periods - 1) for key, n in self._count(warmup + 1, warmup + period).items()})
            counts.update(self._count(warmup + periods * period + 1, steps))
        return self._kinds(counts)

    def _count(self, first: int, last: int) -> Counter[tuple]:
        """Steps first..last by (spec, calls, phase), the steady spec as its class (cheap to hash)."""
        strategy, steady, counts = self.strategy, self.steady, Counter()
        run_spec, extra_calls, phase_of = strategy.run_spec, strategy.extra_calls, strategy.phase
        many = self.workers > 1
        # consecutive spans of one kind (most are the steady one) are counted as a run and hashed once
        key, run = None, 0
        for step, count in spans(strategy, first, last):
            spec, calls, phase = run_spec(step, steady), tuple(extra_calls(step)) if many else (), phase_of(step)
            if key is not None and spec is key[0] and phase is key[2] and calls == key[1]:
                run += count
                continue
            if run:
                counts[self._key(key)] += run
            key, run = (spec, calls, phase), count
        if run:
            counts[self._key(key)] += run
        return counts

    def _kinds(self, counts: Counter[tuple]) -> Counter[StepKind]:
        """The counted keys as kinds of step: DGC's stages a warm-up, own calls at the model's size."""
        steady, strategy = self.steady, self.strategy
        kinds: Counter[StepKind] = Counter()
        for (spec, calls, phase), count in counts.items():
            spec = steady if spec is steady.__class__ else spec
            if phase == "steady" and spec is not None and spec != steady:  # DGC's stages: a warm-up by spec alone
                phase = WARMUP
            extra = tuple(at_scale(c, steady.numel / strategy.layout.numel) for c in calls)
            # a momentum sync's steps are told apart; a strategy's own calls (muon-dist's all-gather, MuLoCo's
            # codes on its sync steps) are its phase's, not a "sync" of their own ("sync + sync", "steady + sync")
            synced = any(c.label == SYNC_LABEL for c in extra)
            kinds[StepKind(spec=spec, extra_calls=extra, phase=phase + (" + sync" if synced else ""))] += count
        return kinds

    def _key(self, kind: tuple) -> tuple:
        """(spec, calls, phase) as counted: the steady spec by its class, cheap to hash."""
        spec, calls, phase = kind
        return (spec if spec is not self.steady else self.steady.__class__, calls, phase)


def at_scale(call: CollectiveCall, factor: float) -> CollectiveCall:
    """A momentum sync's all-reduce at the model's size: the probe's stand-in layout holds one
    parameter per tensor, and the sync sends 4 bytes a parameter (its other calls are per tensor)."""
    if call.label != SYNC_LABEL:
        return call
    return dataclasses.replace(call, nbytes=round(call.nbytes * factor))


def describe(kinds: Counter[StepKind]) -> str:
    """The run's phases in one line, e.g. "warm-up 15; compressed 985" (first step's kind first)."""
    counts: Counter[str] = Counter()
    for kind, count in kinds.items():
        counts[kind.phase] += count
    return "; ".join(f"{phase} {count}" for phase, count in counts.items())
