"""Message sizes from the command line: "1KiB:1GiB" (x2 steps), "1K:1G", "1MiB:1GiB:x4", "4096,1MB".

Units: B; KB, MB, GB, TB (PB) are powers of 1000 (SPEC: GB means 1e9 bytes everywhere);
KiB, MiB, GiB, TiB (PiB) are powers of 1024, and so are nccl-tests' bare K, M, G, T (P). A bare number
is bytes. Units are case-insensitive. A range START:END[:xF] is nccl-tests' `-b START -e END
-f F`: START, START*F, START*F^2, ... while <= END (F = 2 by default), so every step is the
same factor; END is in the sweep when it is on that sequence (`1K:1G` and `1KiB:1GiB` double
from 1 KiB to 1 GiB exactly; `1KB:1GB` doubles from 1000 B to 524 MB, the last <= 1 GB). A
sweep holds at most MAX_SIZES sizes: `1KB:1GB:x1.0001` would be 138,000 rows (hours of
measuring), refused up front with the count and a step that fits.
"""

from __future__ import annotations

import math
import re

from lionsim.errors import LionsimError

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
ACCEPTED = "accepted: 1 B to 1 TiB (1,099,511,627,776 B), a number with an optional unit"
RANGE_FORM = "START:END or START:END:xFACTOR, START <= END, factor > 1, e.g. 1KB:1GB:x2"
"""A size range as `comm --sizes` takes it."""
MAX_SIZES = 1000
"""Sizes one sweep may hold (x2 from 1 B to 1 TB is 41)."""
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(text: str) -> int:
    """One size in bytes: "4096", "1.5MB", "64KiB"; a whole number of bytes >= 1."""
    match = _SIZE.match(text)
    unit = match.group(2).lower() if match else ""
    if not match or (unit and unit not in UNITS):
        raise LionsimError(f"bad size {text.strip()!r}; {ACCEPTED}: B, KB, MB, GB, TB (powers of 1000), "
                           "KiB, MiB, GiB, TiB or K, M, G, T (powers of 1024)")
    value = float(match.group(1)) * UNITS[unit or "b"]
    if value > MAX_BYTES:
        raise LionsimError(f"bad size {text.strip()!r}: {value:.4g} B is above 1 TiB; {ACCEPTED}")
    if value < 1:
        raise LionsimError(f"bad size {text.strip()!r}: must be at least 1 B; {ACCEPTED}")
    if value != math.floor(value):
        raise LionsimError(f"bad size {text.strip()!r}: must be a whole number of bytes; {ACCEPTED}")
    return int(value)


def parse_sizes(text: str) -> list[int]:
    """A comma list of sizes and/or START:END[:xF] ranges, in the order given, duplicates dropped."""
    sizes: list[int] = []
    for part in text.split(","):
        pieces = part.split(":")
        if len(pieces) == 1:
            sizes.append(parse_size(pieces[0]))
        elif len(pieces) in (2, 3):
            factor = _factor(pieces[2], part) if len(pieces) == 3 else 2.0
            start, end = parse_size(pieces[0]), parse_size(pieces[1])
            if end < start:  # said here, where the range as typed is known
                raise LionsimError(f"bad size range {part.strip()!r}: END {pieces[1].strip()} is below START "
                                   f"{pieces[0].strip()}; accepted: {RANGE_FORM}")
            sizes.extend(size_range(start, end, factor))
        else:
            raise LionsimError(f"bad size range {part!r}; use START:END or START:END:xFACTOR, e.g. 1KB:1GB:x2")
    sizes = list(dict.fromkeys(sizes))
    if len(sizes) > MAX_SIZES:
        raise LionsimError(f"bad sizes {text!r}: {len(sizes):,} sizes; accepted: at most {MAX_SIZES:,}")
    return sizes


def size_range(start: int, end: int, factor: float = 2.0) -> list[int]:
    """start, start*factor, ... (rounded to whole bytes) while <= end, as nccl-tests steps
    (module doc); at most MAX_SIZES."""
    if end < start:
        raise LionsimError(f"bad size range: end {end} B is below start {start} B")
    count = math.floor(math.log(end / start) / math.log(factor) + 1e-9) + 1
    if count > MAX_SIZES:
        least = (end / start) ** (1 / (MAX_SIZES - 1))
        raise LionsimError(f"bad size range {start} B to {end} B by x{factor:g}: about {count:,} sizes; accepted: at "
                           f"most {MAX_SIZES:,} (a step of x{math.ceil(least * 1000) / 1000:g} or more here, e.g. x2)")
    return [int(round(start * factor**k)) for k in range(count)]


def _factor(text: str, part: str) -> float:
    raw = text.strip().lower().removeprefix("x")
    try:
        factor = float(raw)
    except ValueError:
        factor = math.nan
    if not math.isfinite(factor) or factor <= 1:
        raise LionsimError(f"bad step {text!r} in size range {part!r}; use a factor > 1, e.g. x2")
    return factor
