"""Option fields several strategies share (their flag and check written once): the inner
optimizer of the local-step strategies and of PowerSGD, and the local-step strategies' H and
outer step."""

from __future__ import annotations

from lionsim.strategies.core.form import PAST_WARMUP, SETS_WARMUP, TRAINING, between, integer, option
from lionsim.strategies.core.inner import INNER_OPTIMIZERS
from lionsim.whole import MAX_STEPS


def inner_optimizer(default: str = "adamw"):
    """The `--inner-optimizer` field: a name of INNER_OPTIMIZERS (lionsim.strategies.core.inner, a registry a
    plug-in may add to), any case."""
    return option(default, accepted="an inner optimizer", check=lambda v: v in INNER_OPTIMIZERS,
                  flag="--inner-optimizer", choices=INNER_OPTIMIZERS)


def step_count(low: int, why: str = ""):
    """The check of a count of steps (a warm-up's): a whole number from `low` to MAX_STEPS, the
    most steps a run takes, the top --local-steps and --steps stop at."""
    return integer(low, MAX_STEPS, why="; ".join(filter(None, (why, "at most the steps lionsim runs"))))


def local_steps(default: int):
    """The `--local-steps` field: H, a whole number from 1 to the most steps a run takes."""
    return option(default, flag="--local-steps", check=integer(1, MAX_STEPS, why="the most steps lionsim runs or "
                                                                             "prices: a larger H never syncs"),
                  acts=SETS_WARMUP)  # the first sync is step H


def outer_lr(default: float):
    """The `--outer-lr` field: a finite number above 0."""
    return option(default, flag="--outer-lr", check=between(0, low_open=True), priced=TRAINING, acts=PAST_WARMUP)


def outer_momentum(default: float):
    """The `--outer-momentum` field: a number at least 0 and below 1."""
    return option(default, flag="--outer-momentum", check=between(0, 1, high_open=True),
                  priced=TRAINING, acts=PAST_WARMUP)
