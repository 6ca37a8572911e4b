"""Transports: how a payload crosses the network, as data movement and as a cost.

A transport is written once against `lionsim.backends.Comm`: on the simulator it moves all
W workers' rows at once, on a real rank it calls torch.distributed. `plan` lists the
collectives one aggregation issues (sizes by the convention of lionsim.network.calls), which
the network model prices and `wire_bytes` counts. For the same payload every transport that
carries its kind gives the identical aggregate, except one that rounds (`rounds`) or votes by
node (`exact` false).

Timing: `aggregate` books its packing work under the clock's "encode" section, its
unpacking/voting under "decode", and the collectives themselves under "collective" (the
simulator models that time instead of measuring it).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from contextlib import nullcontext
from typing import ClassVar

from torch import Tensor

from lionsim.backends import Comm
from lionsim.compute.kernel_ops import Op
from lionsim.errors import LionsimError
from lionsim.network.calls import CollectiveCall
from lionsim.registry import Registry
from lionsim.timing import Clock
from lionsim.schedules import AFTER_BACKWARD
from lionsim.transports.payloads import Payload, PayloadSpec, container_dtype

F32 = 4.0
"""Bytes of a float32 parameter, gradient or state element."""
I8 = 1.0
"""Bytes of an int8 vote, level or sign."""



@dataclass(frozen=True, slots=True)
class TransportBytes:
    """What a transport's own kernels move per parameter: `pack`, `unpack` and `aggregate` as one
    ideal fused kernel per pass (lionsim.steptime.passes gives the conventions: every input read
    once, every output written once); `pack_ops` and `unpack_ops` as its implementation runs them,
    kernel by kernel with their temporaries (lionsim.compute.kernel_ops), which
    `estimate --kernels table` prices. No ops declared: the ideal passes, one kernel each."""

    pack: float
    """Encode side: payload -> wire format (0 when the payload already is it)."""
    unpack: float
    """Decode side: what arrived -> the aggregate the update reads (0 when it already is it)."""
    aggregate: float
    """Bytes per parameter of that aggregate (the update reads it once)."""
    pack_ops: tuple[Op, ...] = ()
    """The encode side's kernels as the implementation runs them."""
    unpack_ops: tuple[Op, ...] = ()
    """The decode side's kernels as the implementation runs them."""
    decoded: float | None = None
    """Bytes per parameter of the aggregate as unpack_ops leave it for the update (None: `aggregate`)."""


def sum_bytes(workers: int) -> float:
    """Bytes of a sum of N votes: int8 up to 127 workers, then int32 (the transports' containers)."""
    return float(container_dtype(workers).itemsize)


class Transport(ABC):
    name: ClassVar[str]
    carries: ClassVar[tuple[str, ...]]
    """Payload kinds this transport can move."""
    summary: ClassVar[str]
    """One line for `lionsim strategies`."""
    exact: ClassVar[bool] = True
    """Whether it gives the flat aggregate bit for bit, whatever the nodes. The three flags, said
    once here: `exact` is about the nodes (a flat transport is exact, though a flat fp32 ring also
    sums in another order at each N: the nodes do not change it); `reorders` (not exact) gives the
    flat aggregate up to the order of its fp32 sums (hier: over an exact transport that does not
    round); `rounds` rounds the values it carries (a low-precision wire: bf16, fp8, fp4, 1-bit
    compression), whatever the nodes. Not exact and not reorders: a different aggregate (a vote of
    node votes). `estimate --from-run` lends a run's convergence only between transports that carry
    the values unchanged, each exact or reorders and none rounds (lionsim.estimate.to_target): a
    plug-in transport sets them for its convergence to be lent."""
    reorders: ClassVar[bool] = False
    """Whether, not `exact`, it gives the flat aggregate up to the order of its fp32 sums: training
    over it converges as over the flat transport (`exact` says the three flags together)."""
    rounds: ClassVar[bool] = False
    """Whether it rounds the values it carries, so that training over it is not training over an
    exact one: no other transport's convergence is borrowed for it (`exact` says the three flags
    together)."""
    kernels: ClassVar[tuple[str, str]] = ("float-pass", "float-pass")
    """Its (packing, unpacking) kernels in the codec kernel table (lionsim.compute.kernel_table):
    what `estimate --kernels table` prices its wire_bytes' pack and unpack with when they declare
    no pack_ops / unpack_ops."""
    hierarchical: ClassVar[bool] = False
    """Whether its plan and bits depend on the workers per node: then `plan` and
    `bits_per_param` take a `workers_per_node` keyword (call them through plan_on, bits_on)."""
    overlap: ClassVar[frozenset[str]] = frozenset({AFTER_BACKWARD})
    """The schedules it can run (SCHEDULES; lionsim.steptime.overlap picks one per run). Every
    transport can run after backward; declare PER_BUCKET too only where a bucket's exchange needs
    nothing but that bucket and gives the same aggregate as the whole (not where one scale or
    one state spans the flat buffer, as 1-bit Adam's compressed all-reduce). The default, after
    backward alone, is the safe one for a transport that says nothing: its time is never hidden."""

    @abstractmethod
    def aggregate(self, payload: Payload, comm: Comm, clock: Clock | None = None) -> Tensor:
        """The combined result, float [w, n], identical on every worker."""

    @abstractmethod
    def plan(self, spec: PayloadSpec, workers: int) -> list[CollectiveCall]:
        """The collectives one aggregation issues for this payload on `workers` workers."""

    @abstractmethod
    def bits_per_param(self, spec: PayloadSpec, workers: int) -> tuple[float, float]:
        """(up, down): bits per parameter in what a worker sends and in what it gets back."""

    def bits_note(self, spec: PayloadSpec, workers: int) -> str:
        """Why bits_per_param is what it is on `workers` workers, where the payload's own width does
        not say it (a field widened to hold N workers' sum): `lionsim strategies` prints it under
        its bits. "": nothing to explain."""
        return ""

    def wire_bytes(self, spec: PayloadSpec, workers: int) -> TransportBytes | None:
        """What its own kernels move per parameter (packing, unpacking, the aggregate); a
        hierarchical transport also takes `workers_per_node`. None (not overridden): the modelled
        compute cannot price it, so estimate, and bench and sweep on a --compute device, refuse it
        on more than one worker (lionsim.steptime.undeclared), as an override that returns None
        for a spec a run sends (bench and sweep ask every one at plan time: lionsim.config.sends)."""
        return None

    def footnote(self, spec: PayloadSpec, workers: int, workers_per_node: int = 1) -> str:
        """One line where this exchange's figures on `workers` workers need one under the table:
        a container wider than the name says (int8-allreduce's int32 past 127 voters, naming the
        worker count where it widens and why), bits that count more than one phase (hier:); ""
        where they need none, on nodes of `workers_per_node`. bench's footer prints it, and
        estimate's unless estimate_footnote says otherwise (footnote_on)."""
        return ""

    def estimate_footnote(self, spec: PayloadSpec, workers: int, workers_per_node: int = 1) -> str:
        """The note under estimate's table, which has no bits column (`across` instead): a transport
        whose note speaks of bits overrides it (hier:), so a note speaks only of columns the reader
        sees. Optional: by default the same line as footnote."""
        return self.footnote(spec, workers, workers_per_node)

    def check(self, spec: PayloadSpec, workers: int) -> None:
        """Raise LionsimError if this transport cannot carry `spec` on `workers` workers."""
        if spec.kind not in self.carries:
            raise LionsimError(f"{self.name} carries {' or '.join(self.carries)}, not {spec.kind}")

    @classmethod
    def accepts(cls, strategy: type) -> bool:
        """Whether a strategy of this payload kind can use it (a vote of votes needs a majority vote)."""
        return True


