"""A `lionsim sweep`'s seed band holds its line: over bandwidth the mean is drawn as between.curve
draws it (each run's time linear in 1/bandwidth), and the band's edges were straight between the
swept points, so on a curved stretch the line ran outside its own band."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from lionsim.reports.plots import sweep  # noqa: E402
from lionsim.reports.plots.style import run_styles  # noqa: E402

NETWORKS = {"1gbe": 0.11875, "10gbe": 1.1875, "100gbe": 11.875}  # GB/s after efficiency: long curved segments
LABELS = ["adamw@allreduce", "lion@allreduce"]


def _summary() -> pd.DataFrame:
    """Three seeds a point, a thin spread; the run's speedup 1.0 -> 2.0 at a step time of 1 s, so its
    line (linear in 1/b) reads 1.909 at 1.19 GB/s, where a straight segment on the log axis reads 1.5:
    10gbe's point sits there, so the line through the three is that one line (two bandwidths alone
    are drawn as points: lionsim.reports.plots.sweep.too_few)."""
    rows = []
    b = list(NETWORKS.values())
    middle = 1.0 + (1 / b[0] - 1 / b[1]) / (1 / b[0] - 1 / b[2])
    for (network, bw), base in zip(NETWORKS.items(), (1.0, middle, 2.0)):
        for seed, spread in enumerate((-0.01, 0.0, 0.01)):
            for strategy, value in (("adamw", 1.0), ("lion", base * (1 + spread))):
                rows.append({"cell": f"{network}-{seed}", "workload": "mlp", "seed": seed, "workers": 4,
                             "network": network, "bandwidth_GBps": bw, "strategy": strategy, "transport": "allreduce",
                             "speedup": value, "step_s": 1.0, "time_to_target_speedup": value,
                             "final_loss": 1.0, "final_eval_acc": 0.5, "baseline": LABELS[0]})
    return pd.DataFrame(rows)


def _extent(vertices: np.ndarray, at: float) -> tuple[float, float]:
    """The band's lowest and highest y at x = `at`: where its outline's edges (straight on the log x
    axis the figure draws them on) cross the vertical there."""
    ys = []
    for (x0, y0), (x1, y1) in zip(vertices, np.roll(vertices, -1, axis=0)):
        if x0 == x1 == at:
            ys += [y0, y1]
        elif min(x0, x1) <= at <= max(x0, x1) and x0 != x1:
            ys.append(float(np.interp(np.log(at), *(([np.log(x0), np.log(x1)], [y0, y1]) if x0 < x1
                                                    else ([np.log(x1), np.log(x0)], [y1, y0])))))
    return min(ys), max(ys)


def test_the_seed_band_holds_its_line_at_every_point_drawn(monkeypatch):
    figures = []
    monkeypatch.setattr(sweep, "save", lambda fig, path: figures.append(fig) or [])
    summary = _summary()
    labelled = summary.assign(label=[f"{s}@{t}" for s, t in zip(summary["strategy"], summary["transport"])])
    styles = run_styles(LABELS, LABELS[0])
    sweep._speedup_plot(labelled, LABELS, styles, LABELS[0], "bandwidth_GBps", "workers", "speedup", "t",
                        Path("unused.png"))
    ax = figures[0].axes[0]
    colour = styles[LABELS[1]]["color"]
    line = next(ln for ln in ax.lines if ln.get_color() == colour and len(ln.get_xdata()) > 2)
    x, y = np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata(), dtype=float)
    # the line is the model's form: the speedup linear in 1/b at equal times (the reference, closed form)
    w = (1 / x - 1 / x[0]) / (1 / x[-1] - 1 / x[0])
    assert np.allclose(y, 1.0 + w, atol=1e-12)
    (band,) = [c for c in ax.collections if len(c.get_paths()) and c.get_paths()[0].vertices.shape[0] > 3]
    vertices = band.get_paths()[0].vertices
    for at, reads in zip(x, y):
        low, high = _extent(vertices, at)
        assert low - 1e-9 <= reads <= high + 1e-9, (at, low, reads, high)
