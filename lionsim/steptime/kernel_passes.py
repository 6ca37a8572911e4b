"""Encode, decode and update priced kernel by kernel from the codec kernel table.

passes.py counts the bytes each pass moves; this module says which kernel moves them:

    encode = the strategy's rule and the payload it writes (float-pass)
             + the transport's packing (its module's Transport.kernels[0])
    decode = the transport's unpacking (Transport.kernels[1])
    update = the strategy's update and one read of the aggregate (float-pass)
    a momentum sync's copy: float-pass

and each part takes sum(bytes x params / that kernel's GBps) on the device's rows of
lionsim.compute.kernel_table, at least the launches of the kernels it runs x the device's
per-kernel floor (work.device_work). With `ideal` the ideal fused passes of work.py stand.

A transport may name a kernel the table has no row for on the device (a plug-in's own codec):
that kernel is priced with the device's float-pass row, an ideal fused elementwise pass (a lower
bound on a real codec's time), and `estimate` says so in its `kernels` column (stand_ins).
"""

from __future__ import annotations

from dataclasses import dataclass

from lionsim.compute.kernel_table import KernelRow, KernelTable
from lionsim.errors import LionsimError
from lionsim.steptime.passes import NO_SYNC, PassBytes, SyncCopy
from lionsim.steptime.wire_passes import transport_bytes
from lionsim.transports import TRANSPORTS, PayloadSpec

FLOAT = "float-pass"


@dataclass(frozen=True, slots=True)
class PartBytes:
    """Bytes per parameter of one pass, by kernel."""

    by_kernel: tuple[tuple[str, float], ...]

    def seconds(self, params: int, rows: dict[str, KernelRow]) -> float:
        return sum(rows[k].seconds(b * params) for k, b in self.by_kernel if b > 0)

    def launches(self, rows: dict[str, KernelRow]) -> int:
        return sum(rows[k].launches for k, b in self.by_kernel if b > 0)


@dataclass(frozen=True, slots=True)
class KernelCost:
    """One step's passes on one device's table rows (what work.device_work prices with)."""

    encode: PartBytes
    decode: PartBytes
    update: PartBytes
    rows: dict[str, KernelRow]
    sync: SyncCopy = NO_SYNC

    def seconds(self, part: str, params: int) -> float:
        """`part` (encode, decode, update) over `params` parameters; the update also runs the sync copy."""
        own = getattr(self, part).seconds(params, self.rows)
        if part == "update" and self.sync.nbytes:
            own += self.rows[FLOAT].seconds(self.sync.nbytes)
        return own

    def launches(self, part: str) -> int:
        return getattr(self, part).launches(self.rows)


def kernel_cost(passes: PassBytes, transport: str, spec: PayloadSpec, workers: int, table: KernelTable,
                device: str, workers_per_node: int = 1, local: bool = False, sync: SyncCopy = NO_SYNC) -> KernelCost:
    """`passes` (passes.pass_bytes of the same arguments) split by kernel, on `device`'s rows."""
    packer, unpacker = TRANSPORTS.get(transport).kernels  # declared in the transport's module
    rows = table.for_device(device)
    if FLOAT not in rows:
        raise LionsimError(f"the kernel table {table.path} has no {FLOAT} row for {device!r}")
    rows = rows | {k: rows[FLOAT] for k in stand_ins(transport, table, device)}
    if local or workers == 1:  # nothing packed: the rule and the update alone
        pack = 0.0
    else:
        pack = transport_bytes(transport, spec, workers, workers_per_node).pack
    return KernelCost(
        encode=PartBytes(((FLOAT, passes.encode - pack), (packer, pack))),
        decode=PartBytes(((unpacker, passes.decode),)),  # all of it the transport's unpacking
        update=PartBytes(((FLOAT, passes.update),)),
        rows=rows, sync=sync,
    )


def stand_ins(transport: str, table: KernelTable, device: str) -> list[str]:
    """The kernels `transport` declares that `device`'s rows of the table lack: each priced as
    float-pass (module doc)."""
    rows = table.for_device(device)
    return [k for k in dict.fromkeys(TRANSPORTS.get(transport).kernels) if k not in rows]
