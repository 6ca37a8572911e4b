"""The training-step template every strategy and backend share.

    grads [w, P] -> encode (local rule) -> aggregate (transport) -> apply (replica)
                 -> sync (optional) -> what the step sent (priced by the network model)

It runs unchanged on the simulator (w = W rows) and on a real rank (w = W/R rows).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from torch import Tensor

from lionsim.backends import Comm
from lionsim.network.calls import CollectiveCall
from lionsim.strategies import Strategy
from lionsim.timing import Clock
from lionsim.transports import PayloadSpec, Transport, combine_alone


@dataclass(frozen=True, slots=True)
class Sent:
    """What one step put on the wire: the transport's payload and the strategy's own calls.

    The payload spec is per step (a strategy may change what it sends from step to step, e.g.
    a warm-up phase), so the network model prices this, not a spec fixed at the start."""

    spec: PayloadSpec | None
    """The payload the transport carried; None when nothing was sent (a lone worker)."""
    extra: tuple[CollectiveCall, ...] = field(default=())
    """The strategy's own collectives this step (scale maxima, momentum sync)."""
    agreement: float | None = None
    """A vote of votes (hier-1bit): the share of coordinates where it equals the flat vote."""

    def calls(self, transport: Transport, workers: int) -> list[CollectiveCall]:
        """Every collective of the step: the payload's, in issue order, then the strategy's own
        (which may have run before it: terngrad's scale maximum runs in encode)."""
        payload = transport.plan(self.spec, workers) if self.spec is not None else []
        return payload + list(self.extra)


def train_step(strategy: Strategy, transport: Transport, comm: Comm, grads: Tensor,
               params: Tensor, step: int, clock: Clock) -> Sent:
    """Advance the replica `params` [P] by one step from per-worker `grads` [w, P]."""
    with clock.section("encode"):
        payload = strategy.encode(grads, params, comm, clock)
    if comm.world_size == 1:  # a lone worker talks to nobody
        with clock.section("decode"):
            aggregate = combine_alone(payload)
        sent = Sent(spec=None)
    else:
        aggregate = transport.aggregate(payload, comm, clock)
        sent = Sent(spec=payload.spec, extra=tuple(strategy.extra_calls(step)),
                    agreement=payload.extra.get("vote_agreement"))
    with clock.section("update"):
        strategy.apply(params, aggregate)
    strategy.sync(comm, step, clock)
    return sent
