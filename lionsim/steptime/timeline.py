"""The per-step time model shared by `lionsim estimate` and `lionsim bench`.

One worker's step, on two streams (as a GPU runs it: kernels on the compute stream,
collectives on one communication stream, collectives in issue order):

    compute stream  forward F | backward B, with each bucket's encode right after the part of
                    backward that produced it (encode E in all) | decode | update
    comm stream                  bucket 1 | bucket 2 | ... | bucket k

Backward produces gradients at a steady rate in parameters (each parameter costs the same
4T backward FLOPs: compute.flops), so a bucket whose last parameter is the C-th of P is
ready at r = F + (B + E) C / P. Bucket j's exchange starts when it is ready and the stream
is free: end_j = max(r_j, end_{j-1}) + c_j, which unrolls to
end = max_j (r_j + c_j + ... + c_k) (Lindley's recursion for one FIFO server). The step
waits for the last exchange; decode and update follow it (not overlapped: conservative).

    comm_s          sum of every exchange's cost (more buckets, more latency terms)
    comm_exposed_s  end - (F + B + E): the time the step waits for the network; at least
                    the last bucket's cost, since it is ready only when backward ends
    step_s          compute_s + encode_s + comm_exposed_s + decode_s + update_s

A transport that runs after backward (overlap.py), or the exchange of a strategy whose payload
exists only after its own update (DiLoCo), is one exchange ready at F + B + E, so its whole
cost is exposed. A strategy's extra collectives are added to both, never hidden.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Sequence

from lionsim.steptime.overlap import Buckets, OverlapConfig
from lionsim.network import AUTO, COLLECTIVE_ALGORITHMS, CallCost, CollectiveCall, Network, price
from lionsim.network.link import check_number
from lionsim.transports import PayloadSpec, Transport


@dataclass(frozen=True, kw_only=True, slots=True)
class StepWork:
    """One worker's compute-stream work in a step, seconds."""

    forward_s: float
    """Forward pass."""
    backward_s: float
    """Backward pass."""
    encode_s: float = 0.0
    """Local rule and packing, all buckets together."""
    decode_s: float = 0.0
    """Unpacking what arrived."""
    update_s: float = 0.0
    """Applying the aggregate to the replica and state."""

    def __post_init__(self) -> None:
        for name in ("forward_s", "backward_s", "encode_s", "decode_s", "update_s"):
            check_number(name, getattr(self, name), low=0.0, low_open=False)


@dataclass(frozen=True, kw_only=True, slots=True)
class StepTimes:
    """The modelled breakdown of one step, seconds."""

    forward_s: float
    backward_s: float
    encode_s: float
    comm_s: float
    """Every exchange's cost, summed."""
    comm_exposed_s: float
    """The part of comm_s the step waits for (module doc)."""
    decode_s: float
    update_s: float
    buckets: int
    """Exchanges the transport's payload ran in (1: once after backward; 0: nothing sent)."""
    sent_bytes: int = 0
    """Bytes one worker sends this step by the algorithms that were priced (every bucket and
    extra collective; the busiest worker's share where an algorithm is uneven)."""

    @property
    def compute_s(self) -> float:
        return self.forward_s + self.backward_s

    @property
    def step_s(self) -> float:
        return self.compute_s + self.encode_s + self.comm_exposed_s + self.decode_s + self.update_s

    def columns(self) -> dict[str, float]:
        """The time columns of steps.csv / estimate.csv."""
        return {
            "compute_s": self.compute_s,
            "encode_s": self.encode_s,
            "comm_s": self.comm_s,
            "comm_exposed_s": self.comm_exposed_s,
            "decode_s": self.decode_s,
            "update_s": self.update_s,
            "step_s": self.step_s,
        }


def bucket_spec(spec: PayloadSpec, numel: int) -> PayloadSpec:
    """The payload of a bucket of `numel` of the spec's parameters: per-parameter counts scale."""

    def share(count: int) -> int:
        return max(1, round(count * numel / spec.numel)) if count else 0

    return dataclasses.replace(spec, numel=numel, k=share(spec.k), segments=share(spec.segments),
                               factors=(share(spec.factors[0]), share(spec.factors[1])),
                               uncompressed=share(spec.uncompressed))


def price_call(call: CollectiveCall, workers: int, network: Network, algorithm: str = AUTO) -> CallCost:
    """`network.price` with a named algorithm for the ops it implements, the cheapest for the
    others (one `--algorithm` serves every strategy: ring cannot run an all-to-all)."""
    if algorithm != AUTO and call.op not in COLLECTIVE_ALGORITHMS.get(algorithm).ops:
        algorithm = AUTO
    return price(call, workers, network, algorithm)


