"""A workers crossover reads alike in the terminal's table, report.md and the time-to-target list:
the two counts either side of the crossing and the first count that wins (crossover.csv's
crossover and loses_at); an older crossover.csv without loses_at gives the winning count alone."""

from __future__ import annotations

import math

import pandas as pd

from lionsim.reports.estimate_report import _crossovers
from lionsim.reports.tables import crossing_words
from lionsim.reports.to_target import crossover_words


def _rows(**columns) -> pd.DataFrame:
    base = {"strategy": ["dlion-mavo"], "transport": ["a2a-1bit"], "speedup_first": [0.85], "speedup_last": [2.6]}
    return pd.DataFrame({**base, **columns})


def test_a_workers_crossover_names_both_counts_in_the_report_and_the_list():
    rows = _rows(crossover=[16.0], wins=["above"], loses_at=[8.0])
    assert crossing_words(next(rows.itertuples(index=False))) == "8-16 workers"
    assert "| dlion-mavo@a2a-1bit | 8-16 workers | from 16 |" in _crossovers(rows, "workers")
    assert crossover_words(rows, "workers") == "- dlion-mavo@a2a-1bit: sooner from 16 workers (8 not: the crossing lies between)"
    down = _rows(crossover=[120.0], wins=["below"], loses_at=[128.0])
    assert "| dlion-mavo@a2a-1bit | 120-128 workers | up to 120 |" in _crossovers(down, "workers")


def test_an_older_crossover_csv_and_a_bandwidth_crossing_keep_one_figure():
    old = _rows(crossover=[16.0], wins=["above"])
    assert crossing_words(next(old.itertuples(index=False))) == "16 workers"
    assert crossover_words(old, "workers") == "- dlion-mavo@a2a-1bit: sooner from 16 workers"
    bandwidth = _rows(crossover=[2.5], wins=["below"], loses_at=[math.nan])
    assert "| dlion-mavo@a2a-1bit | 2.5 | below |" in _crossovers(bandwidth, "bandwidth")
