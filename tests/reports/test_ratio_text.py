"""A speedup ("1.31x") and comm's GB/s ("0.669") are written by one rule (numbers.ratio_text):
`places` fixed decimals from 0.01 up and at 0, three significant digits below (negatives
included). Each value against the strings worked out by hand, either side of every threshold."""

from __future__ import annotations

import math

import pytest

from lionsim.cli.comm_view import rate
from lionsim.numbers import ratio_text, speedup_text

EXPECTED = [  # x, ratio_text(x, 2), ratio_text(x, 3), speedup_text(x)
    (0.0, "0.00", "0.000", "0.00x"),
    (1e-9, "1e-09", "1e-09", "1e-09x"),  # sig's own 'g' form below 1e-4
    (0.000264, "0.000264", "0.000264", "0.000264x"),
    (0.00999, "0.00999", "0.00999", "0.00999x"),
    (0.009999, "0.0100", "0.0100", "0.0100x"),  # below 0.01: three significant digits, rounded up
    (0.01, "0.01", "0.010", "0.01x"),
    (0.0149, "0.01", "0.015", "0.01x"),
    (0.6688, "0.67", "0.669", "0.67x"),
    (0.995, "0.99", "0.995", "0.99x"),  # the double nearest 0.995 is just below it
    (0.9951, "1.00", "0.995", "1.00x"),
    (1.0, "1.00", "1.000", "1.00x"),
    (1.305, "1.30", "1.305", "1.30x"),  # 1.30499999...: rounds down at 2 places
    (6.61, "6.61", "6.610", "6.61x"),
    (1234.5, "1234.50", "1234.500", "1234.50x"),  # fixed decimals: no grouping, no exponent
    (-0.001, "-0.00100", "-0.00100", "-0.00100x"),  # below 0.01: three significant digits
    (-0.5, "-0.500", "-0.500", "-0.500x"),
    (math.nan, "nan", "nan", "-"),  # no speedup (no time to target)
    (math.inf, "inf", "inf", "-"),
    (-math.inf, "-inf", "-inf", "-"),
]


@pytest.mark.parametrize("x, two, three, speedup", EXPECTED, ids=[repr(row[0]) for row in EXPECTED])
def test_ratio_text_and_speedup_text_print_the_strings_worked_out_by_hand(x, two, three, speedup):
    assert ratio_text(x, 2) == two
    assert ratio_text(x, 3) == three
    assert speedup_text(x) == speedup
    assert rate(x) == three  # comm's GB/s: ratio_text at 3 places