def plan_on(transport: Transport, spec: PayloadSpec, workers: int, workers_per_node: int = 1) -> list[CollectiveCall]:
    """transport.plan on a network of `workers_per_node`-worker nodes (flat transports ignore them)."""
    if transport.hierarchical:
        return transport.plan(spec, workers, workers_per_node=workers_per_node)
    return transport.plan(spec, workers)


def bits_on(transport: Transport, spec: PayloadSpec, workers: int, workers_per_node: int = 1) -> tuple[float, float]:
    """transport.bits_per_param on a network of `workers_per_node`-worker nodes."""
    if transport.hierarchical:
        return transport.bits_per_param(spec, workers, workers_per_node=workers_per_node)
    return transport.bits_per_param(spec, workers)


def footnote_on(transport: Transport, spec: PayloadSpec | None, workers: int, workers_per_node: int = 1,
                bits: bool = True) -> str:
    """transport's note on a network of `workers_per_node`-worker nodes ("" for no payload), for a
    table with a bits column (`bits`: bench's, Transport.footnote) or without (estimate's,
    Transport.estimate_footnote). The arguments go by position, as the documented signature
    `footnote(spec, workers, workers_per_node=1)` takes them: a plug-in's may name them otherwise."""
    if spec is None or workers < 2:
        return ""
    if bits:
        return transport.footnote(spec, workers, workers_per_node)
    return transport.estimate_footnote(spec, workers, workers_per_node)


def step_bits(transport: Transport, spec: PayloadSpec | None, extra_calls, params: int, workers: int,
              workers_per_node: int = 1) -> tuple[float, float]:
    """(up, down): bits per parameter of the model (`params`) that one worker sends and receives in
    one step: its payload over `transport` (bits_on counts them per payload value: a payload of
    spec.numel values, a MuLoCo's uncoded tensors or a Streaming DiLoCo fragment, is that share of
    the model), plus the strategy's own collectives (`extra_calls`: an all-gather of n bytes sends
    its n / N and receives the other (N - 1) n / N, as allgather-1bit counts its bits; any other
    call its n bytes each way, as fp32-allreduce's 32/32). `spec` None: a step that sends nothing.
    What bench books per step, estimate per mean step and `lionsim strategies` lists."""
    up = down = 0.0
    if workers > 1 and spec is not None and spec.numel:
        up, down = bits_on(transport, spec, workers, workers_per_node)
        up, down = up * spec.numel / params, down * spec.numel / params
    for call in extra_calls if workers > 1 else ():
        group = {"world": workers, "intra": workers_per_node}.get(call.scope, max(1, workers // workers_per_node))
        sent, got = ((call.nbytes / group, call.nbytes * (group - 1) / group) if call.op == "all_gather"
                     else (call.nbytes, call.nbytes))
        up, down = up + 8.0 * sent / params, down + 8.0 * got / params
    return up, down


def section(clock: Clock | None, name: str):
    return clock.section(name) if clock is not None else nullcontext()


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def bits_for(levels: int) -> int:
    """Bits needed to tell `levels` values apart."""
    return max(1, math.ceil(math.log2(levels)))


TRANSPORTS: Registry[type[Transport]] = Registry("transport", entry_points="lionsim.transports")


def shared_rows(gathered: Tensor) -> tuple[Tensor, int | None]:
    """The simulator's all-gather gives every local worker one shared view (stride 0 on the
    worker dimension): decode that once. Returns (rows to decode, w to expand the result back
    to, or None when the rows are distinct)."""
    local = gathered.shape[0]
    if local > 1 and gathered.stride(0) == 0:
        return gathered[:1], local
    return gathered, None