@dataclass(frozen=True, slots=True)
class Priced:
    """Collectives priced together: seconds, and the bytes one worker sends by the priced algorithms."""

    time_s: float = 0.0
    sent_bytes: int = 0

    def __add__(self, other: Priced) -> Priced:
        return Priced(self.time_s + other.time_s, self.sent_bytes + other.sent_bytes)

    def times(self, count: int) -> Priced:
        return Priced(self.time_s * count, self.sent_bytes * count)


def price_calls(calls: Sequence[CollectiveCall], workers: int, network: Network, algorithm: str = AUTO) -> Priced:
    """Collectives run one after another: seconds and whole bytes sent (a fractional share of a
    ring chunk is still a byte on the wire: each call's bytes round up)."""
    total = Priced()
    for call in calls:
        cost = price_call(call, workers, network, algorithm)
        total += Priced(cost.time_s, math.ceil(cost.sent_bytes - 1e-9))
    return total


def exchange_cost(transport: Transport, spec: PayloadSpec, workers: int, network: Network, algorithm: str = AUTO) -> Priced:
    """Every collective one aggregation of `spec` issues, run one after another."""
    return price_calls(transport.plan(spec, workers), workers, network, algorithm)


def serial_end(ready_s: Sequence[float], cost_s: Sequence[float]) -> float:
    """When the last exchange ends: exchanges in order on one stream, each starting when it is
    ready and the stream is free (the plain loop the closed form in step_times is tested against)."""
    end = float("-inf")
    for ready, cost in zip(ready_s, cost_s):
        end = max(end, ready) + cost
    return end


def bucketed_exposed(buckets: Buckets, first_cost: float, cost: float, window_s: float, numel: int) -> float:
    """max_j (r_j + c_j + ... + c_k) - (F + window) for the bucket layout of Buckets.

    r_j + suffix_j is linear in j over the equal full buckets, so its maximum is at the first
    or the last full bucket, or at the partial first bucket: three candidates, not k.
    """
    k = buckets.count
    candidates = []
    if buckets.first:  # ready after `first` parameters; everything after it still to send
        candidates.append(first_cost + k * cost - window_s * (1 - buckets.first / numel))
    if k:
        candidates.append(k * cost - window_s * (1 - (buckets.first + buckets.size) / numel))  # first full bucket
        candidates.append(cost)  # the last bucket, ready when backward ends
    return max(candidates)


def step_times(
    work: StepWork,
    *,
    transport: Transport,
    spec: PayloadSpec | None,
    workers: int,
    network: Network,
    overlap: OverlapConfig,
    extra_calls: Sequence[CollectiveCall] = (),
    algorithm: str = AUTO,
    after_step: bool = False,
) -> StepTimes:
    """The step breakdown of one worker (module doc) for `spec` sent over `transport` (None: a
    step that sends nothing, as a local step of local SGD). `after_step`: the strategy's
    payload exists only after the step's own update (DiLoCo's pseudo-gradient), so it is one
    exchange after backward whatever the transport."""
    extra = price_calls(extra_calls, workers, network, algorithm) if workers > 1 else Priced()
    if workers == 1 or spec is None:
        comm, exposed, count = Priced(), 0.0, 0
    elif not after_step and overlap.bucketed(transport.name):
        buckets = Buckets.of(spec.numel, overlap.bucket_params)
        cost = exchange_cost(transport, bucket_spec(spec, buckets.size), workers, network, algorithm) if buckets.count else Priced()
        first = exchange_cost(transport, bucket_spec(spec, buckets.first), workers, network, algorithm) if buckets.first else Priced()
        comm = first + cost.times(buckets.count)
        window = work.backward_s + work.encode_s
        exposed = bucketed_exposed(buckets, first.time_s, cost.time_s, window, spec.numel)
        count = buckets.total
    else:
        comm = exchange_cost(transport, spec, workers, network, algorithm)
        exposed, count = comm.time_s, 1
    return StepTimes(
        forward_s=work.forward_s,
        backward_s=work.backward_s,
        encode_s=work.encode_s,
        comm_s=comm.time_s + extra.time_s,
        comm_exposed_s=exposed + extra.time_s,
        decode_s=work.decode_s,
        update_s=work.update_s,
        buckets=count,
        sent_bytes=comm.sent_bytes + extra.sent_bytes,
    )
