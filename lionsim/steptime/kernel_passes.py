"""Encode, decode and update priced kernel by kernel from the codec kernel table.

passes.py counts the ideal bytes of each pass; this module prices what the implementations run,
as their modules declare it (lionsim.compute.kernel_ops):

    encode = the strategy's rule step (StrategyBytes.rule_step, in the `--optimizer` form) and its
             other kernels (rule_ops: scales, error feedback, top-k, the payload's casts)
             + the transport's packing kernels (TransportBytes.pack_ops)
    decode = the transport's unpacking kernels (TransportBytes.unpack_ops)
    update = the strategy's update step, reading the aggregate as the decode leaves it, and its
             other kernels (update_ops); a momentum sync's copy (float-pass)
    a local step (local SGD, DiLoCo between syncs) = the rule step alone, as the update
    a sync step of a strategy that takes local steps: its rule step (the inner optimizer's) is
             the update's, not the encode's, as training books it (LocalSteps.inner_step)

Each kernel takes its bytes x params / its row's GBps on the device's rows of
lionsim.compute.kernel_table; each part takes at least the kernels it launches x the device's
per-kernel floor (work.device_work). A strategy or transport that declares no kernels (a plug-in)
is priced by its ideal passes, one float-pass (or its declared packing/unpacking) kernel each.
With `--kernels ideal` the ideal fused passes of work.py stand instead.

Per tensor (--overlap tensors: lionsim.steptime.overlap) the codec runs tensor by tensor: the
transport's packing and unpacking are its kernels as it runs them on each tensor's own payload
alone (timeline.tensor_specs: PowerSGD's factor products run for a matrix, not for a vector), and
every kernel of the strategy's own ops (rule_ops, update_ops) launches once per tensor where the
flat implementation launches it once (each_tensor); the optimizer steps keep the form
--optimizer says.

A kernel the table has no row for on the device (a plug-in's own codec kernel) is priced with the
device's float-pass row, an elementwise stream (a lower bound on a real codec's time), and
`estimate` says so in its `kernels` column (stand_ins).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from lionsim.compute.kernel_ops import DEFAULT_OPTIMIZER, Op
from lionsim.compute.kernel_table import KernelRow, KernelTable
from lionsim.errors import LionsimError
from lionsim.steptime.passes import NO_SYNC, F32, I8, SyncCopy, payload_bytes
from lionsim.steptime.strategy_bytes import StrategyBytes
from lionsim.steptime.wire_passes import transport_bytes
from lionsim.transports import TRANSPORTS, PayloadSpec

FLOAT = "float-pass"


@dataclass(frozen=True, slots=True)
class PartOps:
    """The kernels of one part of a step."""

    ops: tuple[Op, ...]
    tensors: int = 1
    """Parameter tensors (per-tensor kernels launch once each)."""
    pair_share: float = 0.0
    """Pairs a sparse payload sends per parameter (k / numel)."""

    def nbytes(self) -> float:
        """Bytes per parameter in all."""
        return sum(op.per_param(self.pair_share) for op in self.ops)

    def seconds(self, params: int, rows: dict[str, KernelRow]) -> float:
        return sum(rows[op.kernel].seconds(op.per_param(self.pair_share) * params) for op in self.ops)

    def launches(self) -> int:
        return sum(op.kernels(self.tensors) for op in self.ops if op.nbytes > 0)


@dataclass(frozen=True, slots=True)
class KernelCost:
    """One step's kernels on one device's table rows (what work.device_work prices with)."""

    encode: PartOps
    decode: PartOps
    update: PartOps
    rows: dict[str, KernelRow]
    sync: SyncCopy = NO_SYNC

    def seconds(self, part: str, params: int) -> float:
        """`part` (encode, decode, update) over `params` parameters; the update also runs the sync copy."""
        own = getattr(self, part).seconds(params, self.rows)
        if part == "update" and self.sync.nbytes:
            own += self.rows[FLOAT].seconds(self.sync.nbytes)
        return own

    def launches(self, part: str) -> int:
        return getattr(self, part).launches() + (self.sync.kernels if part == "update" else 0)


def _ideal_rule(own: StrategyBytes, spec: PayloadSpec, inner: float = 0.0) -> tuple[Op, ...]:
    """The rule's ideal passes as one float-pass kernel, less `inner`, a local-step strategy's inner
    step, which its update books."""
    return (Op(FLOAT, own.rule - inner + payload_bytes(spec), "the rule, as its ideal passes (no kernels declared)"),)


def each_tensor(ops: tuple[Op, ...]) -> tuple[Op, ...]:
    """`ops` run tensor by tensor: what the flat implementation launches once (or once per tensor
    already) launches once per parameter tensor (module doc)."""
    return tuple(dataclasses.replace(op, launches=0, per_tensor=op.launches + op.per_tensor) for op in ops)


def _wire_ops(transport: str, spec: PayloadSpec, workers: int, workers_per_node: int):
    """(pack, unpack, decoded, aggregate) of the transport on `spec`: its declared kernels, else its
    ideal passes, one kernel each."""
    t = transport_bytes(transport, spec, workers, workers_per_node)
    packer, unpacker = TRANSPORTS.get(transport).kernels  # declared in the transport's module
    pack = t.pack_ops or ((Op(packer, t.pack, "packing, as its ideal pass"),) if t.pack else ())
    unpack = t.unpack_ops or ((Op(unpacker, t.unpack, "unpacking, as its ideal pass"),) if t.unpack else ())
    decoded = t.decoded if t.pack_ops or t.unpack_ops else None
    return pack, unpack, decoded, t.aggregate


def tensor_by_tensor(ops_of, tensors: Sequence[PayloadSpec], params: int) -> tuple[Op, ...]:
    """The kernels `ops_of(spec)` runs on each tensor's payload alone, as one list over the model:
    each distinct payload's ops once, their bytes weighted by its share of the parameters, their
    launches by how many tensors send it (module doc)."""
    out = []
    for spec, count in Counter(tensors).items():
        weight = count * spec.numel / params
        out += [dataclasses.replace(op, nbytes=op.nbytes * weight, launches=(op.launches + op.per_tensor) * count,
                                    per_tensor=0) for op in ops_of(spec)]
    return tuple(out)


def part_ops(own: StrategyBytes, transport: str, spec: PayloadSpec, workers: int, *, optimizer: str, tensors: int,
             params: int, workers_per_node: int = 1, local: bool = False, local_step_bytes: float | None = None,
             tensor_specs: Sequence[PayloadSpec] | None = None) -> tuple[tuple[Op, ...], tuple[Op, ...], tuple[Op, ...]]:
    """(encode, decode, update) kernels of one step of a strategy declaring `own` over `transport`;
    `tensor_specs`: the payload of each tensor, whose codec then runs tensor by tensor (module doc)."""
    declared = own.declares_kernels
    per_tensor = bool(tensor_specs)
    codec = each_tensor if per_tensor else (lambda ops: ops)
    step = own.rule_step.kernels(optimizer, tensors, params) if declared and own.rule_step else ()
    # a strategy that takes local steps books its inner step as the update on a sync step too
    inner = step if local_step_bytes is not None else ()
    rule = (step if not inner else ()) + codec(own.rule_ops) if declared else \
        _ideal_rule(own, spec, local_step_bytes or 0.0)
    if local:  # the inner optimizer's step: an update, as training books it (LocalSteps.encode)
        if own.rule_step is not None:
            return (), (), own.rule_step.kernels(optimizer, tensors, params)
        return (), (), (Op(FLOAT, local_step_bytes or 0.0, "a local step, as its ideal pass"),)
    if workers == 1:  # nothing packed: the payload is the aggregate
        pack, unpack, decoded = (), (), None
        aggregate = F32 if spec.kind in ("dense", "sparse", "scaled-signs") else I8
    else:
        pack, unpack, decoded, aggregate = _wire_ops(transport, spec, workers, workers_per_node)
        if per_tensor:
            pack = tensor_by_tensor(lambda t: _wire_ops(transport, t, workers, workers_per_node)[0], tensor_specs, params)
            unpack = tensor_by_tensor(lambda t: _wire_ops(transport, t, workers, workers_per_node)[1], tensor_specs,
                                      params)
    if declared:
        read = decoded if decoded is not None else aggregate
        update = inner + (own.update_step.kernels(optimizer, tensors, params, aggregate=read) if own.update_step
                          else ()) + codec(own.update_ops)
    else:
        update = (Op(FLOAT, own.update + aggregate + (local_step_bytes or 0.0),
                     "the update, as its ideal passes (no kernels declared)"),)
    return rule + pack, unpack, update


def kernel_cost(own: StrategyBytes, transport: str, spec: PayloadSpec, workers: int, table: KernelTable, device: str,
                *, optimizer: str = DEFAULT_OPTIMIZER, tensors: int = 1, params: int = 1, workers_per_node: int = 1,
                local: bool = False, local_step_bytes: float | None = None, sync: SyncCopy = NO_SYNC,
                tensor_specs: Sequence[PayloadSpec] | None = None) -> KernelCost:
    """One step's kernels (part_ops) on `device`'s rows of `table`; `tensor_specs`: the codec runs
    tensor by tensor on these payloads (module doc)."""
    encode, decode, update = part_ops(own, transport, spec, workers, optimizer=optimizer, tensors=tensors,
                                      params=params, workers_per_node=workers_per_node, local=local,
                                      local_step_bytes=local_step_bytes, tensor_specs=tensor_specs)
    rows = table.for_device(device)
    if FLOAT not in rows:
        raise LionsimError(f"the kernel table {table.path} has no {FLOAT} row for {device!r}")
    rows = rows | {k: rows[FLOAT] for k in _missing(encode + decode + update, rows)}  # stand-ins (module doc)
    share = spec.k / spec.numel if spec.kind == "sparse" and spec.numel else 0.0
    part = lambda ops: PartOps(ops, tensors=tensors, pair_share=share)  # noqa: E731
    return KernelCost(encode=part(encode), decode=part(decode), update=part(update), rows=rows, sync=sync)


def _missing(ops: tuple[Op, ...], rows) -> list[str]:
    return [k for k in dict.fromkeys(op.kernel for op in ops) if k not in rows]


def stand_ins(transport: str, table: KernelTable, device: str) -> list[str]:
    """The kernels `transport` declares that `device`'s rows of the table lack: each priced as
    float-pass (module doc)."""
    rows = table.for_device(device)
    return [k for k in dict.fromkeys(TRANSPORTS.get(transport).kernels) if k not in rows]
