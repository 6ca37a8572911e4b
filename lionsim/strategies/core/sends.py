"""What a run sends over its steps, known without training: the strategy says what each step
sends (Strategy.run_spec, a pure function of the step). The plan's transport questions
(lionsim.config.sends) and bench --calibrate's list of calls (lionsim.measure.calibrate) walk it."""

from __future__ import annotations

from dataclasses import replace

from lionsim.strategies.core.base import Strategy
from lionsim.transports import PayloadSpec


def sent_specs(strategy: Strategy, steady: PayloadSpec, steps: int) -> list[PayloadSpec]:
    """The steady spec, then every other spec steps 1..`steps` send, each once; each vote also
    with abstentions, which a vote transport marks on a step where some worker abstains."""
    found, last = {steady: None}, steady
    for step in range(1, steps + 1):
        spec = strategy.run_spec(step, steady)
        if spec is not last and spec is not None:  # most steps send the very object the step before did
            found.setdefault(spec, None)
        last = spec
    return [variant for spec in found for variant in
            ([spec, replace(spec, abstain=True)] if spec.kind == "votes" and not spec.abstain else [spec])]
