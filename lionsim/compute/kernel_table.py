"""The codec kernel table: how fast each kind of kernel really runs, per device.

Strategies and transports declare the kernels their implementations run, each with the bytes
it reads and writes per parameter, temporaries included (lionsim.compute.kernel_ops). The table
says, per (device, kernel), how many of those bytes per second that kind of kernel moves:

    seconds(kernel, nbytes) = nbytes / (GBps x 1e9)

For an elementwise op the rate is its memory stream; for a fused optimizer, what one fused
multi-tensor kernel reaches; for top-k, bytes of its input per second (a radix selection reads
its input several times); for scatter-add, the declared bytes of each scattered pair (a 32-byte
sector per target); for orthogonalize, the bytes its ops declare (an eager chain on the GPU, where
torch runs it; TensorFlow 1.15 runs tf.linalg.qr on the host, so its row is its own).

Rows say what they rest on (`method`, `source`, `date`, `machine`): "published" (a measurement in
a public source, quoted: paper or thread, GPU, tensor size), "measured" (timed on the machine
named, `python -m lionsim.perf kernels`), or "derived" (computed from a datasheet and a stated
rule; lionsim.perf.kernels says which). File columns: device, kernel, bytes_per_param, GBps,
method, source, date, machine; bytes_per_param is what one element of the row's own case moved.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from lionsim.errors import LionsimError

COLUMNS = ("device", "kernel", "bytes_per_param", "GBps", "method", "source", "date", "machine")
METHODS = ("measured", "derived", "published")
KERNELS: dict[str, str] = {
    "float-pass": "an eager elementwise op on float32 data (an op of an optimizer's or a codec's chain)",
    "cast": "a dtype conversion (float32 -> bfloat16 or fp8, int8 -> a wider vote container)",
    "pack-signs": "the ops packing int8 votes into 1-bit signs, 8 per byte",
    "unpack-signs": "the ops unpacking 1-bit signs (and counting votes)",
    "pack-codes": "the ops packing integer levels into b-bit fields",
    "unpack-codes": "the ops unpacking b-bit fields into integer levels",
    "scatter-add": "sparse (index, value) pairs gathered from or added into a dense float32 buffer",
    "fused-optimizer": "one fused multi-tensor optimizer kernel (FusedAdam, torch.optim.AdamW(fused=True))",
    "topk": "torch.topk of a vector: a radix selection (the rate is per byte of its input)",
    "orthogonalize": "a low-rank factor's orthogonalization (PowerSGD's P and Q: Gram-Schmidt, or a QR per "
                     "matrix), its declared bytes",
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
    """Bytes one element of the row's own case moved (its measurement, or the published one's)."""
    GBps: float
    """Declared bytes per second the kernel moves, 1e9 bytes per second."""
    method: str
    """measured | derived | published."""
    source: str
    """Where the figure comes from: the command that measured it, or the datasheet and count."""
    date: str
    """When (YYYY-MM-DD)."""
    machine: str
    """What it ran on (CPU model and cores), or the datasheet's part."""

    def seconds(self, nbytes: float) -> float:
        """Time to move `nbytes` declared bytes through this kernel."""
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
        """What an estimate priced with `device`'s rows says: "measured table (cpu, 2026-11-26)",
        "published+derived table (h100, ...)"."""
        rows = list(self.for_device(device).values())
        methods = "+".join(m for m in METHODS[::-1] if any(r.method == m for r in rows))
        dates = sorted({r.date for r in rows})
        return f"{methods} table ({device}, {dates[-1]})"


def default_path() -> Path:
    return Path(str(resources.files("lionsim") / "data" / "kernels.csv"))


def _number(path: str, line: int, name: str, text: str | None) -> float:
    try:
        value = float(text or "")
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise LionsimError(f"bad {name} {text!r} on line {line} of kernel table {path}; accepted: a finite number > 0")
    return value


def read_table(path: Path) -> KernelTable:
    """A kernel table file (module doc); every problem is one line naming the file and line."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            rows = list(reader)
            header = tuple(reader.fieldnames or ())
    except (OSError, UnicodeDecodeError) as e:
        raise LionsimError(f"cannot read kernel table {path}: {getattr(e, 'strerror', None) or e}") from None
    if header != COLUMNS:
        raise LionsimError(f"kernel table {path} has columns {', '.join(header) or 'none'}; "
                           f"accepted: exactly {', '.join(COLUMNS)}")
    out, seen = [], set()
    for line, r in enumerate(rows, start=2):
        if None in r or any(v is None for v in r.values()):  # too many fields, or too few
            fields = len(r.get(None) or []) + sum(v is not None for k, v in r.items() if k is not None)
            raise LionsimError(f"line {line} of kernel table {path} has {fields} fields; accepted: {len(COLUMNS)} "
                               f"({', '.join(COLUMNS)})")
        if r["kernel"] not in KERNELS:
            raise LionsimError(f"unknown kernel {r['kernel']!r} on line {line} of kernel table {path}; "
                               f"accepted: {', '.join(KERNELS)}")
        if r["method"] not in METHODS:
            raise LionsimError(f"bad method {r['method']!r} on line {line} of kernel table {path}; "
                               f"accepted: {', '.join(METHODS)}")
        if (r["device"], r["kernel"]) in seen:
            raise LionsimError(f"line {line} of kernel table {path}: {r['device']} {r['kernel']} appears twice")
        seen.add((r["device"], r["kernel"]))
        if not all(r[c].strip() for c in ("device", "source", "date", "machine")):  # every row names its source
            empty = next(c for c in ("device", "source", "date", "machine") if not r[c].strip())
            raise LionsimError(f"empty {empty} on line {line} of kernel table {path}; accepted: every row names its "
                               "device, source, date and machine")
        out.append(KernelRow(device=r["device"], kernel=r["kernel"],
                             bytes_per_param=_number(str(path), line, "bytes_per_param", r["bytes_per_param"]),
                             GBps=_number(str(path), line, "GBps", r["GBps"]),
                             method=r["method"], source=r["source"], date=r["date"], machine=r["machine"]))
    return KernelTable(tuple(out), str(path))


@cache
def default_table() -> KernelTable:
    """The table shipped with lionsim (lionsim/data/kernels.csv)."""
    return read_table(default_path())
