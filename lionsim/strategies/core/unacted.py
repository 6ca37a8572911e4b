"""The note bench prints where a run's steps all fall in its strategy's warm-up: `-s powersgd
--steps 4` trains 4 plain fp32 steps, so the row is not PowerSGD's, and it names the options given
that act only past the warm-up (OptionRule.acts PAST_WARMUP: a PowerSGD rank, DiLoCo's outer step),
which never acted. Said whether or not an option was given: a short run of a method that never ran
is labelled with its name. run.json records the step (runs[].warmup_until), so that `estimate
--from-run` gives such a run no time to target.

A note, not a refusal (estimate refuses its analogue, an option no priced step reads): a short
smoke run is a legitimate bench. Whether a run got past its warm-up is read from the schedule
the strategy declares (lionsim.strategies.core.schedule), not from a list of strategies: past
step w of Strategy.repeats (w, p), a period of p steps sends what every later period does; a run
got past its warm-up if one of its steps sends what a step of that period sends (a local step
sends nothing, a warm-up step its dense gradient). Where no period is trusted (a plug-in's
run_spec under a built-in's declaration) nothing is said."""

from __future__ import annotations

from lionsim.strategies.core.form import PAST_WARMUP, SETS_WARMUP, option_specs
from lionsim.strategies.core.schedule import repeats, spans, trusted

WALK_LIMIT = 100_000
"""Most steps walked one by one (a schedule without a trusted next_change): past it, nothing said."""


def first_past_warmup(strategy, steps: int) -> int | None:
    """The first step that sends what the strategy sends past its warm-up, where the run's `steps`
    steps hold none (None where one of them does, or where the schedule is unknown)."""
    known = repeats(strategy)
    if known is None:
        return None
    warm, period = known
    if warm + period > WALK_LIMIT and not trusted(strategy, "next_change"):
        return None
    steady = strategy.payload_spec()
    # a list, not a set: a plug-in's spec need not hash
    past = [spec for s, _ in spans(strategy, warm + 1, warm + period) if (spec := strategy.run_spec(s, steady)) is not None]
    if not past:  # a period that sends nothing: no step to wait for
        return None
    for step, _ in spans(strategy, 1, warm + period):
        if strategy.run_spec(step, steady) in past:
            return step if step > steps else None
    return None


def unacted_note(strategy, steps: int, longer: str = "--steps") -> str:
    """The line for a run of `steps` steps that ended inside its warm-up, naming the options given
    that act past it; "" otherwise. `longer`: the option that lengthens the run (estimate's --tokens
    where the run was given in tokens)."""
    specs = option_specs(strategy.name, strategy.Options)
    idle = [s for s in specs if s.rule.acts == PAST_WARMUP and s.given_in(strategy.cfg.options)]
    warmup = [s for s in specs if s.rule.acts == SETS_WARMUP]
    first = first_past_warmup(strategy, steps)  # said given options or not: such a run is not the method's
    if first is None:
        return ""
    shown = [f"{s.flag} {getattr(strategy.opts, s.field)}" for s in idle]
    lead = f"{', '.join(shown)} never acted: " if shown else ""
    set_by = ", ".join(f"{s.flag} {getattr(strategy.opts, s.field)}" for s in warmup)
    lower = " or ".join(s.flag for s in warmup) or "the warm-up"
    return (f"{strategy.name}: {lead}no {strategy.phase(first)} step ran: the run's {steps} steps end before its "
            f"first, step {first}" + (f" ({set_by})" if set_by else "") + f"; raise {longer} or lower {lower}.")


def short_warmup_note(strategy, steps: int) -> str:
    """The line for a whole run of `steps` steps whose warm-up is lionsim's short-bench default (its
    SETS_WARMUP option not given) where the strategy's authors size theirs by the run
    (Strategy.authors_warmup) and the default is below their share: 15 steps of 1-bit Adam's fp32
    warm-up priced a 10,000-step run at 3.27x where 2,000 gave 1.78x, unsaid. "" otherwise."""
    authors = getattr(strategy, "authors_warmup", None)
    specs = [s for s in option_specs(strategy.name, strategy.Options) if s.rule.acts == SETS_WARMUP]
    if authors is None or len(specs) != 1 or specs[0].given_in(strategy.cfg.options):
        return ""
    low, high, who = authors
    spec = specs[0]
    warm = getattr(strategy.opts, spec.field)
    if warm >= low * steps:
        return ""
    # the same words at every length (a sweep's points say it once): the share, not this run's steps
    return (f"{strategy.name}: {spec.flag} {warm} is lionsim's default for its 100-step bench, under the "
            f"{low:.0%}-{high:.0%} of a run its authors warm up for ({who}): set {spec.flag} to that share of "
            "the run's steps.")
