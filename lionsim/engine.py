"""The training-step template every strategy and backend share.

    grads [w, P] -> encode (local rule) -> aggregate (transport) -> apply (replica)
                 -> sync (optional) -> the collectives that step issued

It runs unchanged on the simulator (w = W rows) and on a real rank (w = 1).
"""

from __future__ import annotations

from torch import Tensor

from lionsim.backends import Comm
from lionsim.network.calls import CollectiveCall
from lionsim.strategies import Strategy
from lionsim.timing import Clock
from lionsim.transports import Transport, combine_alone


def train_step(strategy: Strategy, transport: Transport, comm: Comm, grads: Tensor,
               params: Tensor, step: int, clock: Clock) -> list[CollectiveCall]:
    """Advance the replica `params` [P] by one step from per-worker `grads` [w, P]."""
    with clock.section("encode"):
        payload = strategy.encode(grads, params, comm, clock)
    if comm.world_size == 1:  # a lone worker talks to nobody
        with clock.section("decode"):
            aggregate = combine_alone(payload)
        calls: list[CollectiveCall] = []
    else:
        aggregate = transport.aggregate(payload, comm, clock)
        calls = transport.plan(payload.spec, comm.world_size) + strategy.extra_calls(step)
    with clock.section("update"):
        strategy.apply(params, aggregate)
    strategy.sync(comm, step, clock)
    return calls
