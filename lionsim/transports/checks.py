"""What a plug-in hands lionsim during a step, checked before lionsim reads it.

A strategy's `encode` returns a Payload (lionsim.transports.payloads) whose tensors a transport
reads, and a transport's `aggregate` returns the tensor a strategy's `apply` reads. A plug-in
that gets either wrong would fail deep inside the other side's code with a torch error that
names neither; these checks name the plug-in, the part and what was expected, in one line
(a UserCodeError: lionsim.usercode). They read kinds, shapes, dtypes and lengths (and, for
sparse payloads, that the positions are in range), and that the float parts are finite: the run
loop has found the step's gradients finite before encode (else the run diverged), so a NaN or
inf there is the plug-in's. The run loop makes them for plug-ins only (lionsim.training.loop),
and tests/training/test_user_code.py runs every built-in strategy and transport through them.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from lionsim.errors import a_type
from lionsim.transports.payloads import PAYLOAD_KINDS, Payload, PayloadSpec, spec_problem
from lionsim.usercode import UserCodeError

_INTEGER = "an integer dtype (torch.int8 for votes and signs)"
_SEGMENTED = ("scaled-signs", "scaled-levels")


def check_payload(payload: object, strategy: str, carries: tuple[str, ...], local_workers: int,
                  device: torch.device) -> None:
    """What strategy `strategy`'s encode returned: None (a step that sends nothing) or a Payload
    of a kind the transport `carries` (or dense: a warm-up's full-precision steps), its tensors
    of the kind's dtypes and shapes, one row per worker of this process (`local_workers`) on
    `device`."""
    def bad(what: str) -> UserCodeError:
        return UserCodeError(f"the strategy {strategy}'s encode returned {what}")

    if payload is None:
        return
    if not isinstance(payload, Payload):
        raise bad(f"{a_type(payload)}; accepted: a lionsim.transports.Payload (Payload(spec, values, ...)), "
                  "or None on a step that sends nothing")
    spec = payload.spec
    if not isinstance(spec, PayloadSpec):
        raise bad(f"a Payload whose spec is {a_type(spec)}; accepted: a lionsim.transports.PayloadSpec")
    if spec.kind not in PAYLOAD_KINDS:
        raise bad(f"a payload of kind {spec.kind!r}; accepted: {', '.join(PAYLOAD_KINDS.names())}")
    if spec.kind not in carries and spec.kind != "dense":  # dense: a warm-up's (1-bit Adam's, PowerSGD's)
        raise bad(f"a {spec.kind} payload, which its transport does not carry; accepted: "
                  f"{', '.join(dict.fromkeys([*carries, 'dense']))}")
    rows = f"{local_workers} (one per worker of this process)"

    def tensor(name: str, value: object, dims: int, floating: bool | None, columns: int | None = None,
               first: int | None = local_workers) -> Tensor:
        """`value` is a tensor of `dims` dims, floating or integer as asked, `first` rows, `columns` columns."""
        label = f"{spec.kind} payload's {name}"
        if not isinstance(value, Tensor):
            raise bad(f"a {label} that is {a_type(value)}; accepted: a torch.Tensor")
        shape = tuple(value.shape)
        if value.dim() != dims:
            raise bad(f"a {label} of shape {list(shape)}; accepted: {dims} dimensions")
        if first is not None and shape[0] != first:
            raise bad(f"a {label} of {shape[0]} rows; accepted: {rows if first == local_workers else first}")
        if columns is not None and shape[-1] != columns:
            raise bad(f"a {label} of {shape[-1]} values per row; accepted: {columns} (its spec's numel)"
                      if name == "values" else f"a {label} of length {shape[-1]}; accepted: {columns}")
        if floating is True and not value.is_floating_point():
            raise bad(f"a {label} of dtype {value.dtype}; accepted: a floating dtype")
        if floating is False and (value.is_floating_point() or value.is_complex() or value.dtype == torch.bool):
            raise bad(f"a {label} of dtype {value.dtype}; accepted: {_INTEGER}")
        if value.device != device:
            raise bad(f"a {label} on {value.device}; accepted: on {device}, where the gradients are")
        if value.is_floating_point() and (problem := non_finite(value)):
            raise bad(f"a {label} holding {problem}; accepted: finite values (the step's gradients were finite)")
        return value

    kind, values = spec.kind, payload.values
    if kind == "sparse":
        values = tensor("values", values, 2, True)
        indices = tensor("indices", payload.indices, 2, False)
        if indices.shape != values.shape:
            raise bad(f"a sparse payload whose values {list(values.shape)} and indices {list(indices.shape)} differ "
                      "in shape; accepted: one index per value")
        if indices.numel() and (int(indices.min()) < 0 or int(indices.max()) >= spec.numel):
            raise bad(f"a sparse payload with positions from {int(indices.min())} to {int(indices.max())}; "
                      f"accepted: 0 to {spec.numel - 1} (its spec's numel {spec.numel})")
        return
    floating = {"float": True, "integer": False}.get(PAYLOAD_KINDS.get(kind).values)  # None: any dtype
    tensor("values", values, 2, floating, spec.numel)
    if kind == "votes" and values.dtype != torch.int8:
        raise bad(f"a votes payload of dtype {values.dtype}; accepted: torch.int8 (+1, 0, -1)")
    if kind == "votes" and values.numel() and (int(values.min()) < -1 or int(values.max()) > 1):
        # int8 sums a 3 where the 1-bit wires send its sign: the transports would disagree
        outside = values[(values < -1) | (values > 1)]
        raise bad(f"a votes payload holding {int(outside[0])} ({outside.numel():,} of {values.numel():,} values "
                  "outside -1..1); accepted: +1, 0, -1 (a vote is a sign)")
    if problem := spec_problem(spec):  # a plug-in's loaded spec had it: this step's did not
        raise bad(problem)
    if kind in _SEGMENTED:
        scales = tensor("scales", payload.scales, 2, True)
        if spec.segments and scales.shape[1] != spec.segments:  # the tensor that is wrong, not the ids it breaks
            raise bad(f"a {kind} payload's scales of shape {list(scales.shape)}; accepted: "
                      f"[{local_workers}, {spec.segments}]: one per worker of this process and tensor "
                      "(its spec's segments, layout.segments)")
        ids = tensor("segment_ids", payload.segment_ids, 1, False, spec.numel, first=None)
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= scales.shape[1]):
            raise bad(f"a {kind} payload whose segment_ids reach {int(ids.max())} with {scales.shape[1]} scales per "
                      "row; accepted: ids from 0 to the number of scales - 1")
    if kind == "onebit":
        tensor("scales", payload.scales, 2, True, 1)
        if "server_error" not in payload.extra:
            raise bad("a onebit payload without extra['server_error'] (the transport's error feedback state)")
    if kind == "lowrank" and "lowrank" not in payload.extra:
        raise bad("a lowrank payload without extra['lowrank'] (lionsim.transports.lowrank_allreduce.LowRank)")


def non_finite(value: Tensor) -> str:
    """"" when every value of the float tensor `value` is finite, else what is not and where, in
    words. One read (aminmax propagates NaN and keeps inf; isfinite().all() writes a bool per value
    and is several times slower on a large dense payload); the count and place only when it fails."""
    if not value.numel():
        return ""
    low, high = torch.aminmax(value)
    if bool(torch.isfinite(low) & torch.isfinite(high)):
        return ""
    wrong = ~torch.isfinite(value)
    what = " and ".join(name for name, hit in (("nan", value.isnan()), ("inf", value.isinf())) if bool(hit.any()))
    first = [int(i) for i in wrong.nonzero()[0]]
    return f"{what} ({int(wrong.sum()):,} of {value.numel():,} values, the first at {first})"


def check_aggregate(aggregate: object, transport: str, spec: PayloadSpec, local_workers: int) -> None:
    """What transport `transport`'s aggregate returned for a payload of `spec`: a floating tensor
    [w, numel], one row per worker of this process."""
    def bad(what: str) -> UserCodeError:
        return UserCodeError(f"the transport {transport}'s aggregate returned {what}")

    if not isinstance(aggregate, Tensor):
        raise bad(f"{a_type(aggregate)}; accepted: a torch.Tensor [workers, numel]")
    accepted = f"[{local_workers}, {spec.numel}] (one row per worker of this process, the payload's numel)"
    if tuple(aggregate.shape) != (local_workers, spec.numel):
        raise bad(f"a tensor of shape {list(aggregate.shape)}; accepted: {accepted}")
    if not aggregate.is_floating_point():
        raise bad(f"a tensor of dtype {aggregate.dtype}; accepted: a floating dtype")


@dataclass(frozen=True, slots=True)
class StepChecks:
    """The checks one run's steps make (lionsim.engine.train_step): a plug-in strategy's payloads,
    a plug-in transport's aggregates."""

    strategy: str | None
    """The strategy whose payloads are checked (None: a built-in, not checked)."""
    transport: str | None
    """The transport whose aggregates are checked (None: a built-in, not checked)."""
    carries: tuple[str, ...]
    """The payload kinds the run's transport carries."""
    local_workers: int
    device: torch.device

    def payload(self, payload: object) -> None:
        if self.strategy is not None:
            check_payload(payload, self.strategy, self.carries, self.local_workers, self.device)

    def aggregate(self, aggregate: object, spec: PayloadSpec) -> None:
        if self.transport is not None:
            check_aggregate(aggregate, self.transport, spec, self.local_workers)
