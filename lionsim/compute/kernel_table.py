"""The codec kernel table: how fast each compression kernel really runs, per device.

The ideal model (compute.flops.memory_pass_time) books every encode, decode and update as one
fused pass at the device's memory bandwidth x memory_efficiency. Real codecs are not fused:
packing and unpacking bits is a chain of eager ops (compare, shift, or, cast), each reading and
writing its own temporaries, and on the CPU some are compute-bound. The table says, per
(device, kernel), how many of the ideal bytes per second a kernel reaches:

    seconds(kernel, nbytes) = nbytes / (GBps x 1e9)

where nbytes counts what an ideal fused kernel would move (lionsim.steptime.passes's
accounting) and GBps is that count over the kernel's real time. A kernel call also launches
`launches` ops, which the per-kernel floor of a small model charges.

Rows come from `python -m lionsim.perf kernels` (lionsim.perf.kernels): measured on the CPU it
runs on (method "measured"), and for the GPU presets derived from the datasheet's bandwidth and
the bytes the GPU path's eager ops move (method "derived") unless a GPU was measured. File
columns: device, kernel, bytes_per_param, GBps, launches, method, source, date, machine.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from lionsim.errors import LionsimError

COLUMNS = ("device", "kernel", "bytes_per_param", "GBps", "launches", "method", "source", "date", "machine")
METHODS = ("measured", "derived", "published")
KERNELS: dict[str, str] = {
    "float-pass": "a strategy's elementwise float32 rule or update (Lion's: read p, g, m; write p, m)",
    "cast": "float32 -> bfloat16 (or int8 -> a wider vote container)",
    "pack-signs": "int8 votes -> 1-bit signs, 8 per byte",
    "unpack-signs": "1-bit signs -> int8 +-1",
    "pack-codes": "int8 levels -> 2-bit fields",
    "unpack-codes": "2-bit fields -> integer levels",
    "scatter-add": "sparse (index, value) pairs added into a dense float32 buffer",
}
"""Every kernel a row may name, and what it does."""


@dataclass(frozen=True, kw_only=True, slots=True)
class KernelRow:
    """One kernel on one device."""

    device: str
    """Device preset name (lionsim.compute.DEVICES), or "cpu"."""
    kernel: str
    """A name of KERNELS."""
    bytes_per_param: float
    """Bytes an ideal fused kernel moves per element (what GBps counts)."""
    GBps: float
    """Ideal bytes per second the real kernel reaches, 1e9 bytes per second."""
    launches: int
    """Ops (kernels) one call launches."""
    method: str
    """measured | derived | published."""
    source: str
    """Where the figure comes from: the command that measured it, or the datasheet and count."""
    date: str
    """When (YYYY-MM-DD)."""
    machine: str
    """What it ran on (CPU model and cores), or the datasheet's part."""

    def seconds(self, nbytes: float) -> float:
        """Time to move `nbytes` ideal bytes through this kernel."""
        return nbytes / (self.GBps * 1e9)


@dataclass(frozen=True, slots=True)
class KernelTable:
    rows: tuple[KernelRow, ...]
    path: str
    """The file it was read from."""

    def devices(self) -> list[str]:
        return list(dict.fromkeys(r.device for r in self.rows))

    def for_device(self, device: str) -> dict[str, KernelRow]:
        """kernel -> row for `device`; one line naming the devices the table has if it has none."""
        rows = {r.kernel: r for r in self.rows if r.device == device}
        if not rows:
            raise LionsimError(f"the kernel table {self.path} has no rows for device {device!r}; it has: "
                               f"{', '.join(self.devices())} (or use --kernels ideal)")
        return rows

    def row(self, device: str, kernel: str) -> KernelRow:
        rows = self.for_device(device)
        if kernel not in rows:
            raise LionsimError(f"the kernel table {self.path} has no {kernel!r} row for {device!r}; it has: "
                               f"{', '.join(rows)}")
        return rows[kernel]

    def describe(self, device: str) -> str:
        """What an estimate priced with `device`'s rows says: "measured table (cpu, 2026-11-26)"."""
        rows = list(self.for_device(device).values())
        methods = "+".join(dict.fromkeys(r.method for r in rows))
        dates = sorted({r.date for r in rows})
        return f"{methods} table ({device}, {dates[-1]})"


def default_path() -> Path:
    return Path(str(resources.files("lionsim") / "data" / "kernels.csv"))


def _number(path: str, line: int, name: str, text: str, integer: bool = False) -> float:
    try:
        value = int(text) if integer else float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise LionsimError(f"bad {name} {text!r} on line {line} of kernel table {path}; accepted: "
                           f"a finite {'whole ' if integer else ''}number > 0")
    return value


def read_table(path: Path) -> KernelTable:
    """A kernel table file (module doc); every problem is one line naming the file and line."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
            header = tuple(rows[0].keys()) if rows else ()
    except (OSError, UnicodeDecodeError) as e:
        raise LionsimError(f"cannot read kernel table {path}: {getattr(e, 'strerror', None) or e}") from None
    if header != COLUMNS:
        raise LionsimError(f"kernel table {path} has columns {', '.join(header) or 'none'}; "
                           f"accepted: exactly {', '.join(COLUMNS)}")
    out, seen = [], set()
    for line, r in enumerate(rows, start=2):
        if r["kernel"] not in KERNELS:
            raise LionsimError(f"unknown kernel {r['kernel']!r} on line {line} of kernel table {path}; "
                               f"accepted: {', '.join(KERNELS)}")
        if r["method"] not in METHODS:
            raise LionsimError(f"bad method {r['method']!r} on line {line} of kernel table {path}; "
                               f"accepted: {', '.join(METHODS)}")
        if (r["device"], r["kernel"]) in seen:
            raise LionsimError(f"line {line} of kernel table {path}: {r['device']} {r['kernel']} appears twice")
        seen.add((r["device"], r["kernel"]))
        out.append(KernelRow(device=r["device"], kernel=r["kernel"],
                             bytes_per_param=_number(str(path), line, "bytes_per_param", r["bytes_per_param"]),
                             GBps=_number(str(path), line, "GBps", r["GBps"]),
                             launches=int(_number(str(path), line, "launches", r["launches"], integer=True)),
                             method=r["method"], source=r["source"], date=r["date"], machine=r["machine"]))
    return KernelTable(tuple(out), str(path))


@cache
def default_table() -> KernelTable:
    """The table shipped with lionsim (lionsim/data/kernels.csv)."""
    return read_table(default_path())
