"""Deliberate bugs for `lionsim regress` to catch, applied in a process of their own:

    python tests/helpers/regress_breaks.py BREAK regress ARGS...

applies BREAK (a name below, or `none`) as a source edit would (every module that imported the
function sees the broken one), then runs `lionsim regress ARGS`. Run with a different CPU
kernel set (ATEN_CPU_CAPABILITY=default) it is a check on "another CPU" (tests/regress/test_float.py).
Never imported by the product.
"""

from __future__ import annotations

import sys
from dataclasses import replace

import lionsim.strategies.dlion as dlion
import lionsim.strategies.lioncub as lioncub
import lionsim.strategies.signsgd as signsgd
import lionsim.strategies.signum as signum
import lionsim.transports.a2a_1bit as a2a_1bit
from lionsim.optim import functional

USERS = (functional, dlion, lioncub, signum, signsgd)
"""Modules that call functional.apply_update_ / decay_momentum_ by name."""


def _everywhere(name: str, broken) -> None:
    for module in USERS:
        if hasattr(module, name):
            setattr(module, name, broken)


def weight_decay_x1_05() -> None:
    real = functional.apply_update_
    _everywhere("apply_update_", lambda p, update, lr, wd: real(p, update, lr, 1.05 * wd))


def lr_x1_1() -> None:
    real = functional.apply_update_
    _everywhere("apply_update_", lambda p, update, lr, wd: real(p, update, 1.1 * lr, wd))


def beta2_0_98() -> None:
    real = functional.decay_momentum_
    _everywhere("decay_momentum_", lambda exp_avg, grad, beta2: real(exp_avg, grad, 0.98 if beta2 == 0.99 else beta2))


def a2a_drops_1pct_of_a_chunk() -> None:
    """The all-gather of voted chunks loses the first 1% of the last worker's chunk."""
    unpack = a2a_1bit.unpack_codes

    def lossy(packed, numel, bits):
        codes = unpack(packed, numel, bits).clone()  # [w, W, chunk]
        codes[:, -1, : max(1, numel // 100)] = 0
        return codes

    a2a_1bit.unpack_codes = lossy


def dlion_default_lr_3_3e_3() -> None:
    cls = dlion.DistributedLionStrategy
    cls.defaults = replace(cls.defaults, lr=3.3e-3)


BREAKS = {"none": lambda: None, "wd-x1.05": weight_decay_x1_05, "lr-x1.1": lr_x1_1, "beta2-0.98": beta2_0_98,
          "a2a-drops-1pct": a2a_drops_1pct_of_a_chunk, "dlion-default-lr-3.3e-3": dlion_default_lr_3_3e_3}

if __name__ == "__main__":
    BREAKS[sys.argv[1]]()
    from lionsim.cli.app import main

    main(sys.argv[2:])
