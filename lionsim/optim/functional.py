"""The local update rules as pure in-place tensor functions (Lion: Chen et al. 2023, Algorithm 2; Distributed Lion: Liu et al., NeurIPS 2024, Algorithm 1).

They work on any shape, including a leading worker dimension [W, P] for per-worker state;
`p` may broadcast against it. Optimizers and strategies only unpack state and call these.
"""

from __future__ import annotations

import torch
from torch import Tensor


def lion_interpolation(exp_avg: Tensor, grad: Tensor, beta1: float) -> Tensor:
    """c = b1 * m + (1 - b1) * g: the quantity whose sign is Lion's update."""
    return exp_avg.mul(beta1).add_(grad, alpha=1 - beta1)


def decay_momentum_(exp_avg: Tensor, grad: Tensor, beta2: float) -> None:
    """m <- b2 * m + (1 - b2) * g: Lion's momentum tracks the raw gradient."""
    exp_avg.mul_(beta2).add_(grad, alpha=1 - beta2)


def apply_update_(p: Tensor, update: Tensor, lr: float, weight_decay: float) -> None:
    """x <- x - lr * (update + wd * x), decay first as in the reference implementations."""
    # stepweight decay
    p.mul_(1 - lr * weight_decay)
    # weight update
    p.add_(update, alpha=-lr)


def lion_update_(p: Tensor, grad: Tensor, exp_avg: Tensor, lr: float, weight_decay: float,
                 beta1: float, beta2: float) -> None:
    """One Lion step (Chen et al. 2023): decay, sign update, then momentum."""
    update = lion_interpolation(exp_avg, grad, beta1).sign_()
    apply_update_(p, update, lr, weight_decay)
    # decay the momentum
    decay_momentum_(exp_avg, grad, beta2)


def adamw_update_(p: Tensor, grad: Tensor, exp_avg: Tensor, exp_avg_sq: Tensor, step: int | Tensor,
                  lr: float, weight_decay: float, beta1: float, beta2: float,
                  eps: float = 1e-8) -> None:
    """One AdamW step (Loshchilov & Hutter 2019), as torch.optim.AdamW computes it. `step`: the
    steps taken so far, this one included: one count, or a float tensor of counts that broadcasts
    against p (torch counts per parameter, so a tensor skipped on some steps has a lower count;
    see adam_bias_corrections)."""
    p.mul_(1 - lr * weight_decay)
    exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    if isinstance(step, Tensor):
        bias1, bias2 = adam_bias_corrections(step, beta1, beta2)
        denom = (exp_avg_sq / bias2).sqrt_().add_(eps)
        p.add_(exp_avg.div(denom).mul_(lr / bias1), alpha=-1)
        return
    bias1 = 1 - beta1**step
    bias2 = 1 - beta2**step
    denom = (exp_avg_sq / bias2).sqrt_().add_(eps)
    p.addcdiv_(exp_avg, denom, value=-lr / bias1)


def adam_bias_corrections(steps: Tensor, beta1: float, beta2: float) -> tuple[Tensor, Tensor]:
    """1 - beta1^t and 1 - beta2^t for per-position step counts t (float, whole numbers), in
    steps' dtype. Computed in float64 as torch computes them in Python floats: in float32, 0.999
    itself is off by 1.3e-8, which makes 1 - 0.999 off by 1.3e-5 relative."""
    t = steps.double()
    return (1 - torch.pow(beta1, t)).to(steps.dtype), (1 - torch.pow(beta2, t)).to(steps.dtype)


def step_counts(counts: Tensor) -> int | Tensor:
    """What adamw_update_ takes for per-position step counts: their one value where every position
    has taken as many steps (every step of a run without skipped tensors: the scalar path, no
    float64 pass over P), else the counts themselves."""
    low, high = torch.aminmax(counts)
    return int(high) if bool(low == high) else counts


def sgdm_update_(p: Tensor, grad: Tensor, buf: Tensor, lr: float, weight_decay: float,
                 momentum: float) -> None:
    """One SGD-momentum step as torch.optim.SGD (L2 weight decay, dampening 0)."""
    d = grad.add(p, alpha=weight_decay) if weight_decay else grad
    buf.mul_(momentum).add_(d)
    p.add_(buf, alpha=-lr)


def nesterov_update_(p: Tensor, grad: Tensor, buf: Tensor, lr: float, momentum: float) -> None:
    """One SGD step with Nesterov momentum as torch.optim.SGD(nesterov=True) computes it
    (no weight decay, dampening 0): buf <- mu buf + g; p <- p - lr (g + mu buf). With mu = 0
    it is plain SGD. DiLoCo's outer optimizer (Douillard et al. 2023: lr 0.7, mu 0.9)."""
    buf.mul_(momentum).add_(grad)
    p.add_(grad.add(buf, alpha=momentum), alpha=-lr)


def sign_votes(x: Tensor, workers: int) -> Tensor:
    """A worker's vote on each coordinate, int8: sign(x), so +1, -1, or 0 where x is exactly
    zero (gradient and momentum both zero: a parameter no batch has touched). A zero abstains:
    it adds nothing to the vote, and a coordinate where every worker abstains moves by weight
    decay only, as in Lion; the transports carry abstentions (lionsim.transports.abstain).
    `workers` is kept for callers: the vote is the same for every N."""
    return torch.sign(x).to(torch.int8)
