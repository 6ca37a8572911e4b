"""Numbers as the tables print them: three significant digits, never an exponent beside plain
neighbours, and a whole run's length in a unit that reads at any size.

Python's 'g' rounds first and then picks its form, so a value that rounds up to 10**digits
(999.97 to 3 digits) comes out as "1e+03" while 998 beside it reads plainly; `sig` prints that
value as the whole number ("1,000"), as the tables print every figure of 1,000 and above. A unit
ladder (kB, MB, GB: `bytes_text`, the one every table, plot and message uses) chooses its unit
from the rounded value (`rounded`), so that 999.6 GB reads "1 TB", not "1e+03 GB". No imports
beyond the standard library: the CLI's tables use it.
"""

from __future__ import annotations

import math


def rounded(value: float, digits: int = 3) -> float:
    """`value` rounded to `digits` significant digits (999.97 -> 1000.0): what a unit ladder
    compares with its units, so the figure printed in the chosen unit is below 1000."""
    return float(f"{value:.{digits}g}")


def sig(value: float, digits: int = 3) -> str:
    """`value` to `digits` significant digits as 'g' writes it (1.5, 0.0312, 998), but the whole
    number, thousands grouped, where it rounds to 10**digits or more ("1,000" for 999.97, "2,875"):
    never "1e+03". Below 1e-4 'g''s own exponent stays (callers print "<0.0001" or a smaller unit)."""
    if math.isfinite(value) and abs(rounded(value, digits)) >= 10**digits:
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"


DECIMAL_UNITS = (("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3))
BINARY_UNITS = (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))


def bytes_text(n: float, sep: str = " ") -> str:
    """`n` bytes as every lionsim table, plot and message prints them: decimal units (1 kB = 1e3 B),
    the unit chosen from the rounded figure (999.6 MB reads "1 GB"), 3 significant digits; past
    1,000 PB whole PB, grouped (never "7e+06 GB"); "-" for NaN (a cell with no figure); "inf" for an
    infinity (no unit holds it: not "inf PB")."""
    if math.isnan(n):
        return "-"
    if math.isinf(n):
        return "inf" if n > 0 else "-inf"
    if abs(rounded(n)) >= 1e18:
        return f"{n / 1e15:,.0f}{sep}PB"
    for unit, size in DECIMAL_UNITS:
        if abs(rounded(n)) >= size:
            return f"{sig(n / size)}{sep}{unit}"
    return f"{sig(n)}{sep}B"


def binary_bytes_text(n: float) -> str:
    """`n` bytes in binary units (23552 -> "23 KiB"): sizes that were set as powers of two (a
    library's thresholds, nccl-tests' --sizes 1K:1G)."""
    for unit, size in BINARY_UNITS:
        if n >= size:
            return f"{n / size:.4g} {unit}"
    return f"{n:g} B"


def speedup_text(x: float) -> str:
    """A speedup as every table prints it: "1.31x", three significant digits below 0.01 ("0.000264x",
    where two decimals read "0.00x"), "-" where there is none (NaN or infinite: no time to target)."""
    if not math.isfinite(x):
        return "-"
    return f"{x:.2f}x" if x >= 0.01 or x == 0 else f"{sig(x)}x"


MS_PLAIN_TOP = 1e6
"""Milliseconds a step table prints whole (999,999: 7 characters, a step of 16.7 minutes); from
it up the figure is 3 significant digits and a power of ten (5.18e6, 1.52e13: at most 7
characters), so that the five ms columns still fit 80 however large the inputs (estimate accepts
--params 1e15 at --tokens-per-worker 1e9: 480 years a step). The inputs stay accepted: each is
within what estimate takes alone, and a model that size is priced to show how far off it is."""


def ms_text(ms: float) -> str:
    """A step table's milliseconds: `sig`, whole and grouped from 1,000 up, compact past MS_PLAIN_TOP."""
    if math.isfinite(ms) and abs(rounded(ms)) >= MS_PLAIN_TOP:
        mantissa, exponent = f"{ms:.2e}".split("e")
        return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"
    return sig(ms)


YEAR_S = 365.25 * 86400.0
"""A Julian year, the unit of a run past a year."""


def run_duration(seconds: float) -> str:
    """A whole run's length, at most 9 characters at any size: h:mm:ss below a day ("7:05:09"),
    then 3 significant digits in days below a year ("12.3 d", "364 d"), in years below a thousand
    ("4.17 y", "812 y"), and a power of ten past that ("4.1e9 y"); seconds below one ("0.35s")."""
    if not math.isfinite(seconds):
        return "-"
    if seconds < 1:
        return f"{sig(seconds)}s"
    if round(seconds) < 86400:
        whole = round(seconds)
        return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"
    years = seconds / YEAR_S
    if rounded(years) >= 1000:
        mantissa, exponent = f"{years:.1e}".split("e")
        return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)} y"
    size, name = (YEAR_S, "y") if rounded(years) >= 1 else (86400.0, "d")  # never "0.998 y"
    return f"{sig(seconds / size)} {name}"
