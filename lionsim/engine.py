"""The training-step template every strategy and backend share.

    grads [w, P] -> encode (local rule) -> aggregate (transport) -> apply (replica)
                 -> sync (optional) -> what the step sent (priced by the network model)

It runs unchanged on the simulator (w = W rows) and on a real rank (w = W/R rows). A
strategy that takes local steps (local SGD, DiLoCo) encodes nothing between its syncs: such a
step sends nothing and its apply gets no aggregate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from torch import Tensor

from lionsim.backends import Comm
from lionsim.network.calls import CollectiveCall
from lionsim.strategies import Strategy
from lionsim.timing import Clock
from lionsim.transports import PayloadSpec, Transport, combine_alone
from lionsim.transports.checks import StepChecks


@dataclass(frozen=True, slots=True)
class Sent:
    """What one step put on the wire: the transport's payload and the strategy's own calls.

    The payload spec is per step (a strategy may change what it sends from step to step, e.g.
    a warm-up phase), so the network model prices this, not a spec fixed at the start."""

    spec: PayloadSpec | None
    """The payload the transport carried; None when nothing was sent (a lone worker, a local step)."""
    extra: tuple[CollectiveCall, ...] = field(default=())
    """The strategy's own collectives this step (scale maxima, momentum sync)."""
    agreement: float | None = None
    """A vote of votes (hier-1bit): the share of coordinates where it equals the flat vote."""
    local: bool = False
    """A local step: the strategy had nothing to send (local SGD or DiLoCo between syncs)."""
    aggregate_error: float | None = None
    """A lossy float transport (bf16, fp8): ||aggregate - exact mean|| / ||exact mean||, where every
    worker is in the process (lionsim.transports.error); None elsewhere."""

    def calls(self, transport: Transport, workers: int) -> list[CollectiveCall]:
        """Every collective of the step: the payload's, in issue order, then the strategy's own
        (which may have run before it: terngrad's scale maximum runs in encode)."""
        payload = transport.plan(self.spec, workers) if self.spec is not None else []
        return payload + list(self.extra)


def train_step(strategy: Strategy, transport: Transport, comm: Comm, grads: Tensor,
               params: Tensor, step: int, clock: Clock, frozen: Tensor | None = None,
               checks: StepChecks | None = None) -> Sent:
    """Advance the replica `params` [P] by one step from per-worker `grads` [w, P]. `frozen`: flat
    positions of the tensors no worker has a gradient for; the step leaves them and the
    strategy's state for them as they were, as torch.optim skips a parameter whose grad is None
    (and as lionsim.optim.DistributedLion does). `checks`: what a plug-in returned, checked
    before it is read (lionsim.transports.checks)."""
    held = None if frozen is None else [(t, t[..., frozen].clone()) for t in [params, *strategy.per_parameter_state()]]
    with clock.section("encode"):
        payload = strategy.encode(grads, params, comm, clock)
    if checks is not None:
        checks.payload(payload)
    if payload is None:  # a local step: nothing to exchange
        aggregate, sent = None, Sent(spec=None, local=True)
    elif comm.world_size == 1:  # a lone worker talks to nobody
        with clock.section("decode"):
            aggregate = combine_alone(payload)
        sent = Sent(spec=None)
    else:
        aggregate = transport.aggregate(payload, comm, clock)
        if checks is not None:
            checks.aggregate(aggregate, payload.spec)
        sent = Sent(spec=payload.spec, extra=tuple(strategy.extra_calls(step)),
                    agreement=payload.extra.get("vote_agreement"),
                    aggregate_error=payload.extra.get("aggregate_rel_error"))
    with clock.section("update"):
        strategy.apply(params, aggregate)
    strategy.sync(comm, step, clock)
    if held is not None:
        with clock.section("update"):
            for tensor, before in held:
                tensor[..., frozen] = before
    return sent
