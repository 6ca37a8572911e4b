"""A run's steps counted by kind without walking each one (Strategy.next_change, Strategy.repeats;
lionsim.strategies.core.schedule, lionsim.estimate.run.KindCount): for every built-in strategy,
its warm-ups, sync periods and momentum syncs, the count equals a plain walk of every step, kinds
in the order first met; a plug-in that overrides what a step does under a built-in's declarations
is walked step by step."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from lionsim.backends import SimComm
from lionsim.errors import LionsimError
from lionsim.estimate.run import KindCount, StepKind, at_scale, step_kinds
from lionsim.strategies.core.momentum_sync import CALL_LABEL as SYNC_LABEL
from lionsim.forms import MomentumSync
from lionsim.network import CollectiveCall
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig
from lionsim.transports import PayloadSpec

LAYOUT = ParamLayout.meta([("w1", (16, 8)), ("b1", (16,)), ("w2", (8, 16)), ("b2", (8,))])
BUILT_IN = [n for n, cls in STRATEGIES.items() if cls.__module__.startswith("lionsim.")]
VARIANTS = [
    {},  # each strategy's defaults
    {"onebit-adam.freeze_steps": 7, "dgc.warmup_steps": 6, "powersgd.warmup_steps": 5, "local_steps": 7,
     "streaming-diloco.fragments": 2, "streaming-diloco.delay": 1},
    {"onebit-adam.freeze_steps": 1, "dgc.warmup_steps": 2, "powersgd.warmup_steps": 0, "local_steps": 1,
     "streaming-diloco.local_steps": 2},
    {"dgc.warmup_steps": 3, "dgc.topk_ratio": 0.1, "local_steps": 9, "streaming-diloco.fragments": 3,
     "streaming-diloco.delay": 2},
    {"onebit-adam.freeze_steps": 61, "dgc.warmup_steps": 43, "powersgd.warmup_steps": 37, "local_steps": 97,
     "streaming-diloco.fragments": 4, "streaming-diloco.delay": 5},
]
"""Warm-ups (DGC's stages, some equal at a large ratio) and sync periods of 1 to 97 steps, fragments
that divide H and that do not, delays."""
SYNCS = ["never", "every:1", "every:3", "every:7", "every:50", "schedule:2", "schedule:5"]


def built(name, options, sync="never", workers=4):
    cls = STRATEGIES.get(name)
    return cls(StrategyConfig(options=dict(options), momentum_sync=sync), LAYOUT, SimComm(workers))


def configurations():
    for name in BUILT_IN:
        syncs = SYNCS if getattr(STRATEGIES.get(name), "has_momentum_sync", False) else ["never"]
        for options in VARIANTS:
            for sync in syncs:
                yield name, options, sync


def plain_kinds(strategy, steady, lengths, workers):
    """The reference: every step 1..max(lengths) walked, each made a kind as estimate prices it
    (a spec other than the steady one in the steady phase is a warm-up, a step with a momentum sync
    "+ sync"); a copy of the count at each of `lengths`."""
    kinds, at = Counter(), {}
    for step in range(1, max(lengths) + 1):
        spec = strategy.run_spec(step, steady)
        calls = tuple(at_scale(c, steady.numel / strategy.layout.numel) for c in strategy.extra_calls(step))
        calls = calls if workers > 1 else ()
        phase = strategy.phase(step)
        if phase == "steady" and spec is not None and spec != steady:
            phase = "warm-up"
        synced = any(c.label == SYNC_LABEL for c in calls)  # a momentum sync's step; a strategy's own calls are not
        kinds[StepKind(spec=spec, extra_calls=calls, phase=phase + (" + sync" if synced else ""))] += 1
        if step in lengths:
            at[step] = Counter(kinds)
    return at


def lengths_for(strategy, seed):
    """1, 2, and each side of the warm-up's end and of its first periods, and random ones up to 600
    (past the longest warm-up and three of the longest periods, 61 + 3 x 97 steps)."""
    warmup, period = strategy.repeats() or (0, 1)
    near = [warmup + k * period + d for k in (0, 1, 2, 3) for d in (-1, 0, 1)]
    draws = random.Random(seed)
    return sorted({n for n in [1, 2, *near, *(draws.randint(1, 600) for _ in range(4))] if n >= 1})


@pytest.mark.parametrize("name", BUILT_IN)
def test_the_count_by_changes_and_periods_equals_a_walk_of_every_step(name):
    """step_kinds (counted afresh) and one KindCount extended to longer runs, then asked for a
    shorter one, against the plain walk: the same kinds, counts and order (run_phases' order)."""
    for workers in (4, 1):
        for _, options, sync in (c for c in configurations() if c[0] == name):
            strategy = built(name, options, sync, workers)
            steady = strategy.payload_spec()
            lengths = lengths_for(strategy, hash((name, sync, workers, tuple(options))) % 1000)
            plain = plain_kinds(strategy, steady, set(lengths), workers)
            counter = KindCount(strategy, steady, workers)
            for steps in [*lengths, lengths[len(lengths) // 2]]:
                why = (options, sync, workers, steps)
                assert list(step_kinds(strategy, steady, steps, workers).items()) == list(plain[steps].items()), why
                assert list(counter.upto(steps).items()) == list(plain[steps].items()), why


def test_what_a_step_does_is_the_same_up_to_its_next_change_and_one_period_on():
    """The declarations themselves, step by step to 400: every step before next_change(s) does what
    s does, and past the warm-up step s + p what step s does (run_spec, extra_calls, phase)."""
    end = 400
    for name, options, sync in configurations():
        strategy = built(name, options, sync)
        steady = strategy.payload_spec()
        does = {step: (strategy.run_spec(step, steady), strategy.extra_calls(step), strategy.phase(step))
                for step in range(1, 2 * end)}
        differs = {end: end}  # the first step after each that does something else (or `end`)
        for step in range(end - 1, 0, -1):
            differs[step] = step + 1 if does[step + 1] != does[step] else differs[step + 1]
        known = strategy.repeats()
        for step in range(1, end):
            assert min(strategy.next_change(step), end) <= differs[step], (name, options, sync, step)
            if known is not None and step > known[0]:
                assert does[step + known[1]] == does[step], (name, options, sync, step)


class Walked(Exception):
    """A walk went on past the steps it may visit."""


def counting(strategy, limit):
    """`strategy` with run_spec counting its calls: past `limit` it raises Walked."""
    plain, calls = strategy.run_spec, [0]

    def run_spec(step, steady):
        calls[0] += 1
        if calls[0] > limit:
            raise Walked(f"run_spec called {calls[0]} times")
        return plain(step, steady)

    strategy.run_spec = run_spec
    return strategy


@pytest.mark.parametrize("options", [{}, {"local_steps": 1_000_000, "dgc.warmup_steps": 1000,
                                          "powersgd.warmup_steps": 1000, "onebit-adam.freeze_steps": 1000}])
def test_ten_million_steps_are_counted_without_walking_them(options):
    """A run of 10^7 steps, a sync every 10^6 steps or every 2, a thousand-step warm-up, momentum
    syncs every 7 steps or on a schedule: at most a few hundred steps are asked what they send
    (walking every step cost about a second a million)."""
    for name, _, sync in configurations():
        if sync not in ("never", "every:7", "schedule:2"):
            continue
        strategy = counting(built(name, options, sync), 300)
        step_kinds(strategy, strategy.payload_spec(), 10**7, 4)


def test_a_plug_in_that_overrides_what_a_step_does_under_a_built_in_declaration_is_walked_whole():
    """onebit-adam states a warm-up then no change; localsgd a sync every H. A subclass that sends,
    calls or names its steps otherwise from step 100 on, without stating its own next_change and
    repeats, is counted step by step: the plain walk's count, not its parent's schedule's."""
    onebit, localsgd = STRATEGIES.get("onebit-adam"), STRATEGIES.get("localsgd")

    class DenseAgain(onebit):
        def run_spec(self, step, steady):
            return PayloadSpec(kind="dense", numel=steady.numel) if step >= 100 else super().run_spec(step, steady)

    class CallsLate(localsgd):
        def extra_calls(self, step):
            return [CollectiveCall("all_reduce", 64, "late scales")] if step >= 100 else super().extra_calls(step)

    class Cooling(onebit):
        def phase(self, step):
            return "cool-down" if step >= 100 else super().phase(step)

    for plug_in, options in [(DenseAgain, {"freeze_steps": 3}), (CallsLate, {"local_steps": 4}),
                             (Cooling, {"freeze_steps": 3})]:
        strategy = plug_in(StrategyConfig(options=options), LAYOUT, SimComm(4))
        steady = strategy.payload_spec()
        plain = plain_kinds(strategy, steady, {150}, 4)[150]
        assert list(step_kinds(strategy, steady, 150, 4).items()) == list(plain.items()), plug_in.__name__
        assert len(plain) > len(plain_kinds(strategy, steady, {99}, 4)[99]), plug_in.__name__  # step 100 is new


def test_a_plug_in_next_change_that_goes_nowhere_is_one_line_not_a_hang():
    class Stuck(STRATEGIES.get("onebit-adam")):
        def next_change(self, step):
            return step

    strategy = Stuck(StrategyConfig(), LAYOUT, SimComm(4))
    with pytest.raises(LionsimError, match=r"next_change\(1\) gave 1, not a later step"):
        step_kinds(strategy, strategy.payload_spec(), 10, 4)


@pytest.mark.parametrize("rule, syncs", [
    ("schedule:5", [1, 2, 3, 5, 7, 9, 11, 14, 17, 20, 24, 29, 34, 40]),  # docs/strategies.md's list
    ("schedule:1", [1, 3, 7, 15, 31, 63]),  # 2^i - 1
    ("every:4", [4, 8, 12, 16]),
])
def test_the_next_momentum_sync_after_each_step(rule, syncs):
    sync = MomentumSync.parse(rule)
    for step in range(0, syncs[-1]):
        assert sync.next_sync(step) == min(s for s in syncs if s > step), (rule, step)
    assert MomentumSync.parse("never").next_sync(5) is None
