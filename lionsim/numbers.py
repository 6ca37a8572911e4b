"""Numbers as the tables print them: three significant digits, never an exponent beside plain
neighbours, and a whole run's length in a unit that reads at any size.

Python's 'g' rounds first and then picks its form, so a value that rounds up to 10**digits
(999.97 to 3 digits) comes out as "1e+03" while 998 beside it reads plainly; `sig` prints that
value as the whole number ("1,000"), as the tables print every figure of 1,000 and above. A unit
ladder (kB, MB, GB: `bytes_text`, the one every table, plot and message uses) chooses its unit
from the rounded value (`rounded`), so that 999.6 GB reads "1.00 TB", not "1e+03 GB". A figure
keeps its significant trailing zeros ("1.10" beside "1.02", "0.500", "44.0"): 'g' drops them, and
a column then read as if its rows had been measured to different precisions. No imports beyond
the standard library: the CLI's tables use it.
"""

from __future__ import annotations

import math
from numbers import Integral  # the standard library's: int and numpy's integers

TIE = 0.005
"""A speedup within this of 1.00x (0.5%) ties: "level", not a win or a loss (estimate's sweep
crossovers), and a faster form within it of a step is no news (estimate's hierarchical hint)."""


def rounded(value: float, digits: int = 3) -> float:
    """`value` rounded to `digits` significant digits (999.97 -> 1000.0): what a unit ladder
    compares with its units, so the figure printed in the chosen unit is below 1000."""
    return float(f"{value:.{digits}g}")


def sig(value: float, digits: int = 3, *, zeros: bool = True) -> str:
    """`value` to `digits` significant digits, as a measurement table prints it:
    - a real figure keeps its significant trailing zeros ("1.10", "0.500", "44.0", "10.0" for
      9.9996), with no bare point where the digits end at the units ("100", "998");
    - from 10**digits up (once rounded: 999.97 too) the whole number, thousands grouped ("1,000",
      "2,875"), never "1e+03";
    - an int (a count) whole as it is ("8", "12,345"), never "8.00";
    - exact zero (0.0 and -0.0) "0": a time that is nothing, not one measured to three places;
    - below 1e-4 (once rounded) 'g''s own form, exponent and all ("5e-05"): callers print
      "<0.0001" or a smaller unit; a value that rounds up to 1e-4 reads "0.000100";
    - NaN and infinities as 'g' writes them ("nan", "inf").
    `zeros=False` drops the trailing zeros as 'g' does ("1.1", "1"): for a tick on a plot's axis,
    a place on a scale rather than a measured figure."""
    if isinstance(value, Integral):
        return f"{value:,}" if abs(value) >= 10**digits else str(int(value))
    if value == 0:
        return "0"
    if math.isfinite(value) and abs(rounded(value, digits)) >= 10**digits:
        return f"{value:,.0f}"
    plain = f"{value:.{digits}g}"
    if not zeros or not math.isfinite(value) or "e" in plain:
        return plain
    return f"{value:#.{digits}g}".removesuffix(".")


def distinct(values, digits: int = 3) -> list[str]:
    """Each of `values` (a sweep's points, ascending) as a label on a scale, `sig` without trailing
    zeros: `digits` significant digits, and more for a value whose neighbour would read the same
    ("0.1", "0.1007", "0.1014" where 3 digits wrote "0.101" twice); a point spaced from both its
    neighbours keeps 3 however close the others are ("0.256", "0.258")."""
    values = [float(v) for v in values]

    def text(i: int, d: int) -> str:
        return sig(values[i], d, zeros=False)

    def fewest(i: int) -> int:
        near = [j for j in (i - 1, i + 1) if 0 <= j < len(values) and values[j] != values[i]]
        d = digits
        while d < 17 and any(text(i, d) == text(j, d) for j in near):
            d += 1
        return d

    places = [fewest(i) for i in range(len(values))]
    for i in range(1, len(values)):  # a neighbour printed at other digits may still meet: both longer
        while values[i] != values[i - 1] and text(i, places[i]) == text(i - 1, places[i - 1]) and places[i] < 17:
            places[i] = places[i - 1] = max(places[i], places[i - 1]) + 1
    return [text(i, d) for i, d in enumerate(places)]


