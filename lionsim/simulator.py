"""The `sim` backend's compute: per-worker gradients of one shared model.

Most strategies keep replicas identical, so one model serves every virtual worker; each
worker's gradient comes from its own batch. Strategies whose replicas differ between syncs
(local SGD, DiLoCo) hand their per-worker parameters (`Replicas`): the loop loads each
worker's row into the model before its forward (a copy of P floats, small beside a forward
and backward) and restores the shared replica after; vmap maps over the rows. The loop or
torch.func.vmap is chosen per workload by measurement (VMAP_MIN_WORKERS, `python -m
lionsim.perf gradients`): attention has no CPU vmap batching rule, so vit and gpt loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from lionsim.strategies import gather_grads


@dataclass(frozen=True, slots=True)
class Replicas:
    """Workers whose parameters differ: each computes on its own row."""

    flat: Tensor
    """[P]: the flat vector the model's parameters are views of (lionsim.strategies.flatten_parameters)."""
    rows: Tensor
    """[w, P]: each worker's parameters, in the flat layout."""


def worker_gradients(model: nn.Module, loss_fn, batches: list[tuple[Tensor, Tensor]],
                     out: Tensor, replicas: Replicas | None = None, used: Tensor | None = None) -> list[float]:
    """Fill out [W, P] with each worker's gradient on its batch (at its own parameters, given
    `replicas`); return the W losses. `used` [T] bool: set where some worker's tensor had a
    gradient (autograd leaves a tensor its loss never touched at None)."""
    saved = None if replicas is None else replicas.flat.clone()
    losses = []
    try:
        for i, (inputs, targets) in enumerate(batches):
            if replicas is not None:
                replicas.flat.copy_(replicas.rows[i])
            model.zero_grad(set_to_none=True)
            loss = loss_fn(model, inputs, targets)
            loss.backward()
            had = gather_grads(model, out[i])
            if used is not None:
                used |= torch.tensor(had, device=used.device)
            losses.append(loss.item())
    finally:
        if saved is not None:  # the model holds the shared replica again (evaluation reads it)
            replicas.flat.copy_(saved)
    return losses


def vmap_gradients(model: nn.Module, loss_fn, batches: list[tuple[Tensor, Tensor]],
                   out: Tensor, replicas: Replicas | None = None, used: Tensor | None = None) -> list[float]:
    """worker_gradients with torch.func.vmap over the workers (all batches the same shape).
    torch.func returns a zero gradient, never None, for a tensor the loss does not touch, so
    every tensor counts as used here (the workloads that vmap use every tensor)."""
    from torch.func import functional_call, grad_and_value, vmap

    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    names = [n for n, _ in named]
    if replicas is None:
        params, param_dim = {n: p.detach() for n, p in named}, None
    else:  # each worker's row, cut into the model's tensors: [w, *shape] each
        params, offset, w = {}, 0, replicas.rows.shape[0]
        for n, p in named:
            params[n] = replicas.rows[:, offset : offset + p.numel()].view(w, *p.shape)
            offset += p.numel()
        param_dim = 0

    def loss(p, inputs, targets):
        return loss_fn(lambda x: functional_call(model, p, (x,)), inputs, targets)

    inputs = torch.stack([x for x, _ in batches])  # (W, B, ...)
    targets = torch.stack([y for _, y in batches])
    grads, losses = vmap(grad_and_value(loss), in_dims=(param_dim, 0, 0))(params, inputs, targets)
    torch.cat([grads[n].reshape(len(batches), -1) for n in names], dim=1, out=out)
    if used is not None:
        used.fill_(True)
    return losses.tolist()


GRADIENT_METHODS = {"loop": worker_gradients, "vmap": vmap_gradients}

VMAP_MIN_WORKERS = 8
"""vmap costs a fixed ~2 ms of Python per call (pytrees, functional_call), so with fewer workers
in a process the loop is faster (mlp small, one thread: vmap 1.1x the loop's time at 4 workers,
0.7x at 8, 0.3x at 32; `python -m lionsim.perf gradients`)."""


def gradient_method(preferred: str, local_workers: int) -> str:
    """The method a process with `local_workers` workers uses for a workload that prefers `preferred`."""
    return "loop" if preferred == "vmap" and local_workers < VMAP_MIN_WORKERS else preferred
