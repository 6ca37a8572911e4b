"""Option fields several strategies share (their flag and check written once): the inner
optimizer of the local-step strategies and of PowerSGD."""

from __future__ import annotations

from lionsim.strategies.form import option

INNER_OPTIMIZERS = {"adamw": 2, "lion": 1, "sgd": 1}
"""Name -> fp32 state tensors it keeps per parameter (AdamW: m and v; Lion: m; SGD: its momentum)."""


def inner_optimizer(default: str = "adamw"):
    """The `--inner-optimizer` field: one of INNER_OPTIMIZERS, any case."""
    return option(default, accepted=", ".join(INNER_OPTIMIZERS), check=lambda v: v in INNER_OPTIMIZERS,
                  flag="--inner-optimizer", choices=tuple(INNER_OPTIMIZERS))
