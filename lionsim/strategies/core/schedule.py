"""How a strategy's steps repeat, known without walking each one: Strategy.next_change (the next
step that may do something else) and Strategy.repeats (a warm-up, then a period). A run's steps
counted by kind (lionsim.estimate.run) and what it sends (lionsim.strategies.core.sends) are
walked from change to change over a warm-up and one period, so they cost the same at 10 steps
as at 10^7, and for a sync every 10^6 steps as for one every 2, where walking every step cost
about a second a strategy.

A declaration is trusted only where the class that states it is at least as derived as those
that define run_spec, extra_calls and phase (`trusted`): a plug-in that overrides run_spec under
a built-in's declaration is walked whole, step by step."""

from __future__ import annotations

from collections.abc import Iterator

from lionsim.errors import LionsimError
from lionsim.strategies.core.base import Strategy

WHAT_A_STEP_DOES = ("run_spec", "extra_calls", "phase")


def trusted(strategy: Strategy, declaration: str) -> bool:
    """Whether `declaration` (next_change, repeats) speaks for the run_spec, extra_calls and phase
    `strategy` has (module doc)."""
    mro = type(strategy).__mro__

    def owner(name: str) -> int:  # the MRO index of the class that defines `name`: 0 the most derived
        return next(i for i, cls in enumerate(mro) if name in vars(cls))

    return all(owner(declaration) <= owner(name) for name in WHAT_A_STEP_DOES)


def repeats(strategy: Strategy) -> tuple[int, int] | None:
    """Strategy.repeats where trusted; else None: no period known."""
    return strategy.repeats() if trusted(strategy, "repeats") else None


def horizon(strategy: Strategy, steps: int) -> int:
    """How many of a run's `steps` steps show every kind of step it has: a warm-up and one period."""
    known = repeats(strategy)
    return steps if known is None else min(steps, sum(known))


def spans(strategy: Strategy, first: int, last: int) -> Iterator[tuple[int, int]]:
    """Steps first..last as (step, count): the `count` steps from `step` on do what `step` does
    (Strategy.next_change where trusted; else one step each)."""
    next_change = strategy.next_change if trusted(strategy, "next_change") else None
    step = first
    while step <= last:
        end = step + 1 if next_change is None else next_change(step)
        if end <= step:  # a plug-in's: it would walk forever
            raise LionsimError(f"strategy {strategy.name!r}: next_change({step}) gave {end}, not a later step")
        end = min(end, last + 1)
        yield step, end - step
        step = end
