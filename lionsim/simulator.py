"""The `sim` backend's compute: per-worker gradients of one shared model.

All strategies keep replicas identical, so one model serves every virtual worker; each
worker's gradient comes from its own batch. A plain loop over workers measured faster than
torch.func.vmap on this CPU (REFERENCE.md 7: 2.3 s vs 4.6 s at 32 workers for a small ViT,
and attention has no vmap batching rule), so it is the loop.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from lionsim.errors import LionsimError
from lionsim.strategies import gather_grads


def worker_gradients(model: nn.Module, loss_fn, batches: list[tuple[Tensor, Tensor]],
                     out: Tensor) -> list[float]:
    """Fill out [W, P] with each worker's gradient on its batch; return the W losses."""
    losses = []
    for i, (inputs, targets) in enumerate(batches):
        model.zero_grad(set_to_none=True)
        loss = loss_fn(model, inputs, targets)
        loss.backward()
        gather_grads(model, out[i])
        losses.append(loss.item())
    return losses


def vmap_gradients(model: nn.Module, loss_fn, batches: list[tuple[Tensor, Tensor]],
                   out: Tensor) -> list[float]:
    """worker_gradients with torch.func.vmap over the workers (all batches the same shape)."""
    from torch.func import functional_call, grad_and_value, vmap

    names = [n for n, p in model.named_parameters() if p.requires_grad]
    params = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}

    def loss(p, inputs, targets):
        return loss_fn(lambda x: functional_call(model, p, (x,)), inputs, targets)

    inputs = torch.stack([x for x, _ in batches])  # (W, B, ...)
    targets = torch.stack([y for _, y in batches])
    grads, losses = vmap(grad_and_value(loss), in_dims=(None, 0, 0))(params, inputs, targets)
    torch.cat([grads[n].reshape(len(batches), -1) for n in names], dim=1, out=out)
    return losses.tolist()


GRADIENT_METHODS = {"loop": worker_gradients, "vmap": vmap_gradients}

VMAP_MIN_WORKERS = 8
"""vmap costs a fixed ~2 ms of Python per call (pytrees, functional_call), so with fewer workers
in a process the loop is faster (mlp small, one thread: vmap 1.1x the loop's time at 4 workers,
0.7x at 8, 0.3x at 32; `python -m lionsim.perf gradients`)."""


def gradient_method(preferred: str, local_workers: int) -> str:
    """The method a process with `local_workers` workers uses for a workload that prefers `preferred`."""
    return "loop" if preferred == "vmap" and local_workers < VMAP_MIN_WORKERS else preferred


def check_finite(losses: list[float], grads: Tensor, where: str) -> None:
    """Stop with one clear line on a NaN/inf loss or gradient (a diverged run)."""
    bad = [i for i, loss in enumerate(losses) if not math.isfinite(loss)]
    if bad or not torch.isfinite(grads).all():
        worker = bad[0] if bad else int((~torch.isfinite(grads)).any(1).nonzero()[0])
        raise LionsimError(f"non-finite loss or gradient on worker {worker} at {where}; "
                           "the run diverged: lower --lr or check the data")
