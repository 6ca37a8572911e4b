"""A strategy stepped on the simulator over given gradients: the template's own train_step on a
small layout of two tensors, for comparing strategies with plain references written from their
papers' equations."""

from __future__ import annotations

import math

import torch

from lionsim.backends import SimComm
from lionsim.engine import train_step
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig
from lionsim.strategies.core.given import flags
from lionsim.timing import Clock
from lionsim.transports import TRANSPORTS

SEGMENTS = [("w", torch.zeros(7, 3)), ("b", torch.zeros(5))]  # 26 parameters in two tensors
BOUNDS = [(0, 21), (21, 26)]
"""Each tensor's [start, end) in the flat vector."""


def layout_of(tensors: list[tuple[str, tuple[int, ...]]]) -> ParamLayout:
    """The layout of named tensors of these shapes (zeros: only the shapes and names matter)."""
    return ParamLayout.of([(name, torch.zeros(shape)) for name, shape in tensors])


def split_flat(flat: torch.Tensor, tensors: list[tuple[str, tuple[int, ...]]]) -> list[torch.Tensor]:
    """The flat vector cut back into the tensors' shapes, in order (views)."""
    out, offset = [], 0
    for _, shape in tensors:
        n = math.prod(shape)
        out.append(flat[offset : offset + n].reshape(shape))
        offset += n
    return out


def run_strategy(name, transport, grads_per_step, params, **cfg):
    """Step strategy `name` over `transport` on grads_per_step ([W, 26] each) from `params` [26]
    (updated in place); `cfg`: StrategyConfig fields and the strategy's options by flag name.
    Returns the strategy (its state) and what each step sent."""
    layout = ParamLayout.of(SEGMENTS)
    comm = SimComm(grads_per_step[0].shape[0])
    strategy = STRATEGIES.get(name)(StrategyConfig(**{k: v for k, v in cfg.items() if k not in flags()},
                                                   options={k: v for k, v in cfg.items() if k in flags()}), layout, comm)
    t, clock = TRANSPORTS.get(transport)(), Clock()
    sent = [train_step(strategy, t, comm, g.clone(), params, step, clock) for step, g in enumerate(grads_per_step, 1)]
    return strategy, sent


def run_seeded(name, transport, layout, cfg, workers, steps, seed):
    """Strategy `name` (StrategyConfig `cfg`) on `layout` over `transport` with `workers` simulated
    workers: `steps` gradients [W, numel], then the start x0 [numel], drawn from one generator of
    `seed`, and stepped from x0. Returns (grads, x0, x after the steps, the strategy, what each
    step sent)."""
    gen = torch.Generator().manual_seed(seed)
    grads = [torch.randn(workers, layout.numel, generator=gen) for _ in range(steps)]
    x0 = torch.randn(layout.numel, generator=gen)
    comm = SimComm(workers)
    strategy = STRATEGIES.get(name)(cfg, layout, comm)
    x = x0.clone()
    strategy.start(x)
    sent = [train_step(strategy, TRANSPORTS.get(transport)(), comm, g.clone(), x, step, Clock())
            for step, g in enumerate(grads, 1)]
    return grads, x0, x, strategy, sent


def random_grads(workers, steps, seed):
    """`steps` gradients [workers, 26] of seed `seed`."""
    torch.manual_seed(seed)
    return [torch.randn(workers, 26) for _ in range(steps)]
