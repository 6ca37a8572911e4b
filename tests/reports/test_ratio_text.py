"""A speedup ("1.31x") and comm's GB/s ("0.669") are written by one rule (numbers.ratio_text):
fixed decimals from 0.01 up, three significant digits below. Each against the rule written out
plainly, as each wrote it before, over values either side of every threshold."""

from __future__ import annotations

import math

import pytest

from lionsim.cli.comm_view import rate
from lionsim.numbers import sig, speedup_text

VALUES = [0.0, -0.0, 1e-9, 0.000264, 0.000392, 0.00999, 0.009999, 0.01, 0.0100001, 0.0149, 0.9951, 0.995, 1.0,
          1.305, 6.61, 99.999, 1234.5678, 1e12, -0.5, -0.001, math.nan, math.inf, -math.inf]


@pytest.mark.parametrize("x", VALUES, ids=repr)
def test_a_speedup_and_a_rate_share_the_rule(x):
    assert speedup_text(x) == ("-" if not math.isfinite(x) else f"{x:.2f}x" if x >= 0.01 or x == 0 else f"{sig(x)}x")
    assert rate(x) == (f"{x:.3f}" if x >= 0.01 or x == 0 else sig(x))


def test_below_a_hundredth_both_keep_three_digits():
    assert (speedup_text(0.000264), rate(0.000392)) == ("0.000264x", "0.000392")
    assert (speedup_text(1.305), rate(0.6688)) == ("1.30x", "0.669")
