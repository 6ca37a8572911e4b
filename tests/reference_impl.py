"""Plain, slow reference implementations of REFERENCE.md's equations, element by element.

Independent of lionsim's tensor code: Python floats and loops only.
"""

from __future__ import annotations


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


def dlion_step(x: list[float], grads: list[list[float]], moms: list[list[float]], lr: float,
               wd: float, b1: float, b2: float, vote: str) -> tuple[list[float], list[list[float]]]:
    """REFERENCE.md 2, Algorithm 1: binary worker votes, MaVo (tie -> 0) or Avg, local decay."""
    n_workers = len(grads)
    deltas, new_moms = [], []
    for g, m in zip(grads, moms):
        deltas.append([1.0 if b1 * mi + (1 - b1) * gi > 0 else -1.0 for gi, mi in zip(g, m)])
        new_moms.append([b2 * mi + (1 - b2) * gi for gi, mi in zip(g, m)])
    new_x = []
    for j, xj in enumerate(x):
        s = sum(d[j] for d in deltas)
        delta = sign(s) if vote == "mavo" else s / n_workers
        new_x.append(xj - lr * (delta + wd * xj))
    return new_x, new_moms
