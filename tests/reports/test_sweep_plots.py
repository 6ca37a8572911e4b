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


def test_a_sweep_of_one_run_draws_no_speedup_plot():
    """A one-strategy sweep over two networks drew speedup_vs_bandwidth: the baseline alone at 1.0."""
    import pandas as pd

    from lionsim.reports.plots.sweep_axes import skipped_plots

    one = pd.DataFrame({"workload": "mlp", "run": "lion@fp32-allreduce", "network": ["1gbe", "10gbe"],
                        "workers": [4, 4]})
    assert [name for name, _ in skipped_plots(one)] == ["speedup_vs_bandwidth", "time_to_target_speedup_vs_bandwidth",
                                                        "speedup_vs_workers", "time_to_target_speedup_vs_workers"]
    two = pd.concat([one, one.assign(run="dlion-mavo@a2a-1bit")])
    assert [name for name, _ in skipped_plots(two)] == ["speedup_vs_workers", "time_to_target_speedup_vs_workers"]
