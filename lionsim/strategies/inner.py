"""The optimizer a strategy steps with on its own: DiLoCo's and local SGD's inner steps on each
worker's replica, PowerSGD's step on the decompressed gradient.

Its state has the shape of the parameters it steps: [w, P] for w replicas (each worker its own
state, as each DiLoCo worker keeps its own Adam moments), [P] for one shared replica. The
rules are lionsim.optim.functional's pure in-place functions, elementwise over any shape.
"""

from __future__ import annotations

import torch
from torch import Tensor

from lionsim.optim.functional import adamw_update_, lion_update_, sgdm_update_, step_counts
from lionsim.errors import LionsimError
from lionsim.strategies.options import INNER_OPTIMIZERS


class InnerOptimizer:
    """`name`'s state for parameters of `shape`, and its step."""

    def __init__(self, name: str, lr: float, weight_decay: float, betas: tuple[float, float],
                 shape: tuple[int, ...], device: torch.device) -> None:
        if name not in INNER_OPTIMIZERS:
            raise LionsimError(f"bad --inner-optimizer {name!r}; accepted: {', '.join(INNER_OPTIMIZERS)}")
        self.name = name
        self.lr, self.weight_decay, self.betas = lr, weight_decay, betas
        self.state = [torch.zeros(shape, device=device) for _ in range(INNER_OPTIMIZERS[name])]
        # [P]: steps each position has taken (AdamW's bias correction), one count for every replica; a
        # step leaves a tensor no worker has a gradient for, and so its count, alone (lionsim.engine),
        # as torch.optim counts steps per parameter. A tensor only some workers lack a gradient for
        # is stepped on those workers with a zero gradient (the loop's gradients are [w, P] rows).
        self.steps = torch.zeros(shape[-1], device=device)

    def step(self, params: Tensor, grads: Tensor) -> None:
        """One step of every replica in params by its own gradient (same shapes)."""
        self.steps += 1
        lr, wd, (beta1, beta2) = self.lr, self.weight_decay, self.betas
        if self.name == "adamw":
            adamw_update_(params, grads, *self.state, step_counts(self.steps), lr, wd, beta1, beta2)
        elif self.name == "lion":
            lion_update_(params, grads, self.state[0], lr, wd, beta1, beta2)
        else:  # SGD with momentum beta1, L2 weight decay (torch.optim.SGD)
            sgdm_update_(params, grads, self.state[0], lr, wd, beta1)
