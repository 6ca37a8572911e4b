"""The options some strategies read besides lr, weight decay and betas (Strategy.options): their
flags, and the one check each value meets wherever it comes from (a flag, a config file, a
strategy's own default, tuning.py)."""

from __future__ import annotations

import math
from typing import Callable

from lionsim.errors import LionsimError

INNER_OPTIMIZERS = {"adamw": 2, "lion": 1, "sgd": 1}
"""Name -> fp32 state tensors it keeps per parameter (AdamW: m and v; Lion: m; SGD: its momentum)."""


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _count(low: int) -> Callable[[object], bool]:
    return lambda v: _number(v) and float(v).is_integer() and v >= low


RULES: dict[str, tuple[Callable[[object], bool], str]] = {
    "local_steps": (_count(1), "an integer >= 1"),
    "outer_lr": (lambda v: _number(v) and v > 0, "a finite number > 0"),
    "outer_momentum": (lambda v: _number(v) and 0 <= v < 1, "a number in [0, 1)"),
    "inner_optimizer": (lambda v: v in INNER_OPTIMIZERS, ", ".join(INNER_OPTIMIZERS)),
    "powersgd_rank": (_count(1), "an integer >= 1"),
    "powersgd_warmup_steps": (_count(0), "an integer >= 0"),
    "demo_topk": (_count(1), "an integer >= 1"),
    "demo_chunk": (_count(1), "an integer >= 1"),
}
"""Option -> (its check, what is accepted)."""


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def check_option(name: str, value):
    """`value` if it is valid for option `name`; else one LionsimError line naming it."""
    ok, accepted = RULES[name]
    if not ok(value):
        raise LionsimError(f"bad {flag(name)} {value!r}; accepted: {accepted}")
    return int(value) if name in ("local_steps", "powersgd_rank", "powersgd_warmup_steps", "demo_topk", "demo_chunk") \
        else value
