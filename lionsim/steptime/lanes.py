"""The modelled step drawn as spans: what `--trace` shows for a sim bench and for `estimate`.

timeline.py gives a step's totals; this lays the same model out in time, one list of spans
per worker, on two lanes (the two streams of timeline.py):

    compute  forward [0, F f] | backward | encode (all buckets' encode, drawn after backward)
             | wait for the slowest worker | wait for the network | decode | update
    comm     bucket 1's collectives | bucket 2's | ... | the strategy's own collectives

Worker i's forward and backward are scaled by its factor f_i (1 when workers are even). An
exchange needs every worker's bucket, so bucket j (its last parameter the C_j-th of P) is
ready when the slowest worker's is, r_j = M (F + B C_j / P) + E C_j / P with M = max f
(stragglers.py); it starts when it is ready and the comm stream is free (Lindley's recursion,
each exchange's collectives one after another) and the strategy's own collectives follow the
last one. A host-staged library's copies (timeline.py, "Host copies") run beside the stream
during backward: each exchange is drawn as its transfers, then the last one's copies. Every
worker then decodes and updates, so the step ends at the same time on every worker: T(M), the
step_s of steps.csv. An exchange whose result a later step reads (Streaming
DiLoCo's) runs on past its step's end: the step waits only for what those steps do not hide
(timeline.PricedStep.hidden), and the next steps are laid over the rest of it. Each collective is priced by the algorithm
price_step's pricing picks and named by op, size and that algorithm.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Sequence

from lionsim.network import AUTO, CollectiveCall, Network
from lionsim.numbers import bytes_text
from lionsim.schedules import PER_BUCKET
from lionsim.steptime.overlap import Buckets, OverlapConfig
from lionsim.steptime.timeline import Priced, PricedStep, StepWork, bucket_spec, price_call
from lionsim.transports import PayloadSpec, Transport
from lionsim.transports.base import plan_on

COMPUTE, COMM = "compute", "comm"
"""The two lanes (Chrome trace threads) of a worker."""
WAIT_WORKER = "wait for slowest worker"
WAIT_NETWORK = "wait for network"


@dataclass(frozen=True, slots=True)
class Span:
    """One stretch of a worker's step, seconds from the step's start."""

    lane: str
    """COMPUTE or COMM."""
    name: str
    start_s: float
    dur_s: float
    args: dict = field(default_factory=dict)
    """What the viewer shows on a click (bytes, algorithm, dtype, bucket)."""

    @property
    def end_s(self) -> float:
        return self.start_s + self.dur_s


@dataclass(frozen=True, slots=True)
class PricedCall:
    """One collective with its modelled time and the algorithm that priced it ("ring/simple": with
    NCCL's protocol where its tuning model chose one, as estimate.csv's algorithm column says)."""

    call: CollectiveCall
    time_s: float
    algorithm: str
    staging_s: float = 0.0
    """The part of time_s a host-staged library copies buffers (timeline.py, "Host copies")."""

    def span(self, start_s: float, **args) -> Span:
        c = self.call
        return Span(COMM, f"{c.op} {bytes_text(c.nbytes)} {self.algorithm}", start_s, self.time_s,
                    {"op": c.op, "bytes": c.nbytes, "algorithm": self.algorithm, "dtype": c.dtype,
                     **({"label": c.label} if c.label else {}), **({"scope": c.scope} if c.scope != "world" else {}),
                     **args})


def priced_calls(calls: Sequence[CollectiveCall], workers: int, network: Network, algorithm: str) -> list[PricedCall]:
    out = []
    for call in calls:
        cost = price_call(call, workers, network, algorithm)
        out.append(PricedCall(call, cost.time_s, cost.label, cost.staging_s))
    return out


def modelled_lanes(*, work: StepWork, factors: Sequence[float], transport: Transport, spec: PayloadSpec | None,
                   network: Network, overlap: OverlapConfig, extra_calls: Sequence[CollectiveCall] = (),
                   algorithm: str = AUTO, strategy=None, workers: int | None = None,
                   tensors: Sequence[PayloadSpec] | None = None) -> list[list[Span]]:
    """One step of every worker as spans (module doc); `factors` [W] each worker's compute
    factor, the other keywords as timeline.price_step's; `workers` W when the factors stand for
    fewer (workers all alike: their lanes are the same)."""
    workers = len(factors) if workers is None else workers
    slowest = max(factors)
    F, B, E = work.forward_s, work.backward_s, work.encode_s
    ready_all = slowest * (F + B) + E  # every worker's backward and encode done
    exchanges: list[tuple[float, list[PricedCall]]] = []  # (ready, its collectives)
    hidden = None  # an after-backward exchange whose result a later step uses: what the step waits for
    if workers > 1 and spec is not None:
        if overlap.schedule(transport, strategy) == PER_BUCKET:
            per_tensor = overlap.per_tensor(transport, strategy)
            if per_tensor and not tensors:
                raise ValueError("--overlap tensors needs the step's payload per tensor (timeline.tensor_specs)")
            units = (list(reversed(tensors)) if per_tensor
                     else [bucket_spec(spec, size) for size in Buckets.of(spec.numel, overlap.bucket_params).sizes()])
            priced, done, total = {}, 0, sum(u.numel for u in units)
            for unit in units:
                if unit not in priced:
                    priced[unit] = priced_calls(plan_on(transport, unit, workers, network.workers_per_node), workers,
                                                network, algorithm)
                done += unit.numel
                share = done / total
                exchanges.append((slowest * (F + B * share) + E * share, priced[unit]))
        else:
            calls = priced_calls(plan_on(transport, spec, workers, network.workers_per_node), workers, network, algorithm)
            exchanges.append((ready_all, calls))
            if spec.hidden_steps or spec.hidden_pieces:  # it runs on into the next steps (PricedStep.hidden)
                alone = PricedStep(comm=Priced(sum(c.time_s for c in calls)), extra=Priced(), buckets=None, count=1,
                                   hidden_steps=spec.hidden_steps, hidden_pieces=spec.hidden_pieces)
                hidden = float(alone.hidden(slowest * F, slowest * B, E))
    comm: list[Span] = []
    free = 0.0
    during = len(exchanges) > 1  # during backward: the stream holds transfers, the copies run beside
    for j, (ready, calls) in enumerate(exchanges):
        t = max(ready, free)
        for c in calls:
            held = dataclasses.replace(c, time_s=c.time_s - c.staging_s) if during else c
            comm.append(held.span(t, **({"bucket": j + 1} if during else {})))
            t += held.time_s
        free = t
    copies = sum(c.staging_s for c in exchanges[-1][1]) if during else 0.0
    if copies > 0:  # the last exchange's host copies, nothing after them to hide them; at least the copy queue
        engine = 0.0
        for ready, calls in exchanges:
            engine = max(engine, ready) + sum(c.staging_s for c in calls)
        ends = max(free + copies, engine)
        comm.append(Span(COMM, "host copies", free, ends - free, {"bucket": len(exchanges)}))
        free = ends
    end = max(free, ready_all) if hidden is None else ready_all + hidden
    extra = priced_calls(extra_calls, workers, network, algorithm) if workers > 1 else []
    for c in extra:
        comm.append(c.span(end, strategy_call=True))
        end += c.time_s
    lanes = []
    for f in factors:
        own = f * (F + B) + E
        spans = [Span(COMPUTE, "forward", 0.0, f * F), Span(COMPUTE, "backward", f * F, f * B),
                 Span(COMPUTE, "encode", f * (F + B), E), Span(COMPUTE, WAIT_WORKER, own, ready_all - own),
                 Span(COMPUTE, WAIT_NETWORK, ready_all, end - ready_all), Span(COMPUTE, "decode", end, work.decode_s),
                 Span(COMPUTE, "update", end + work.decode_s, work.update_s)]
        lanes.append([s for s in spans if s.dur_s > 0] + comm)
    return lanes


def step_end(spans: Sequence[Span]) -> float:
    """Where a worker's modelled step ends: its compute lane's last span (an exchange whose result
    a later step reads runs on past it)."""
    return max(s.end_s for s in spans if s.lane == COMPUTE)
