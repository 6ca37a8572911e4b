"""A run's step p50 and p99 are steps that happened (nearest rank), the same in summary.csv and
step_time_distribution.png, and on a measured backend they are of each step's own measured comm,
not of step_s's booked medians (every step alike)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lionsim.reports.plots import steptimes
from lionsim.reports.plots.style import run_styles
from lionsim.reports.summary import SummaryRule, nearest_rank, split_runs, summarize
from tests.helpers.frames import frame, rows


def brute_force(values, q: float) -> float:
    """The smallest value with at least q of the values at or below it, by counting."""
    return min(v for v in values if sum(x <= v for x in values) >= q * len(values) - 1e-9)


@pytest.mark.parametrize("q", [0.01, 0.1, 0.5, 0.9, 0.99, 1.0])
def test_nearest_rank_is_a_brute_force_count(q):
    rng = np.random.default_rng(7)
    for n in (1, 2, 3, 4, 10, 37, 100, 101):
        values = rng.choice([0.3, 1.2, 1.35, 2.0, 5.0], size=n) if n % 2 else rng.random(n)
        assert nearest_rank(values, q) == brute_force(list(values), q)
        assert nearest_rank(values, q) in values


@pytest.fixture
def figures(monkeypatch):
    drawn = []
    monkeypatch.setattr(steptimes, "save", lambda fig, path: drawn.append(fig) or [])
    return drawn


def _curve(fig, colour) -> list[float]:
    """The x of the CDF's step line of one run (ms)."""
    cdf = fig.axes[0]
    return [list(line.get_xdata()) for line in cdf.lines if line.get_color() == colour and len(line.get_xdata()) > 1][0]


def test_two_kinds_of_step_have_a_p50_of_one_of_them(figures):
    """A DiLoCo-like run: half its steps 0.32 ms, half 1.35 ms; the p50 is 0.32 ms, no step between."""
    steps = frame(rows("diloco", 10, step_s=[0.00032, 0.00135] * 5))
    summary = summarize(steps)
    row = summary.iloc[0]
    assert row["step_p50_s"] == brute_force(list(steps["step_s"]), 0.5) == 0.00032
    assert row["step_p99_s"] == 0.00135
    runs = split_runs(steps)
    label = runs[0][0]
    styles = run_styles([label], label)
    steptimes.step_time_plot(runs, styles, label, steps, Path("s.png"), summary=summary)
    p50 = [line.get_xdata()[0] for line in figures[0].axes[0].lines if line.get_marker() == "o"]
    assert p50 == [pytest.approx(0.32)]


def test_a_measured_run_draws_and_reports_each_steps_own_comm(figures):
    """gloo: step_s books comm as the median (every step alike); the p50/p99 and the curve are of
    step_s - comm_exposed_s (comm_s here: no comm_exposed_s column) + comm_measured_s over the steps past
    the warm-up."""
    measured = [0.009, 0.004, 0.003, 0.001, 0.002, 0.0015, 0.005, 0.0012]
    run = rows("adamw", 8, backend="gloo", comm=0.0015, step_s=[0.0075] * 8)
    for r, m in zip(run, measured):
        r["comm_measured_s"] = m
    steps = frame(run)
    warmup = 3
    own = [0.0075 - 0.0015 + m for m in measured[warmup:]]
    summary = summarize(steps, SummaryRule(warmup_steps=warmup))
    row = summary.iloc[0]
    assert row["step_p50_s"] == pytest.approx(brute_force(own, 0.5))
    assert row["step_p99_s"] == pytest.approx(brute_force(own, 0.99))
    runs = split_runs(steps)
    label = runs[0][0]
    styles = run_styles([label], label)
    meta = {"config": {"warmup_steps": warmup}}
    steptimes.step_time_plot(runs, styles, label, steps, Path("s.png"), meta=meta, summary=summary)
    fig = figures[0]
    assert sorted(set(_curve(fig, styles[label]["color"]))) == pytest.approx(sorted(x * 1e3 for x in own))
    title = fig._suptitle.get_text()
    assert "every step alike" not in title and "own comm (comm_measured_s)" in title


