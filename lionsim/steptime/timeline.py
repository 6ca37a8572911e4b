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

Per tensor (--overlap tensors, overlap.py) the exchanges are the model's parameter tensors in the
order backward produces them (the last tensor first), each its own payload (tensor_specs: a
shape-dependent strategy's own spec for that tensor, else the tensor's share of the step's), on
the same stream: end = max_j (r_j + c_j + ... + c_k) over every tensor (overlap.units_exposed).

Host copies. A library on host memory (traits.Staging: MPI without CUDA support, Horovod built
without GPU operations) copies each call's buffers to the host and back. Those copies are
copy-engine work, issued as each gradient is ready (TensorFlow's executor copies a tensor to a
CPU op's input as soon as backward produces it), so during backward one exchange's copies run
beside another's transfer: the stream holds each exchange's transfer alone (c_j less its
copies), and the step also waits for the last exchange's copies, which nothing follows:
end = max_j (r_j + t_j + ... + t_k) + s_k, and at least the copy engines' own queue, taken as one
(conservative: a GPU's two directions have an engine each): max_j (r_j + s_j + ... + s_k). One
exchange after backward runs its copies in line, as a framework that calls MPI between copies
does (DeepSpeed's first 1-bit Adam: cupy.asnumpy, the call, cupy.asarray), so its whole cost is
exposed as before.

An exchange the run's schedule puts after backward (overlap.py: the strategy's reference
schedule, what its transport can do and --overlap), or the exchange of a strategy whose payload
exists only after its own update (DiLoCo), is one exchange ready at F + B + E, so its whole
cost is exposed, less what later steps hide where the result is used steps later (Streaming
DiLoCo: `hidden`). A strategy's extra collectives are added to both, never hidden.

Uneven workers (lionsim.steptime.stragglers): an exchange needs every worker's bucket, so it
is ready when the slowest worker's is; the step is this timeline at the slowest worker's
compute, and `wait_s` is what that adds to the median worker's step.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from lionsim.steptime.overlap import Buckets, OverlapConfig, bucketed_exposed, units_exposed
from lionsim.network import AUTO, COLLECTIVE_ALGORITHMS, CallCost, CollectiveCall, Network, price
from lionsim.network.checks import check_number
from lionsim.network.cost import calls_label
from lionsim.schedules import PER_BUCKET
from lionsim.transports import PayloadSpec, Transport
from lionsim.transports.base import plan_on


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
    inter_bytes: int = 0
    """Bytes one node sends across nodes, through its inter link (CallCost.inter_bytes): on a
    flat network a node is a worker, and these are its sent_bytes."""
    wait_s: float = 0.0
    """Uneven workers: what waiting for the slowest worker adds to the median worker's step,
    whose compute forward_s + backward_s is (stragglers.py); 0 when workers are even."""
    compute_max_s: float | None = None
    """Uneven workers: the slowest worker's forward + backward (None: every worker's is compute_s)."""
    algorithm: str = ""
    """The algorithm (NCCL: and protocol) the exchange's largest call was priced with, else the
    strategy's own calls' (Priced.algorithm); "" where nothing is sent."""
    folded: int = 0
    """Ranks that call's algorithm folded in first (Priced.folded)."""

    @property
    def compute_s(self) -> float:
        return self.forward_s + self.backward_s

    @property
    def step_s(self) -> float:
        return self.compute_s + self.wait_s + self.encode_s + self.comm_exposed_s + self.decode_s + self.update_s

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
            "compute_median_s": self.compute_s,
            "compute_max_s": self.compute_s if self.compute_max_s is None else self.compute_max_s,
            "wait_s": self.wait_s,
        }


def bucket_spec(spec: PayloadSpec, numel: int) -> PayloadSpec:
    """The payload of a bucket of `numel` of the spec's parameters: per-parameter counts scale."""

    def share(count: int) -> int:
        return max(1, round(count * numel / spec.numel)) if count else 0

    return dataclasses.replace(spec, numel=numel, k=share(spec.k), segments=share(spec.segments),
                               factors=(share(spec.factors[0]), share(spec.factors[1])),
                               uncompressed=share(spec.uncompressed))


def tensor_specs(spec: PayloadSpec, shapes: Sequence[tuple[int, ...]], strategy=None) -> list[PayloadSpec]:
    """One payload per parameter tensor of `shapes` (model order), for a step that sends `spec`:
    a shape-dependent strategy's own spec for that tensor where the step sends its usual kind
    (PowerSGD: a vector averaged whole, a matrix as its two factors), else the tensor's share of
    `spec` (bucket_spec)."""
    own = (strategy is not None and getattr(strategy, "shape_dependent", False)
           and spec.kind == getattr(strategy, "payload_kind", None))
    if own:  # asked on a copy: a spec_for may size the strategy's own calls (muon-dist's all-gather)
        asked = copy.copy(strategy)
        return [asked.spec_for([tuple(shape)]) for shape in shapes]
    return [bucket_spec(spec, max(1, math.prod(shape))) for shape in shapes]


def price_call(call: CollectiveCall, workers: int, network: Network, algorithm: str = AUTO) -> CallCost:
    """`network.price` with a named algorithm for the ops it implements, the cheapest for the
    others (one `--algorithm` serves every strategy: ring cannot run an all-to-all)."""
    if algorithm != AUTO and call.op not in COLLECTIVE_ALGORITHMS.get(algorithm).ops:
        algorithm = AUTO
    return price(call, workers, network, algorithm)


@dataclass(frozen=True, slots=True)
class OpPriced:
    """The largest call of one op among collectives priced together, as the algorithm column names it."""

    op: str
    label: str
    """The algorithm (and NCCL's protocol) it was priced with (CallCost.label)."""
    folded: int
    """Ranks its algorithm folded in first (CallCost.folded)."""
    largest: float
    """Its size, bytes (calls.py convention)."""


def _merged(ops: tuple[OpPriced, ...], more: tuple[OpPriced, ...]) -> tuple[OpPriced, ...]:
    """Each op once, its largest call (the first of equals), in the order the ops first ran."""
    by_op = {o.op: o for o in ops}
    for o in more:
        if o.op not in by_op or o.largest > by_op[o.op].largest:
            by_op[o.op] = o
    return tuple(by_op.values())


@dataclass(frozen=True, slots=True)
class Priced:
    """Collectives priced together: seconds, and the bytes one worker sends by the priced
    algorithms (all of them, and those that cross nodes)."""

    time_s: float = 0.0
    sent_bytes: int = 0
    inter_bytes: int = 0
    staging_s: float = 0.0
    """The part of time_s a host-staged library spends copying buffers between device and host
    (CallCost.staging_s): copy-engine work, which another exchange's transfer can run beside."""
    algorithm: str = ""
    """The algorithm (and NCCL's protocol) the largest call was priced with (CallCost.label); "" for none."""
    folded: int = 0
    """Ranks the largest call's algorithm folded in first (CallCost.folded)."""
    largest: float = 0.0
    """That call's size, bytes (calls.py convention): which of two sums' calls is the larger."""
    ops: tuple[OpPriced, ...] = ()
    """Each op's largest call (_merged): what the algorithm column names where they differ (calls_label)."""

    def __add__(self, other: Priced) -> Priced:
        big = other if other.largest > self.largest else self  # the first of equals
        return Priced(self.time_s + other.time_s, self.sent_bytes + other.sent_bytes,
                      self.inter_bytes + other.inter_bytes, self.staging_s + other.staging_s,
                      big.algorithm, big.folded, big.largest, _merged(self.ops, other.ops))

    def times(self, count: int) -> Priced:
        return Priced(self.time_s * count, self.sent_bytes * count, self.inter_bytes * count, self.staging_s * count,
                      self.algorithm, self.folded, self.largest, self.ops)

    @property
    def transfer_s(self) -> float:
        """What holds the communication stream: time_s less the host copies."""
        return self.time_s - self.staging_s


def _whole(nbytes: float) -> int:
    """A fractional share of a ring chunk is still a byte on the wire."""
    return math.ceil(nbytes - 1e-9)


def price_calls(calls: Sequence[CollectiveCall], workers: int, network: Network, algorithm: str = AUTO) -> Priced:
    """Collectives run one after another: seconds and whole bytes sent (each call's bytes,
    and each call's bytes across nodes, round up)."""
    total = Priced()
    for call in calls:
        cost = price_call(call, workers, network, algorithm)
        total += Priced(cost.time_s, _whole(cost.sent_bytes), _whole(cost.inter_bytes), cost.staging_s,
                        cost.label, cost.folded, call.nbytes, (OpPriced(call.op, cost.label, cost.folded, call.nbytes),))
    return total


def exchange_cost(transport: Transport, spec: PayloadSpec, workers: int, network: Network, algorithm: str = AUTO) -> Priced:
    """Every collective one aggregation of `spec` issues, run one after another."""
    return price_calls(plan_on(transport, spec, workers, network.workers_per_node), workers, network, algorithm)


@dataclass(frozen=True, kw_only=True, slots=True)
class PricedStep:
    """A step's collectives priced once (the network part of step_times); `times` lays any
    compute-stream work on them, so uneven workers re-time a step without re-pricing it."""

    comm: Priced
    """The transport's exchanges, every bucket."""
    extra: Priced
    """The strategy's own collectives (never overlapped)."""
    buckets: Buckets | None
    """The bucket layout when the exchange runs per bucket during backward, else None."""
    first_cost_s: float = 0.0
    """Bucketed: the partial first bucket's exchange, its host copies left out (Priced.transfer_s)."""
    bucket_cost_s: float = 0.0
    """Bucketed: one full bucket's exchange, its host copies left out."""
    first_staging_s: float = 0.0
    """Bucketed: the partial first bucket's host copies (the copy engines' own queue)."""
    bucket_staging_s: float = 0.0
    """Bucketed: one full bucket's host copies."""
    unit_staging: tuple[float, ...] = ()
    """Per tensor: each exchange's host copies, in the order they run."""
    numel: int = 0
    count: int = 0
    """Exchanges the payload ran in (StepTimes.buckets)."""
    hidden_steps: int = 0
    """Steps whose compute (forward + backward) the exchange runs behind (PayloadSpec.hidden_steps)."""
    hidden_pieces: tuple[tuple[tuple[float, float], ...], ...] = ()
    """The fragments the payload may be, each as its parts of the model (PayloadSpec.hidden_pieces):
    the exchange also runs behind the rest of backward and the next forward up to them (`hidden`)."""
    unit_shares: tuple[float, ...] = ()
    """Per tensor: the share of the parameters backward has passed when each exchange is ready,
    in the order they run (empty: buckets, or one exchange)."""
    unit_costs: tuple[float, ...] = ()
    """Per tensor: each exchange's seconds, its host copies left out, in the same order."""

    @property
    def last_staging_s(self) -> float:
        """During backward: the host copies of the last exchange, which no later transfer hides
        (module doc, "Host copies"); 0 for one exchange after backward, which pays them in line."""
        if self.unit_staging:
            return self.unit_staging[-1]
        if self.buckets is None:
            return 0.0
        return self.bucket_staging_s if self.buckets.count else self.first_staging_s

    @property
    def during_backward(self) -> bool:
        """Whether the exchanges run during backward (per bucket or per tensor)."""
        return self.buckets is not None or bool(self.unit_costs)

    def exposed(self, window_s: float) -> float:
        """Seconds the step waits for the payload's exchanges after a backward + encode window."""
        if self.unit_costs:
            stream = units_exposed(self.unit_shares, self.unit_costs, window_s) + self.last_staging_s
            if not self.last_staging_s:
                return stream
            return np.maximum(stream, units_exposed(self.unit_shares, self.unit_staging, window_s))
        if self.buckets is None:
            return self.comm.time_s
        stream = bucketed_exposed(self.buckets, self.first_cost_s, self.bucket_cost_s, window_s,
                                  self.numel) + self.last_staging_s
        if not self.last_staging_s:
            return stream
        copies = bucketed_exposed(self.buckets, self.first_staging_s, self.bucket_staging_s, window_s, self.numel)
        return np.maximum(stream, copies)

    def hidden(self, forward_s, backward_s, encode_s):
        """Seconds an after-backward exchange whose result is used later waits for, mean over the
        fragments it may be (hidden_pieces; one part from 0 where none is given). Elementwise: the
        compute seconds may be arrays (stragglers.py).

        A part [a, b) of the model (shares in forward order) is ready when backward has passed it
        and needed when the forward of tau + 1 steps later reaches it (Streaming DiLoCo's schedule:
        sent after step t, merged after step t + tau, read by step t + tau + 1). Backward runs from
        the last parameter to the first, so a part is ready at r = F + (B + E)(1 - a); the step ends
        at F + B + E, then come the tau steps between (forward + backward each; their other work is
        not counted, as everywhere here: conservative), then F a of forward before it: it is needed
        at d = F + B + E + tau (F + B) + a F. A fragment's parts go out one after another as they
        become ready (the latest in the model first), each taking its share c (b - a) / size of the
        fragment's exchange c: end_j = max(r_j, end_(j-1)) + c_j (Lindley's recursion, as the buckets
        of a step), and the step waits for the latest part, max_j (end_j - d_j), or nothing. One part:

            window = d - r = tau (F + B) + a (F + B + E)        exposed = max(0, c - window)

        so a run of consecutive tensors at the model's end hides behind nearly one step more than
        tau (F + B), the first none; P equal runs, a = 0, 1/P, ..., about half a step more on
        average. A strided fragment (a part in every P-th tensor) sends its parts near the model's
        end while backward still runs, and its first part, needed first, is a small share of it."""
        fragments = self.hidden_pieces or (((0.0, 1.0),),)
        c, tau = self.comm.time_s, self.hidden_steps
        total = 0.0
        for parts in fragments:
            size = sum(b - a for a, b in parts)
            order = sorted(parts, reverse=True)  # backward produces the model's later parts first
            first = order[0][0]
            end = late = None  # times from the first part's ready time: one part's lateness is c - window exactly
            for a, b in order:
                ready = (backward_s + encode_s) * (first - a)
                cost = c * (b - a) / size
                end = ready + cost if end is None else np.maximum(end, ready) + cost
                need = tau * (forward_s + backward_s) + first * (backward_s + encode_s) + a * forward_s
                late = end - need if late is None else np.maximum(late, end - need)
            total = total + np.maximum(0.0, late)
        return total / len(fragments)

    def times(self, work: StepWork) -> StepTimes:
        if not self.count:
            exposed = 0.0
        elif not self.during_backward:
            exposed = float(self.hidden(work.forward_s, work.backward_s, work.encode_s))
        else:
            exposed = self.exposed(work.backward_s + work.encode_s)
        algorithm, folded = self.named()
        return StepTimes(
            forward_s=work.forward_s,
            backward_s=work.backward_s,
            encode_s=work.encode_s,
            comm_s=self.comm.time_s + self.extra.time_s,
            comm_exposed_s=exposed + self.extra.time_s,
            decode_s=work.decode_s,
            update_s=work.update_s,
            buckets=self.count,
            sent_bytes=self.comm.sent_bytes + self.extra.sent_bytes,
            inter_bytes=self.comm.inter_bytes + self.extra.inter_bytes,
            algorithm=algorithm,
            folded=folded,
        )

    def named(self) -> tuple[str, int]:
        """The step's algorithm column and folded ranks: the exchange's largest call's (else the
        strategy's own calls'), or, where the step's ops were priced by different algorithms, each
        op's largest call's, the largest first (calls_label), and the most ranks any folded in."""
        ops = _merged(self.comm.ops, self.extra.ops)
        if len({o.label for o in ops}) < 2:
            main = self.comm if self.comm.algorithm else self.extra
            return main.algorithm, main.folded
        ops = sorted(ops, key=lambda o: -o.largest)  # stable: the exchange's op first of equals
        return calls_label([(o.op, o.label) for o in ops]), max(o.folded for o in ops)


def price_step(
    *,
    transport: Transport,
    spec: PayloadSpec | None,
    workers: int,
    network: Network,
    overlap: OverlapConfig,
    extra_calls: Sequence[CollectiveCall] = (),
    algorithm: str = AUTO,
    strategy=None,
    tensors: Sequence[PayloadSpec] | None = None,
) -> PricedStep:
    """The collectives of one step of `spec` over `transport`, priced (module doc); `spec`
    None: a step that sends nothing (a local step of local SGD). `strategy` (its class): whose
    reference schedule `overlap` reads (OverlapConfig.schedule; None: a bare gradient exchange).
    `tensors`: the step's payload per parameter tensor, in model order (tensor_specs), which
    --overlap tensors exchanges one by one, the last first (module doc)."""
    extra = price_calls(extra_calls, workers, network, algorithm) if workers > 1 else Priced()
    if workers == 1 or spec is None:
        return PricedStep(comm=Priced(), extra=extra, buckets=None)
    if overlap.per_tensor(transport, strategy):
        if not tensors:
            raise ValueError("--overlap tensors needs the step's payload per tensor (tensor_specs)")
        return _per_tensor(transport, list(reversed(tensors)), workers, network, algorithm, extra)
    if overlap.schedule(transport, strategy) == PER_BUCKET:
        buckets = Buckets.of(spec.numel, overlap.bucket_params)
        cost = exchange_cost(transport, bucket_spec(spec, buckets.size), workers, network, algorithm) if buckets.count else Priced()
        first = exchange_cost(transport, bucket_spec(spec, buckets.first), workers, network, algorithm) if buckets.first else Priced()
        return PricedStep(comm=first + cost.times(buckets.count), extra=extra, buckets=buckets,
                          first_cost_s=first.transfer_s, bucket_cost_s=cost.transfer_s, numel=spec.numel,
                          count=buckets.total, first_staging_s=first.staging_s, bucket_staging_s=cost.staging_s)
    comm = exchange_cost(transport, spec, workers, network, algorithm)
    return PricedStep(comm=comm, extra=extra, buckets=None, count=1, hidden_steps=spec.hidden_steps,
                      hidden_pieces=spec.hidden_pieces)


def _per_tensor(transport: Transport, order: list[PayloadSpec], workers: int, network: Network, algorithm: str,
                extra: Priced) -> PricedStep:
    """Every tensor's exchange in backward order, each priced once per distinct payload."""
    priced: dict[PayloadSpec, Priced] = {}
    total, shares, costs, copies, done = Priced(), [], [], [], 0
    numel = sum(t.numel for t in order)
    for t in order:
        if t not in priced:
            priced[t] = exchange_cost(transport, t, workers, network, algorithm)
        total += priced[t]
        done += t.numel
        shares.append(done / numel)
        costs.append(priced[t].transfer_s)
        copies.append(priced[t].staging_s)
    return PricedStep(comm=total, extra=extra, buckets=None, numel=numel, count=len(order),
                      unit_shares=tuple(shares), unit_costs=tuple(costs), unit_staging=tuple(copies))


def step_times(work: StepWork, **pricing) -> StepTimes:
    """The step breakdown of one worker (module doc) for `spec` sent over `transport`; the
    keywords are price_step's."""
    return price_step(**pricing).times(work)
