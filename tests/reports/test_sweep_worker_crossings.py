"""A bench sweep's worker crossovers are whole counts, as `estimate --sweep workers` says them
(lionsim.estimate.sweep.worker_crossover: the first count on the winning side): the plots labelled
"2.39 workers", an interpolation between measured counts 2 and 4 that no run can have."""

from __future__ import annotations

import numpy as np

from lionsim.reports.plots.sweep import worker_crossing_text, worker_crossings


def test_a_crossover_between_two_measured_counts_apart_is_the_span_between_them():
    spans = worker_crossings(np.array([2.0, 4.0]), np.array([0.99, 1.04]))
    assert spans == [(2, 4)] and worker_crossing_text(spans[0]) == "between 2 and 4 workers"


def test_neighbouring_counts_give_the_winning_sides_count_as_estimate_does():
    # wins above (slower at 2, faster at 3): the first winning count, 3; wins below: the last, 2
    assert worker_crossings(np.array([2.0, 3.0, 4.0]), np.array([0.9, 1.1, 1.2])) == [(3, 3)]
    assert worker_crossings(np.array([2.0, 3.0]), np.array([1.1, 0.9])) == [(2, 2)]
    assert worker_crossing_text((3, 3)) == "3 workers"


def test_no_crossing_no_crossover_and_several_each_whole():
    assert worker_crossings(np.array([2.0, 4.0, 8.0]), np.array([1.1, 1.2, 1.3])) == []
    spans = worker_crossings(np.array([2.0, 4.0, 8.0, 9.0]), np.array([0.8, 1.2, 1.1, 0.9]))
    assert spans == [(2, 4), (8, 8)]
    assert all(isinstance(v, int) for span in spans for v in span)
