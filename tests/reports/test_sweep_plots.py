"""The sweep plots' aggregation over seeds (lionsim.reports.plots.sweep._aggregate)."""


def test_a_time_to_target_some_seed_missed_is_no_point():
    """A sweep plot drew dlion-mavo at 1.41x (one seed's figure, "mean over 2 seeds") where its other
    seed never reached the target and report.md said "not reached"."""
    import math

    import pandas as pd

    from lionsim.reports.plots.sweep import _aggregate

    rows = pd.DataFrame({"bandwidth_GBps": [0.117, 0.117, 1.17, 1.17],
                         "time_to_target_speedup": [1.41, math.nan, 1.02, 1.04]})
    agg = _aggregate(rows, "bandwidth_GBps", "time_to_target_speedup").set_index("bandwidth_GBps")
    assert math.isnan(agg.loc[0.117, "mean"]) and agg.loc[1.17, "mean"] == 1.03
    assert _aggregate(rows.rename(columns={"time_to_target_speedup": "speedup"}), "bandwidth_GBps",
                      "speedup").set_index("bandwidth_GBps").loc[0.117, "mean"] == 1.41  # other columns: as before