DECIMAL_UNITS = (("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3))
BINARY_UNITS = (("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))


def bytes_text(n: float, sep: str = " ", *, zeros: bool = True) -> str:
    """`n` bytes as every lionsim table, plot and message prints them: decimal units (1 kB = 1e3 B),
    the unit chosen from the rounded figure (999.6 MB reads "1.00 GB"), 3 significant digits as `sig`
    writes them ("4.00 GB", "1.50 kB"); below 1 kB a whole number of bytes is a count ("8 B", not
    "8.00 B"); past 1,000 PB whole PB, grouped (never "7e+06 GB"); "-" for NaN (a cell with no
    figure); "inf" for an infinity (no unit holds it: not "inf PB"). `zeros=False`: an axis tick's
    "20 MB", "1 GB" (`sig`).

    One form a place: prose, messages, plots, listings and report.md (no width to keep) "1.24 GB"
    (`sep` " "); every terminal step table (bench's summary, estimate's breakdown) "1.24GB"
    (step_bytes, `sep` ""): those tables hold a dozen columns in 80, where the space would take a
    column from the run names (a long strategy's name is never broken, so the table would print
    wider), and one table printing "2.84GB" beside another's "1.24 GB" read as two conventions."""
    if math.isnan(n):
        return "-"
    if math.isinf(n):
        return "inf" if n > 0 else "-inf"
    if abs(rounded(n)) >= 1e18:
        return f"{n / 1e15:,.0f}{sep}PB"
    for unit, size in DECIMAL_UNITS:
        if abs(rounded(n)) >= size:
            return f"{sig(n / size, zeros=zeros)}{sep}{unit}"
    return f"{sig(int(n) if float(n).is_integer() else n, zeros=zeros)}{sep}B"


def step_bytes(n: float) -> str:
    """Bytes as every step table prints them, compact ("1.24GB"; bytes_text says why)."""
    return bytes_text(n, sep="")


def set_in_binary(n: float) -> bool:
    """Whether a size was most likely given in binary units: a whole number of KiB that is no
    whole number of kB (1 KiB to 1 GiB, --sizes 1K:1G), where 1000 B, 1 MB stay decimal."""
    return n >= 2**10 and n % 2**10 == 0 and n % 1000 != 0


def binary_sizes(sizes) -> bool:
    """One unit system for a set of sizes (a table's column, a plot's axis): binary where every
    size of 1000 B and up was set in binary units (set_in_binary; below 1000 "N B" reads alike in
    both), else decimal for all (--sizes 1K:1M:x1.5 would read "1 KiB" above "1.54 kB")."""
    return all(n < 1000 or set_in_binary(n) for n in sizes)


def binary_bytes_text(n: float) -> str:
    """`n` bytes in binary units (23552 -> "23 KiB"): sizes that were set as powers of two (a
    library's thresholds, nccl-tests' --sizes 1K:1G)."""
    for unit, size in BINARY_UNITS:
        if n >= size:
            return f"{n / size:.4g} {unit}"
    return f"{n:g} B"


def plural(n, noun: str, many: str | None = None) -> str:
    """A count and its noun, the noun singular for one alone: "1 step", "20 steps", "1 pass" and
    "2 passes" (`many`: a plural that is not the noun and an s). `n` a count, or one written
    already ("1,024" grouped, "8/16" where runs differ, "8-16" either side of a crossing): the
    noun is singular only where it reads "1". Every count lionsim prints with its noun is written
    by it."""
    text = str(n)
    return f"{text} {noun if text == '1' else many or noun + 's'}"


def in_words(items: list[str]) -> str:
    """Items as a sentence lists them: "a", "a and b", "a, b and c"."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def ratio_text(x: float, places: int) -> str:
    """A ratio as the tables print one (a speedup, comm's GB/s): `places` decimals from 0.01 up
    and at 0 ("1.31", "0.669"), three significant digits below, where the decimals would read
    nothing but zeros ("0.000264", not "0.00")."""
    return f"{x:.{places}f}" if x >= 0.01 or x == 0 else sig(x)


def speedup_text(x: float) -> str:
    """A speedup as every table prints it: "1.31x", three significant digits below 0.01 ("0.000264x",
    where two decimals read "0.00x": ratio_text), "-" where there is none (NaN or infinite: no time
    to target)."""
    if not math.isfinite(x):
        return "-"
    return f"{ratio_text(x, 2)}x"


MS_PLAIN_TOP = 1e6
"""Milliseconds a step table prints whole (999,999: 7 characters, a step of 16.7 minutes); from
it up the figure is 3 significant digits and a power of ten (5.18e6, 1.52e13: at most 7
characters), so that the five ms columns still fit 80 however large the inputs (estimate accepts
--params 1e15 at --tokens-per-worker 1e9: 480 years a step). The inputs stay accepted: each is
within what estimate takes alone, and a model that size is priced to show how far off it is."""


def ms_text(ms: float) -> str:
    """A step table's milliseconds: `sig`, whole and grouped from 1,000 up, compact past MS_PLAIN_TOP
    with its three digits all written, as `sig` writes them ("1.00e6" beside "5.18e6")."""
    if math.isfinite(ms) and abs(rounded(ms)) >= MS_PLAIN_TOP:
        mantissa, exponent = f"{ms:.2e}".split("e")
        return f"{mantissa}e{int(exponent)}"
    return sig(ms)


YEAR_S = 365.25 * 86400.0
"""A Julian year, the unit of a run past a year."""


def run_duration(seconds: float) -> str:
    """A whole run's length, at most 9 characters at any size: h:mm:ss below a day ("7:05:09"),
    then 3 significant digits in days below a year ("12.3 d", "364 d"), in years below a thousand
    ("4.17 y", "812 y"), and a power of ten past that ("4.1e9 y"); seconds below one ("0.350s"). The
    figures are `sig`'s, trailing zeros kept ("1.00 d" for 86,399.6 s, beside "12.3 d")."""
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
