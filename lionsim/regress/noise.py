"""Float-level noise: how far rounding differences carry through a case's training.

Another CPU (AVX-512 against AVX2, another BLAS path) rounds differently in its reductions,
exp/log and matmul blocking: every kernel's outputs differ in their last bits, at every step.
Through training those bits can grow (a sign vote that flips, a chaotic ViT) or die out (a
contracting optimisation), and only measuring tells how far. So `lionsim regress --update`
reruns each case at its fixed seed NOISE_DRAWS times with such noise injected, and a metric's
float tolerance is FLOAT_K times the root-mean-square of its change (tolerance.py): the
comparison on another platform (`float` mode) then allows what rounding alone does to this
case, and no more.

The noise: each step, every element of the model's input and of its output (the logits) is
moved by a pseudo-random relative amount in [-AMPLITUDE, AMPLITUDE] (2^-20, about 8 float32
ulps), in the forward pass only (the backward pass sees it through the logits; the gradient of
the perturbation itself is identity). That is a few roundings' worth, at every step, in every
gradient element: measured on the suite, perturbing the initial weights by one ulp instead (a
one-off change) died out in most cases (loss changes of 1e-8) while running on another kernel
set (ATEN_CPU_CAPABILITY=default on an AVX2 machine) moved the same metrics by up to 5e-3, and
a uniform scale of the loss left sign-based runs unchanged. With this noise, four draws set
tolerances that the other kernel set stayed within (at most 0.58 of a tolerance over the
whole suite) while the worst check of every deliberate break of tests/regress/test_float.py
left them by 15x or more.

The draws are deterministic (seeded), so an update is reproducible on one platform.
"""

from __future__ import annotations

import random
from typing import Callable

import torch
from torch import Tensor

AMPLITUDE = 2.0 ** -20
"""Largest relative change of one element per step (float32 has 2^-23 per ulp)."""
NOISE_DRAWS = 4
"""Noisy reruns of each case at its fixed seed that `--update` measures."""
SALT = 8192.0
"""Spreads an element's value over [0, 1) for its pseudo-random draw (any large scale works)."""


def _jitter(x: Tensor, phase: float) -> Tensor:
    """x moved by a relative amount in [-AMPLITUDE, AMPLITUDE] per element, pseudo-random from its
    value and `phase` (no random generator: it also runs under torch.func.vmap); the change is
    a constant to autograd."""
    if not x.is_floating_point():
        return x  # token ids
    value = x.detach()
    u = torch.frac(value * SALT + phase) * 2 - 1  # [-1, 1)
    return x + (value * u * AMPLITUDE).detach()


def with_float_noise(loss: Callable, draw: int) -> Callable:
    """A workload's loss(model, inputs, targets) with float noise of draw `draw` (>= 1) at every call."""
    phases = random.Random(draw)

    def noisy(model, inputs, targets):
        phase = phases.random()
        return loss(lambda x: _jitter(model(_jitter(x, phase)), phase + 0.5), inputs, targets)

    return noisy
