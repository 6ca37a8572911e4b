"""What a strategy sends for a model of P parameters, without training or P-sized state.

The strategy itself decides (its payload kind, vote rule, level count, extra collectives):
lionsim builds it on a stand-in layout with one parameter per tensor (T tensors, so the
per-tensor counts are the model's) and N simulated workers, asks it, and scales the
per-parameter counts to P. Nothing of size P (or N) is allocated.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch

from lionsim.network import CollectiveCall
from lionsim.runs import RunSpec
from lionsim.strategies import ParamLayout, StrategyConfig
from lionsim.transports import TRANSPORTS, PayloadSpec, Transport

STEP = 1
"""The (1-based) step whose extra collectives are priced: a steady step, with momentum sync off."""


@dataclass(frozen=True, slots=True)
class Probe:
    """A strategy/transport pair's payload for a model of `spec.numel` parameters on N workers."""

    transport: Transport
    spec: PayloadSpec
    extra_calls: tuple[CollectiveCall, ...]
    """The strategy's own collectives at a steady step (e.g. TernGrad's scale maximum)."""


@dataclass(frozen=True, slots=True)
class _OneOfMany:
    """What a strategy reads of its communicator when it is built: N workers voting, one of them
    held here (a strategy's state is [w, P]: for N workers at once, 10^8 workers of a 148-tensor
    stand-in asked for 59 GB; the payload depends on N, not on how many are held)."""

    world_size: int
    local_workers: int = 1
    first_worker: int = 0
    ranks: int = 1


def probe(run: RunSpec, *, params: int, tensors: int, workers: int, topk_ratio: float = 0.01,
          tie: str = "zero") -> Probe:
    """Build `run`'s strategy on a stand-in layout and read its payload spec for `params` parameters."""
    layout = ParamLayout(names=[f"t{i}" for i in range(tensors)], numels=[1] * tensors,
                         segment_ids=torch.arange(tensors))
    strategy = run.strategy_class(StrategyConfig(topk_ratio=topk_ratio, tie=tie), layout, _OneOfMany(workers))
    small = strategy.payload_spec()
    # sparse (dgc, per tensor: at least one pair each, ceil(ratio * numel) of a tensor): the
    # tensors' sizes are unknown here, so ceil(ratio * P), at least one per tensor; the
    # per-tensor sum lies within T of it
    k = max(tensors, math.ceil(topk_ratio * params)) if small.kind == "sparse" else 0
    spec = dataclasses.replace(small, numel=params, k=k)
    transport = TRANSPORTS.get(run.transport)()
    transport.check(spec, workers)
    extra = tuple(strategy.extra_calls(STEP)) if workers > 1 else ()
    return Probe(transport=transport, spec=spec, extra_calls=extra)
