"""The optimizer a strategy steps with on its own: DiLoCo's and local SGD's inner steps on each
worker's replica, PowerSGD's step on the decompressed gradient.

Its state has the shape of the parameters it steps: [w, P] for w replicas (each worker its own
state, as each DiLoCo worker keeps its own Adam moments), [P] for one shared replica. The
rules are lionsim.optim.functional's pure in-place functions, elementwise over any shape, each
registered in INNER_OPTIMIZERS with its state count: a plug-in file registers another the same
way, and `--inner-optimizer` accepts it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
from torch import Tensor

from lionsim.optim.functional import adamw_update_, lion_update_, sgdm_update_, step_counts
from lionsim.registry import Registry


@dataclass(frozen=True, slots=True)
class InnerRule:
    """One inner optimizer: how much state it keeps and its step."""

    states: int
    """fp32 state tensors it keeps per parameter (AdamW: m and v)."""
    step: Callable[..., None]
    """step(params, grads, states, steps, lr, weight_decay, beta1, beta2): one in-place step of every
    replica in `params` by its own gradient; `states` its state tensors, `steps` [P] the steps each
    position has taken, this one included (AdamW's bias correction)."""


INNER_OPTIMIZERS: Registry[InnerRule] = Registry("inner optimizer")
"""Name -> InnerRule: what `--inner-optimizer` accepts."""
INNER_OPTIMIZERS.add("adamw", InnerRule(2, lambda p, g, s, n, lr, wd, b1, b2: adamw_update_(
    p, g, *s, step_counts(n), lr, wd, b1, b2)))
INNER_OPTIMIZERS.add("lion", InnerRule(1, lambda p, g, s, n, lr, wd, b1, b2: lion_update_(p, g, s[0], lr, wd, b1, b2)))
INNER_OPTIMIZERS.add("sgd", InnerRule(1, lambda p, g, s, n, lr, wd, b1, b2: sgdm_update_(p, g, s[0], lr, wd, b1)))
# sgd: SGD with momentum beta1 (0 for plain SGD), L2 weight decay (torch.optim.SGD)


class InnerOptimizer:
    """`name`'s state for parameters of `shape`, and its step."""

    def __init__(self, name: str, lr: float, weight_decay: float, betas: tuple[float, float],
                 shape: tuple[int, ...], device: torch.device) -> None:
        self.name = INNER_OPTIMIZERS.canonical(name)  # an unknown name: one line with the list
        self.lr, self.weight_decay, self.betas = lr, weight_decay, betas
        self.state = [torch.zeros(shape, device=device) for _ in range(self.rule.states)]
        # [P]: steps each position has taken (AdamW's bias correction), one count for every replica; a
        # step leaves a tensor no worker has a gradient for, and so its count, alone (lionsim.engine),
        # as torch.optim counts steps per parameter. A tensor only some workers lack a gradient for
        # is stepped on those workers with a zero gradient (the loop's gradients are [w, P] rows).
        self.steps = torch.zeros(shape[-1], device=device)

    @property
    def rule(self) -> InnerRule:
        """Its registered rule, looked up by name (a checkpoint pickles the name, not the function)."""
        return INNER_OPTIMIZERS.get(self.name)

    def step(self, params: Tensor, grads: Tensor) -> None:
        """One step of every replica in params by its own gradient (same shapes)."""
        self.steps += 1
        beta1, beta2 = self.betas
        self.rule.step(params, grads, self.state, self.steps, self.lr, self.weight_decay, beta1, beta2)
