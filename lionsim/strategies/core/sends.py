"""What a run sends over its steps, known without training: the strategy says what each step
sends (Strategy.run_spec, a pure function of the step; Strategy.sent_payloads where that is a
stand-in) and what calls of its own it issues (Strategy.extra_calls). The plan's transport
questions (lionsim.config.sends) and bench --calibrate's list of calls (lionsim.measure.calibrate)
walk them.

The walk goes from change to change over a warm-up and one period (Strategy.next_change,
Strategy.repeats; lionsim.strategies.core.schedule): past them every step repeats an earlier
one, so it costs the same at 10 steps as at 10^7, and for a sync every 10^6 steps as for one
every 2, where walking every step cost seconds per run before anything trained."""

from __future__ import annotations

from dataclasses import replace

from lionsim.network.calls import CollectiveCall
from lionsim.strategies.core.base import Strategy
from lionsim.strategies.core.schedule import horizon, spans
from lionsim.transports import PayloadSpec


def sent_specs(strategy: Strategy, steady: PayloadSpec, steps: int) -> list[PayloadSpec]:
    """What steps 1..`steps` send, as encode sends it, each once: for the steady spec and each other
    spec a step sends, Strategy.sent_payloads of it (the spec itself, or the payloads it stands for:
    streaming-diloco's fragments in place of the mean that prices its steps, so the steady spec is
    not always among them); each vote also with abstentions, which a vote transport marks on a step
    where some worker abstains."""
    found, last = dict.fromkeys(strategy.sent_payloads(steady)), steady
    for step, _ in spans(strategy, 1, horizon(strategy, steps)):
        spec = strategy.run_spec(step, steady)
        if spec is not last and spec is not None:  # most steps send the very object the step before did
            found.update(dict.fromkeys(strategy.sent_payloads(spec)))
        last = spec
    return [variant for spec in found for variant in
            ([spec, replace(spec, abstain=True)] if spec.kind == "votes" and not spec.abstain else [spec])]


def sent_calls(strategy: Strategy, steps: int) -> list[CollectiveCall]:
    """The strategy's own calls (momentum syncs, scale all-reduces) steps 1..`steps` issue, each once."""
    walk = spans(strategy, 1, horizon(strategy, steps))
    return list(dict.fromkeys(c for step, _ in walk for c in strategy.extra_calls(step)))
