"""report.md of an estimate sweep prints its swept values as the tables print numbers: a bandwidth to 3
significant digits (lionsim.numbers.sig), a worker count whole."""

from __future__ import annotations

import numpy as np
import pandas as pd

from lionsim.reports.estimate_report import _pivot


def _frame(values) -> pd.DataFrame:
    return pd.DataFrame({"strategy": "adamw", "transport": "fp32-allreduce", "sweep_value": values,
                         "step_s": [0.5] * len(values)})


def test_swept_bandwidths_print_to_three_significant_digits_and_worker_counts_whole():
    """A log-spaced bandwidth sweep printed "0.562341" and "3.16228"."""
    bandwidths = np.logspace(-1, 1, 5)  # 0.1, 0.316228, 1, 3.16228, 10
    rows = [line.split(" | ")[0].strip("| ") for line in _pivot(_frame(bandwidths), "step_s", str, "bandwidth")
            .splitlines()[2:]]
    assert rows == ["0.1", "0.316", "1", "3.16", "10"]
    rows = [line.split(" | ")[0].strip("| ") for line in _pivot(_frame([8.0, 1024.0]), "step_s", str, "workers")
            .splitlines()[2:]]
    assert rows == ["8", "1,024"]