def test_a_measured_steps_own_time_swaps_the_comm_term_step_s_adds():
    """step_s adds comm_exposed_s (docs/time-model.md), so a step's own time is step_s - comm_exposed_s +
    comm_measured_s: by hand, 7.5 - 1.5 + (9, 1, 2) ms past 2 warm-up steps, comm_s's 2 ms aside."""
    from lionsim.reports.summary import step_spread

    run = rows("adamw", 5, backend="gloo", comm=0.002, step_s=[0.0075] * 5)
    for r, m in zip(run, [0.004, 0.003, 0.009, 0.001, 0.002]):
        r.update(comm_exposed_s=0.0015, comm_measured_s=m)
    steps = frame(run)
    assert list(step_spread(steps, 2)) == pytest.approx([0.015, 0.007, 0.008])
    row = summarize(steps, SummaryRule(warmup_steps=2)).iloc[0]
    assert (row["step_p50_s"], row["step_p99_s"]) == pytest.approx((0.008, 0.015))


@pytest.mark.parametrize("config, says", [
    ({}, "own comm (comm_measured_s); compute the bench's one figure, encode, decode and update each kind of "
         "step's median"),
    ({"compute_spread": ["lognormal:0.3"]}, "own comm, compute and wait (comm_measured_s); encode, decode and "
                                             "update each kind of step's median"),
    ({"compute": "h100"}, "own comm (comm_measured_s); compute modelled for h100, encode, decode and update "
                          "modelled for h100 per kind of step"),
])
def test_a_measured_runs_subtitle_says_which_parts_are_each_steps_own(figures, config, says):
    """booking.py: on gloo comm, encode, decode and update are each kind of step's median; compute is
    the bench's one figure, or under --compute-spread each step's own with its wait (nothing else
    is "booked as a median" then); on a --compute device the medians are modelled."""
    run = rows("adamw", 6, backend="gloo", step_s=[0.0075] * 6)
    for r, m in zip(run, [0.004, 0.003, 0.009, 0.001, 0.002, 0.005]):
        r["comm_measured_s"] = m
    steps = frame(run)
    runs = split_runs(steps)
    label = runs[0][0]
    steptimes.step_time_plot(runs, run_styles([label], label), label, steps, Path("s.png"),
                             meta={"config": {"warmup_steps": 2, **config}})
    title = " ".join(figures[0]._suptitle.get_text().split())
    assert f"measured: each step with its {says}, the 2 warm-up steps left out" in title
    assert "other parts" not in title


def _gloo(strategy: str, measured: list[float]) -> list[dict]:
    run = rows(strategy, len(measured), backend="gloo", step_s=[0.0075, 0.008, 0.0085, 0.009][:len(measured)])
    for r, m in zip(run, measured):
        r["comm_measured_s"] = m
    return run


NAN = float("nan")
FRAMES = {  # name: (steps, measured by hand: some row off sim with a comm_measured_s)
    "sim": (frame(rows("adamw", 4, step_s=[0.01, 0.011, 0.012, 0.013])), False),
    "gloo": (frame(_gloo("adamw", [0.004, 0.003, 0.002, 0.001])), True),
    "gloo, nothing measured": (frame(_gloo("adamw", [NAN] * 4)), False),
    "sim + gloo": (frame(rows("lion", 4, step_s=[0.01, 0.011, 0.012, 0.013]), _gloo("adamw", [0.004, 0.003, 0.002, 0.001])), True),
    "sim with numbers + gloo without": (frame([{**r, "comm_measured_s": 0.001} for r in rows("lion", 4)],
                                              _gloo("adamw", [NAN] * 4)), False),
}


@pytest.mark.parametrize("name", FRAMES)
def test_one_predicate_says_whether_a_run_is_measured_for_its_spread_its_error_and_its_plot(figures, name):
    """measured_run against the hand-made answer on whole frames, and each of its three users agreeing
    with it run by run: step_spread draws own times (not step_s), the summary has a comm_measured_s,
    the plot's subtitle a "measured:" note."""
    from lionsim.reports.summary import measured_run, step_spread

    steps, expected = FRAMES[name]
    assert measured_run(steps) is expected
    assert measured_run(steps.drop(columns="comm_measured_s")) is False
    summary = summarize(steps, SummaryRule(warmup_steps=0))
    for label, run in split_runs(steps):
        own = measured_run(run)
        assert own is (expected and run["backend"].iloc[0] == "gloo")
        assert (list(step_spread(run, 0)) != list(run["step_s"])) is own
        assert summary.loc[summary["run"] == label, "comm_measured_s"].notna().item() is own
    runs = split_runs(steps)
    labels = [label for label, _ in runs]
    steptimes.step_time_plot(runs, run_styles(labels, labels[0]), labels[0], steps, Path("s.png"),
                             meta={"config": {"warmup_steps": 0}})
    assert ("measured:" in figures[0]._suptitle.get_text()) is expected
