"""Message sizes from the command line: "1KiB:1GiB" (x2 steps), "1K:1G", "1MiB:1GiB:x4", "4096,1MB".

Units: B; KB, MB, GB, TB (PB) are powers of 1000 (SPEC: GB means 1e9 bytes everywhere);
KiB, MiB, GiB, TiB (PiB) are powers of 1024, and so are nccl-tests' bare K, M, G, T (P). A bare number
is bytes. Units are case-insensitive but for the B: a lower-case b is a bit in the usual notation
(1Kb, a kilobit), so it is refused rather than read as a byte. A range START:END[:xF] is nccl-tests' `-b START -e END
-f F`: START, START*F, START*F^2, ... while <= END (F = 2 by default), so every step is the
same factor; END is in the sweep when it is on that sequence (`1K:1G` and `1KiB:1GiB` double
from 1 KiB to 1 GiB exactly; `1KB:1GB` doubles from 1000 B to 524 MB, the last <= 1 GB). A
sweep holds at most MAX_SIZES sizes: `1KB:1GB:x1.0001` would be 138,000 rows (hours of
measuring), refused up front with the count and a step that fits. The sizes come back ascending,
each once (a size typed twice, or met by two ranges, is one row; comm says how many it dropped).
"""

from __future__ import annotations

import math
import re

from lionsim.errors import LionsimError
from lionsim.ranges import refusal
from lionsim.whole import Text

UNITS = {
    "b": 1,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
    "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40,  # nccl-tests' -b 1K -e 1G
    "pb": 10**15, "pib": 2**50, "p": 2**50,  # read so that "1PB" is refused by its size, above MAX_BYTES
}
MAX_BYTES = 2**40
"""The largest message a size may name: 1 TiB. A collective's buffer lives in one GPU's memory,
and the largest GPUs hold 141-288 GB (H200 141 GB, B200 192 GB, MI325X 256 GB, B300 288 GB),
so 1 TiB is several times any real call; beyond it a figure (1e30 B: 9.3e20 GiB) prices nothing
that can run and only overflows the tables."""
SIZES = ("1 B to 1 TiB (1,099,511,627,776 B), a number with an optional unit: B, KB, MB, GB, TB (powers of "
         "1000), KiB, MiB, GiB, TiB or K, M, G, T (powers of 1024); B in capitals (b is bits)")
"""A size as `comm --sizes` takes it."""
RANGE_FORM = "START:END or START:END:xFACTOR, START <= END, factor > 1, e.g. 1KB:1GB:x2"
"""A size range as `comm --sizes` takes it."""
MAX_SIZES = 1000
"""Sizes one sweep may hold (x2 from 1 B to 1 TB is 41)."""
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z]*)\s*$")


class _Refused(Exception):
    """Why a part of --sizes is refused and what is accepted there; parse_sizes says it in one line."""

    def __init__(self, why: str, accepted: str = SIZES):
        super().__init__(why)
        self.why, self.accepted = why, accepted


class Sizes(list):
    """The sizes of --sizes, ascending, each once; `dropped`: how many repeats were dropped; `short`:
    each range whose steps stop below its END, (the range as typed, its last size)."""

    dropped: int = 0
    short: tuple[tuple[str, int], ...] = ()


def parse_size(text: str) -> int:
    """One size in bytes: "4096", "1.5MB", "64KiB"; a whole number of bytes >= 1."""
    try:
        return _size(text)
    except _Refused as e:
        raise LionsimError(refusal("--sizes", Text(text.strip()), e.accepted, e.why)) from None


def _bytes_unit(unit: str) -> str:
    """The bytes unit a unit in bits was meant as, spelt as SIZES lists it: gb -> GB, mib -> MiB
    (not gB, which reads as millibytes where the prefix is m)."""
    prefix = unit[:-1]
    return f"{prefix[:1].upper()}iB" if prefix.lower().endswith("i") else f"{prefix.upper()}B"


def _size(text: str) -> int:
    match = _SIZE.match(text)
    shown = text.strip() or "''"
    unit = match.group(2) if match else ""
    if unit.endswith("b"):  # 1Kb is a kilobit in the usual notation: refused, not read as bytes
        raise _Refused(f"{shown}: b is bits; write B for bytes ({_bytes_unit(unit)})")
    if not match or (unit and unit.lower() not in UNITS):
        raise _Refused(f"{shown} is not a size" if not match else f"{shown}: unknown unit {unit}")
    value = float(match.group(1)) * UNITS[unit.lower() or "b"]
    if value > MAX_BYTES:
        raise _Refused(f"{shown} is {value:.4g} B, above 1 TiB")
    if value < 1:
        raise _Refused(f"{shown} is below 1 B")
    if value != math.floor(value):
        raise _Refused(f"{shown} is not a whole number of bytes")
    return int(value)


def parse_sizes(text: str) -> Sizes:
    """A comma list of sizes and/or START:END[:xF] ranges: the sizes ascending, each once (Sizes.dropped
    counts the repeats dropped); anything else refused in one line, "bad --sizes TEXT: why; accepted: ..."."""
    short: list[tuple[str, int]] = []
    try:
        sizes = _sizes(text, short)
    except _Refused as e:
        why = e.why.removeprefix(text.strip() + ": ")  # the part that is the whole value: named once
        raise LionsimError(refusal("--sizes", Text(text.strip()), e.accepted, why)) from None
    kept = Sizes(sorted(set(sizes)))
    kept.dropped = len(sizes) - len(kept)
    kept.short = tuple(short)
    return kept


def _sizes(text: str, short: list[tuple[str, int]] | None = None) -> list[int]:
    sizes: list[int] = []
    for part in text.split(","):
        pieces = part.split(":")
        if len(pieces) == 1:
            sizes.append(_size(pieces[0]))
        elif len(pieces) in (2, 3):
            factor = _factor(pieces[2], part) if len(pieces) == 3 else 2.0
            start, end = _size(pieces[0]), _size(pieces[1])
            if end < start:  # said here, where the range as typed is known
                raise _Refused(f"{part.strip()}: END {pieces[1].strip()} is below START {pieces[0].strip()}", RANGE_FORM)
            steps = _range(start, end, factor, part.strip())
            if short is not None and steps[-1] < end:  # as nccl-tests: the last step <= END
                short.append((part.strip(), steps[-1]))
            sizes.extend(steps)
        else:
            raise _Refused(f"{part.strip()} is neither a size nor a range", RANGE_FORM)
    if len(set(sizes)) > MAX_SIZES:
        raise _Refused(f"{len(set(sizes)):,} sizes", f"at most {MAX_SIZES:,} sizes")
    return sizes


def _range(start: int, end: int, factor: float, part: str) -> list[int]:
    if end < start:
        raise _Refused(f"{part}: END is below START", RANGE_FORM)
    count = math.floor(math.log(end / start) / math.log(factor) + 1e-9) + 1
    if count > MAX_SIZES:
        least = (end / start) ** (1 / (MAX_SIZES - 1))
        raise _Refused(f"{part}: about {count:,} sizes", f"at most {MAX_SIZES:,} (a step of "
                       f"x{math.ceil(least * 1000) / 1000:g} or more here, e.g. x2)")
    return [int(round(start * factor**k)) for k in range(count)]


def _factor(text: str, part: str) -> float:
    raw = text.strip().lower().removeprefix("x")
    try:
        factor = float(raw)
    except ValueError:
        factor = math.nan
    if not math.isfinite(factor) or factor <= 1:
        raise _Refused(f"{part.strip()}: step {text.strip()} is not a factor above 1", RANGE_FORM)
    return factor
