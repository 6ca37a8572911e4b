"""A step axis (the sweep's and a run's loss and eval plots: style.labelled_linear_axis) is labelled
at evenly spaced round values: 80 steps read `0 15 30 45 60 80`, a jump of 20 after steps of 15."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from lionsim.reports.plots.style import labelled_linear_axis

ROUND = {1.0, 2.0, 2.5, 5.0}
"""A spacing's mantissa: 1, 2, 2.5 or 5 x 10^k."""


@pytest.fixture(scope="module")
def axis():
    return Figure().subplots().xaxis


def test_every_end_gets_evenly_spaced_round_labels_from_zero(axis):
    for high in range(1, 1001):
        ticks = np.array(labelled_linear_axis(axis, float(high)))
        steps = np.diff(ticks)
        assert ticks[0] == 0 and ticks[-1] <= high and len(ticks) >= 2, (high, ticks)
        assert np.allclose(steps, steps[0]), (high, ticks)  # uniform: no jump to the end
        spacing = float(steps[0])
        mantissa = spacing / 10 ** np.floor(np.log10(spacing))
        assert round(mantissa, 9) in ROUND and spacing.is_integer(), (high, ticks)  # whole steps
        assert axis.axes.get_xlim() == (0, high)


@pytest.mark.parametrize("high, expected", [(80, [0, 20, 40, 60, 80]), (100, [0, 20, 40, 60, 80, 100]),
                                            (10, [0, 2, 4, 6, 8, 10]), (150, [0, 25, 50, 75, 100, 125, 150])])
def test_a_round_end_is_labelled_itself(axis, high, expected):
    assert labelled_linear_axis(axis, float(high)) == expected
