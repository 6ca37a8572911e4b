"""What a run sends over its steps, known without training: the strategy says what each step
sends (Strategy.run_spec, a pure function of the step; Strategy.sent_payloads where that is a
stand-in) and what calls of its own it issues (Strategy.extra_calls). The plan's transport
questions (lionsim.config.sends) and bench --calibrate's list of calls (lionsim.measure.calibrate)
walk them.

The walk stops at the strategy's send horizon (Strategy.send_horizon: past a warm-up and a sync
period every step repeats an earlier one), so it costs the same at 10 steps as at 10^7, where
walking every step cost seconds per run before anything trained. The horizon is trusted only
where the class that states it is at least as derived as those that define run_spec and
extra_calls (`walked`): a plug-in that overrides run_spec under a built-in's horizon is walked
whole."""

from __future__ import annotations

from dataclasses import replace

from lionsim.network.calls import CollectiveCall
from lionsim.strategies.core.base import Strategy
from lionsim.transports import PayloadSpec


def walked(strategy: Strategy, steps: int) -> int:
    """How many of a run's `steps` steps show everything it sends (module doc)."""
    mro = type(strategy).__mro__

    def owner(name: str) -> int:  # the MRO index of the class that defines `name`: 0 the most derived
        return next(i for i, cls in enumerate(mro) if name in vars(cls))

    stated = owner("send_horizon")
    if stated <= owner("run_spec") and stated <= owner("extra_calls"):
        return min(steps, max(1, strategy.send_horizon()))
    return steps


def sent_specs(strategy: Strategy, steady: PayloadSpec, steps: int) -> list[PayloadSpec]:
    """What steps 1..`steps` send, as encode sends it, each once: for the steady spec and each other
    spec a step sends, Strategy.sent_payloads of it (the spec itself, or the payloads it stands for:
    streaming-diloco's fragments in place of the mean that prices its steps, so the steady spec is
    not always among them); each vote also with abstentions, which a vote transport marks on a step
    where some worker abstains."""
    found, last = dict.fromkeys(strategy.sent_payloads(steady)), steady
    for step in range(1, walked(strategy, steps) + 1):
        spec = strategy.run_spec(step, steady)
        if spec is not last and spec is not None:  # most steps send the very object the step before did
            found.update(dict.fromkeys(strategy.sent_payloads(spec)))
        last = spec
    return [variant for spec in found for variant in
            ([spec, replace(spec, abstain=True)] if spec.kind == "votes" and not spec.abstain else [spec])]


def sent_calls(strategy: Strategy, steps: int) -> list[CollectiveCall]:
    """The strategy's own calls (momentum syncs, scale all-reduces) steps 1..`steps` issue, each once."""
    return list(dict.fromkeys(c for step in range(1, walked(strategy, steps) + 1) for c in strategy.extra_calls(step)))
