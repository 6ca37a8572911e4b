"""lionsim.reports.between: the crossing's closed form, and which segment crosses."""

import numpy as np
import pytest

from lionsim.numbers import TIE
from lionsim.reports.between import crossing, crossing_points, curve


def test_a_crossing_of_the_tie_bands_edge_with_unequal_times_is_the_closed_form():
    """Baseline time s x t linear in w (1/b from 1 at b=1 to 1/4 at b=4): 1.6 -> 1.5; the run's 2 -> 1.
    1.6 - 0.1 w = 1.005 (2 - w) at w = 0.41 / 0.905 = 82/181, so 1/b = 1 - 0.75 w = 239/362."""
    got = crossing(1.0, 4.0, 0.8, 1.5, 2.0, 1.0, level=1 + TIE)
    assert got == pytest.approx(362 / 239, rel=1e-12)
    # the drawn line reads 1 + TIE there
    xs, ys = curve([1.0, 4.0], [0.8, 1.5], [2.0, 1.0])
    assert np.interp(np.log(got), np.log(xs), ys) == pytest.approx(1 + TIE, abs=1e-4)


@pytest.mark.parametrize("speedups, at", [([0.5, 1.0, 2.0], 2.0), ([2.0, 1.0, 0.5], 2.0),
                                           ([0.5, 0.999, 1.003, 0.999, 2.0], None)])
def test_the_crossing_lies_on_the_drawn_line_nearest_the_winning_point(speedups, at):
    x = [1.0, 2.0, 4.0, 8.0, 16.0][:len(speedups)]
    (got,) = crossing_points(x, speedups)
    if at is not None:
        assert got.at == pytest.approx(at)
    else:  # the last segment, 8 to 16: 0.999 + 1.001 w = 1 at w = 0.001 / 1.001, 1/b = 1/8 - w / 16
        assert got.at == pytest.approx(1 / (1 / 8 - 0.001 / 1.001 / 16))
    xs, ys = curve(x, speedups)
    assert np.interp(np.log(got.at), np.log(xs), ys) == pytest.approx(1.0, abs=1e-4)


def test_a_tie_is_not_a_win_and_a_gap_breaks_the_line():
    assert crossing_points([1.0, 2.0], [0.5, 1.003]) == []  # loses, then ties: no crossover
    (edge,) = crossing_points([1.0, 2.0], [0.998, 1.2])  # ties, then wins: where it leaves the band
    assert edge.level == 1 + TIE and edge.wins == "above"
    (gap,) = crossing_points([1.0, 2.0, 4.0], [0.5, np.nan, 2.0])
    assert np.isnan(gap.at) and gap.wins == "above"
