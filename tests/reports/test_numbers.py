"""Every table formatter that writes 3 (or 4) significant digits, swept over the values where
Python's 'g' rounds up to the next power of ten (999.5..999.99, 9.9995, 0.99995 ...), against a
plain rule computed in decimal: the figure is the value rounded half-even to its digits, or the
whole number once that reaches 10**digits; never an exponent; a unit ladder picks the largest unit
the rounded value fills. Before, 999.97 ms printed "1e+03" beside "2,875" and 999.6 GB "1e+03 GB"."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_EVEN, Decimal

import numpy as np
import pytest


def significant(x: float, digits: int = 3) -> Decimal:
    """x (its exact binary value) rounded half-even to `digits` significant digits, in decimal."""
    d = Decimal(x)
    return d.quantize(Decimal(1).scaleb(d.adjusted() - digits + 1), rounding=ROUND_HALF_EVEN)


def plain(x: float, digits: int = 3) -> Decimal:
    """The figure a table prints for x: `significant`, or the whole number once that reaches 10**digits."""
    q = significant(x, digits)
    return Decimal(x).quantize(Decimal(1), rounding=ROUND_HALF_EVEN) if abs(q) >= 10**digits else q


def edges(low: float, high: float) -> list[float]:
    """Values about each power of ten from `low` to `high`: just below it (where 'g' rounds up), on it, past it."""
    out, base = [], low
    while base <= high:
        out += [base * f for f in (0.9994, 0.9995, 0.99951, 0.99955, 0.99997, 0.9999999, 1.0, 1.0004, 1.234567)]
        base *= 10
    return out


def _figure(text: str) -> Decimal:
    assert "e" not in text.lower().replace("-", ""), text  # no exponent
    return Decimal(text.replace(",", ""))


def _plain_cases():
    from lionsim.cli import estimate_view, sweep_view
    from lionsim.docgen import figures
    from lionsim.regress.rows import fmt
    from lionsim.reports import estimate_report, markdown, tables

    unit = lambda f, name: lambda v: f(v).removesuffix(f" {name}")  # noqa: E731
    return {  # name: (its input -> its printed figure, the figure's scale to the input, digits, the figures swept)
        "estimate_view._ms": (estimate_view._ms, 1e3, 3, (1e-3, 1e5)),  # ms of seconds
        "sweep_view._ms": (sweep_view._ms, 1e3, 3, (1e-3, 1e8)),
        "tables._num": (tables._num, 1.0, 3, (1e-3, 1e8)),
        "tables._ms": (tables._ms, 1e3, 3, (10, 1e8)),  # 2 decimals below 1 ms
        "markdown.ms": (unit(markdown.ms, "ms"), 1e3, 3, (1e-3, 1e8)),
        "estimate_report._ms": (unit(estimate_report._ms, "ms"), 1e3, 3, (1e-3, 1e8)),
        "docgen.figures.ms": (figures.ms, 1e3, 3, (1e-3, 1e8)),
        "regress.rows.fmt": (fmt, 1.0, 4, (1e-3, 1e8)),
    }


PLAIN = ["estimate_view._ms", "sweep_view._ms", "tables._num", "tables._ms", "markdown.ms", "estimate_report._ms",
         "docgen.figures.ms", "regress.rows.fmt"]


@pytest.mark.parametrize("name", PLAIN)
def test_a_figure_is_its_value_rounded_and_never_an_exponent(name):
    show, scale, digits, (low, high) = _plain_cases()[name]
    for x in edges(low, high):
        given = x / scale
        assert _figure(show(given)) == plain(given * scale, digits), (name, x, show(given))


LADDERS = ["bytes_text", "bytes_text, no space", "comm_view.human_bytes"]
SIZES = {"B": 1.0, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15}


def _ladder(name: str):
    from lionsim.cli import comm_view
    from lionsim.numbers import bytes_text

    return {"bytes_text": bytes_text, "bytes_text, no space": lambda n: bytes_text(n, sep=""),
            "comm_view.human_bytes": comm_view.human_bytes}[name]


@pytest.mark.parametrize("name", LADDERS)
def test_a_size_takes_the_unit_its_rounded_value_fills(name):
    show = _ladder(name)
    for n in edges(1e3, 1e17):
        if name.startswith("comm_view") and n % 2**10 == 0 and n % 1000:
            continue  # a whole number of KiB reads in binary units (below)
        text = show(n)
        number, unit = re.fullmatch(r"([\d.,]+) ?([kMGTP]?B)", text).groups()
        want = max((u for u in SIZES if significant(n) >= Decimal(SIZES[u])), key=SIZES.get)
        assert unit == want and _figure(number) == plain(n / SIZES[unit]), (name, n, text)


UNIT_NAME = r'"[kKMGTP]i?B"'
UNIT_SIZE = r"(?:\d[\d_.e]*(?:\s*\*\*\s*\d+)?|1\s*<<\s*\d+|[A-Z][A-Za-z_]*)"
LADDER = re.compile(rf"\(\s*{UNIT_NAME}\s*,\s*{UNIT_SIZE}\s*\)|\(\s*{UNIT_SIZE}\s*,\s*{UNIT_NAME}\s*\)"
                    rf"|{UNIT_NAME}\s*:\s*{UNIT_SIZE}\b")
"""A unit paired with its size, either way round and in any spelling: ("GB", 1e9), ("GiB", 2**30),
(1 << 20, "MiB"), (GiB, "GiB"), "MiB": 1024 ** 2."""


def test_every_size_lionsim_prints_is_read_by_the_one_ladder():
    """Tables, plots, traces, reports and messages print bytes by lionsim.numbers.bytes_text (or
    binary_bytes_text, for sizes set as powers of two): no module keeps a unit ladder of its own,
    decimal or binary (eight had, and two had drifted: "KB" beside "kB", GB against PB as the top
    unit; the published sweeps kept a GiB/MiB/KiB one)."""
    import pathlib

    import lionsim

    assert all(LADDER.search(text) for text in ('("GB", 1e9), ("MB", 1e6)', '("GiB", 2**30)', '(1 << 20, "MiB")',
                                                 '(GiB, "GiB")', '"MiB": 1024 ** 2', '("KiB", 1_024)'))
    root = pathlib.Path(lionsim.__file__).parent
    ladders = [p.relative_to(root).as_posix() for p in root.rglob("*.py") if LADDER.search(p.read_text())]
    assert ladders == ["numbers.py"], ladders


def test_a_step_table_keeps_its_milliseconds_within_seven_characters_at_any_size():
    """Whole and grouped below 1,000,000 ms, then 3 significant digits and a power of ten (5.18e6)."""
    from lionsim.cli.estimate_view import _ms

    assert [_ms(s) for s in (0.99997, 2.875, 999.9996, 5180.923, 1.5166835e10)] == [
        "1,000", "2,875", "1.00e6", "5.18e6", "1.52e13"]
    for x in edges(1e-4, 1e18):
        text = _ms(x / 1e3)
        assert len(text) <= 7 or x < 1e6, text
        if "e" in text:
            mantissa, power = text.split("e")
            assert Decimal(mantissa) * 10 ** int(power) == significant(x / 1e3 * 1e3) and 1 <= Decimal(mantissa) < 10, text


def test_a_whole_runs_length_reads_at_any_size():
    """h:mm:ss below a day, then days, years, and a power of ten of years: at most 9 characters."""
    from lionsim.numbers import YEAR_S, run_duration

    assert [run_duration(s) for s in (0.35, 25509.4, 86399.6, 12.3 * 86400, 364.4 * 86400, 4.17 * YEAR_S,
                                      999.7 * YEAR_S, 4.8e9 * YEAR_S)] == [
        "0.350s", "7:05:09", "1.00 d", "12.3 d", "364 d", "4.17 y", "1e3 y", "4.8e9 y"]
    assert run_duration(364.6 * 86400) == "365 d"  # days until it reads a whole year, never "0.998 y"
    for s in edges(1e5, 1e24):
        text = run_duration(s)
        number, unit = text.split()
        assert len(text) <= 9 and unit in ("d", "y"), text
        size = 86400.0 if unit == "d" else YEAR_S
        if "e" in number:
            assert abs(float(number) * size / s - 1) < 0.05, text
        else:
            assert _figure(number) == plain(s / size) and plain(s / size) < 1000, text


@pytest.mark.parametrize("n, text", [(float("inf"), "inf"), (-float("inf"), "-inf"), (float("nan"), "-")])
def test_a_size_without_a_figure_reads_as_such_not_in_petabytes(n, text):
    """bytes_text(inf) read "inf PB"; an infinity has no unit."""
    from lionsim.numbers import bytes_text

    assert bytes_text(n) == text and bytes_text(n, sep="") == text


@pytest.mark.parametrize("given, shown", [("1e50", "1e50"), (" 2.5e3 ", "2.5e3"), (12345678901234567, "12345678901234567"),
                                          (3e11, "3e11"), (1e30, "1e30"), (2.5, "2.5"), ("x", "'x'")])
def test_a_refusal_echoes_a_number_as_it_was_typed(given, shown):
    """typed: a whole number's own text, an int in full (typed() printed one past 10 digits as
    1.23457e16), a float in at most 6 significant digits."""
    from lionsim.whole import read_whole, typed

    value = read_whole(given) if isinstance(given, str) and given != "x" else given
    assert typed(value) == shown


def test_a_speedup_keeps_its_digits_however_small():
    """At 10^8 workers estimate printed dlion-mavo@a2a-1bit's 0.000265x as "0.00x"; every table
    prints speedups by numbers.speedup_text."""
    import math

    from lionsim.numbers import speedup_text

    assert [speedup_text(x) for x in (1.3149, 0.01, 0.00999, 0.000264813, 0.0, math.nan, math.inf)] == [
        "1.31x", "0.01x", "0.00999x", "0.000265x", "0.00x", "-", "-"]


def measured(x: float, digits: int = 3) -> str:
    """The figure a measurement table prints for `x`, by the plain rule spelled out in decimal: an
    int whole; exact zero "0"; from 10**digits (once rounded) the whole number, grouped; below 1e-4
    (once rounded) 'g''s own text; else the value rounded half-even to `digits` significant digits,
    every one of them written ("1.10", "0.500", "44.0", "10.0" where 9.9996 carries). Grouped from
    10**digits up, as every figure is."""
    if isinstance(x, int):
        return f"{x:,}" if abs(x) >= 10**digits else str(x)
    if x == 0:
        return "0"
    q = significant(x, digits)
    if abs(q) >= 10**digits:
        return f"{Decimal(x).quantize(Decimal(1), rounding=ROUND_HALF_EVEN):,}"
    if abs(q) < Decimal("1e-4"):
        return f"{x:.{digits}g}"
    if q.adjusted() > Decimal(x).adjusted():  # 9.9996 -> 10.00: the carry added a digit, drop the last
        q = q.quantize(Decimal(1).scaleb(q.adjusted() - digits + 1))
    return format(q, "f")


def sig_cases(seed: int = 0) -> list:
    """Random floats over 1e-4..1e9 of either sign, the same cut to a few digits (1.1, 0.5, 44.0:
    where the zeros are the digits a table must keep), ints, zeros, and the values about each
    power of ten where rounding carries (9.995, 9.9951, 999.97)."""
    import random

    rng = random.Random(seed)
    floats = [rng.choice((1, -1)) * 10 ** rng.uniform(-4, 9) for _ in range(3000)]
    short = [float(f"{x:.{rng.randint(1, 2)}g}") for x in floats[:1000]]
    ints = [rng.randint(-(10**7), 10**7) for _ in range(300)] + list(range(-12, 1013, 7))
    return [*floats, *short, *ints, 0.0, -0.0, 0, 9.995, 9.9951, 999.97, 999.4, 100.0, 44.0, 0.5, 1.1,
            9.9996e-5, 5e-5, 1.2345e-7, *edges(1e-4, 1e9), *(-x for x in edges(1e-4, 1e9))]


@pytest.mark.parametrize("digits", [3, 4])
def test_sig_keeps_every_significant_digit_it_prints(digits):
    """sig dropped trailing zeros ('g'): a step column read "1.1" beside "1.02", "0.5" beside
    "0.512", "44" beside "44.1", as if measured to different precisions."""
    from lionsim.numbers import sig

    for x in sig_cases(digits):
        assert sig(x, digits) == measured(x, digits), (x, sig(x, digits), measured(x, digits))


def test_sig_writes_as_many_digits_in_every_row_of_a_column():
    """What the rule is for: between 1e-4 and 10**3 every figure shows exactly 3 significant
    digits, counted from the text alone."""
    from lionsim.numbers import sig

    for x in sig_cases(1):
        if isinstance(x, float) and 1e-4 <= abs(significant(x)) < 1000:
            digits = sig(x).lstrip("-").replace(".", "").lstrip("0")
            assert len(digits) == 3, (x, sig(x))


def test_sig_keeps_counts_zero_and_tiny_values_as_they_were():
    """An int is a count ("8 workers", never "8.00"), exact zero a plain "0", below 1e-4 'g''s own
    form; an axis tick (zeros=False) reads as 'g' writes it."""
    import numpy as np

    from lionsim.numbers import bytes_text, sig

    assert [sig(8), sig(np.int64(8)), sig(12345), sig(-1005), sig(0.0), sig(-0.0), sig(5e-5)] == [
        "8", "8", "12,345", "-1,005", "0", "0", "5e-05"]
    assert [sig(x) for x in (1.1, 0.5, 44.0, 100.0, 999.4, 9.995, 9.9951, 999.97, 9.9996e-5, -0.5)] == [
        "1.10", "0.500", "44.0", "100", "999", "9.99", "10.0", "1,000", "0.000100", "-0.500"]
    for x in sig_cases(2):
        if isinstance(x, float) and 0 < abs(x) < 999.5:
            assert sig(x, zeros=False) == f"{x:.3g}", x
    assert [bytes_text(n) for n in (8, 8.0, 12.5, 4e9, 1.5e3)] == ["8 B", "8 B", "12.5 B", "4.00 GB", "1.50 kB"]
    assert [bytes_text(n, zeros=False) for n in (2e7, 1e9)] == ["20 MB", "1 GB"]


def fewest_digits(values: list[float], i: int) -> int:
    """The fewest significant digits, 3 at least, at which values[i] rounds (half-even, in decimal) to a
    figure neither neighbour rounds to: brute force over the digits."""
    d = 3
    while any(significant(values[i], d) == significant(values[j], d) for j in (i - 1, i + 1) if 0 <= j < len(values)):
        d += 1
    return d


@pytest.mark.parametrize("values", [
    list(np.geomspace(0.1, 100, 1000)),  # --sweep bandwidth=0.1:100:1000: 3 digits wrote "0.101" twice
    list(np.geomspace(0.5, 50, 8)),
    [1.0, 2.0, 3.0, 3.0001, 10.0],
])
def test_distinct_labels_take_the_fewest_digits_that_tell_each_point_from_its_neighbours(values):
    """A report's row labels and a note's swept points (numbers.distinct): a 1,000-point sweep labelled
    0.1007 and 0.1014 both "0.101". Each label is its value to the fewest digits (3 at least) at which
    it differs from both neighbours, so neighbours never read the same."""
    from lionsim.numbers import distinct

    labels = distinct(values)
    assert all(a != b for a, b in zip(labels, labels[1:]))
    for i, label in enumerate(labels):
        assert _figure(label) == significant(values[i], fewest_digits(values, i)), (i, values[i], label)
