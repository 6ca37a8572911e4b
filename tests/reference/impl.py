"""Plain, slow reference implementations of REFERENCE.md's equations, element by element.

Independent of lionsim's tensor code: Python floats and loops, and one peer implementation
(lion-pytorch's update function) where a test needs Lion on whole tensors.
"""

from __future__ import annotations

import torch


def sign(v: float) -> float:
    return 1.0 if v > 0 else -1.0 if v < 0 else 0.0


def lion_step(x: list[float], g: list[float], m: list[float], lr: float, wd: float,
              b1: float, b2: float) -> tuple[list[float], list[float]]:
    """REFERENCE.md 1: decay, c = b1 m + (1-b1) g, x -= lr sign(c), m = b2 m + (1-b2) g."""
    new_x, new_m = [], []
    for xi, gi, mi in zip(x, g, m):
        xi = xi * (1 - lr * wd)
        c = b1 * mi + (1 - b1) * gi
        new_x.append(xi - lr * sign(c))
        new_m.append(b2 * mi + (1 - b2) * gi)
    return new_x, new_m


def lion_pytorch_update_(p: torch.Tensor, grad: torch.Tensor, exp_avg: torch.Tensor, lr: float, wd: float,
                         beta1: float, beta2: float) -> None:
    """lucidrains/lion-pytorch's update_fn as published (stepweight decay, weight update, decay
    the momentum), a peer implementation for tests that need Lion on whole tensors."""
    # stepweight decay
    p.data.mul_(1 - lr * wd)
    # weight update
    update = exp_avg.clone().mul_(beta1).add(grad, alpha=1 - beta1).sign_()
    p.add_(update, alpha=-lr)
    # decay the momentum running average coefficient
    exp_avg.mul_(beta2).add_(grad, alpha=1 - beta2)


M32, M64 = 0xFFFFFFFF, (1 << 64) - 1


def _mix32(x: int) -> int:
    x = (((x >> 16) ^ x) * 0x45D9F3B) & M32
    x = (((x >> 16) ^ x) * 0x45D9F3B) & M32
    return (x >> 16) ^ x


def _splitmix_chain(values) -> int:
    key = 0
    for v in values:
        key = (key + (v & M64) + 0x9E3779B97F4A7C15) & M64
        key = ((key ^ (key >> 30)) * 0xBF58476D1CE4E5B9) & M64
        key = ((key ^ (key >> 27)) * 0x94D049BB133111EB) & M64
        key ^= key >> 31
    return key


def draw(seed: int, step: int, worker: int, index: int) -> float:
    """A stochastic quantizer's uniform draw (lionsim.strategies.core.draws), written out: splitmix64
    chains (seed, step) and then the worker into a 64-bit key; two rounds of the 32-bit hash
    of the index mixed with the key's halves; the top 24 of its 32 bits over 2**24."""
    key = _splitmix_chain([_splitmix_chain([seed, step]), worker])
    x = _mix32(_mix32(index ^ (key & M32)) ^ (key >> 32))
    return (x >> 8) / 2.0**24


def tie_coin(seed: int, step: int, index: int) -> float:
    """The random tie rule's coin, written out (lionsim.aggregators.ties): splitmix64 of
    (seed, step) keys a 32-bit integer hash of the coordinate index; its low bit picks +1/-1."""
    key = 0
    for v in (seed, step):
        key = (key + (v & M64) + 0x9E3779B97F4A7C15) & M64
        key = ((key ^ (key >> 30)) * 0xBF58476D1CE4E5B9) & M64
        key = ((key ^ (key >> 27)) * 0x94D049BB133111EB) & M64
        key ^= key >> 31
    x = _mix32((index & M32) ^ (key & M32))
    x = _mix32(x ^ (index >> 32) ^ (key >> 32))
    return 1.0 if x & 1 else -1.0


def vote(column: list[float], rule: str, tie: str = "zero", step: int = 1, seed: int = 0,
         index: int = 0) -> float:
    """One coordinate's result from the workers' votes (+1, -1, or 0 = abstain)."""
    s = sum(column)
    if rule == "avg":
        return s / len(column)
    if s != 0:
        return sign(s)
    if tie == "zero" or all(v == 0 for v in column):  # nobody voted: no tie to break
        return 0.0
    if tie == "alternate":
        return 1.0 if step % 2 else -1.0
    return tie_coin(seed, step, index)


def dlion_step(x: list[float], grads: list[list[float]], moms: list[list[float]], lr: float,
               wd: float, b1: float, b2: float, vote_rule: str, tie: str = "zero", step: int = 1,
               seed: int = 0) -> tuple[list[float], list[list[float]]]:
    """REFERENCE.md 2, Algorithm 1: worker votes sign(c) (0 abstains), MaVo (ties by the tie
    rule; nobody voting gives 0) or Avg, local decay."""
    deltas, new_moms = [], []
    for g, m in zip(grads, moms):
        deltas.append([sign(b1 * mi + (1 - b1) * gi) for gi, mi in zip(g, m)])
        new_moms.append([b2 * mi + (1 - b2) * gi for gi, mi in zip(g, m)])
    new_x = []
    for j, xj in enumerate(x):
        delta = vote([d[j] for d in deltas], vote_rule, tie, step, seed, j)
        new_x.append(xj - lr * (delta + wd * xj))
    return new_x, new_moms
