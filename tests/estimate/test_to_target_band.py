"""The band of `estimate --from-run`: where there is none the note says why ("no band: ..."), and the
speedup has a band where the times have one, from the same baseline's steps at both ends (the fits'
numbers by hand, lionsim.estimate.to_target)."""

from __future__ import annotations

import math

import pytest

from lionsim.estimate import EstimateConfig, estimate
from tests.estimate.test_from_run import BASE, CELLS, RUNS, bench_dir, fitted_by_hand, rows, sweep_dir


def test_one_bench_run_says_it_has_no_band_and_why(tmp_path):
    got = rows(bench_dir(tmp_path), RUNS[:2], workers=64)
    for row in got.values():
        assert math.isnan(row.time_to_target_lo_s) and math.isnan(row.time_to_target_hi_s)
        assert row.to_target_note == ("measured at 8 workers only; no band: one bench run, no spread to measure "
                                      "(a sweep over seeds gives one)")


def test_one_cell_at_one_count_says_it_has_no_band_and_why(tmp_path):
    # an lr sweep at one worker count keeps each run's best lr: one cell each, no spread
    root = sweep_dir(tmp_path, {(8, 0): {RUNS[0]: 80, RUNS[1]: 60}})
    dlion = rows(root, RUNS[:2], workers=32)[RUNS[1]]
    assert math.isnan(dlion.time_to_target_hi_s)
    assert "no band: one cell reached the target, at 8 workers: no spread to measure" in dlion.to_target_note


def test_a_band_measured_says_no_no_band(tmp_path):
    cells = {(8, 0): {RUNS[0]: 80, RUNS[1]: 60}, (8, 1): {RUNS[0]: 80, RUNS[1]: 70}}
    dlion = rows(sweep_dir(tmp_path, cells), RUNS[:2], steps=100)[RUNS[1]]
    assert math.isfinite(dlion.time_to_target_hi_s) and "no band" not in dlion.to_target_note


def test_the_speedups_band_pairs_the_ends_that_share_the_baselines_steps(tmp_path):
    """By hand from the fits: S +- sigma_S and rho +- sigma_rho at N; both runs step steadily, so a
    run's time is its steps x its step. The band's ends are the baseline's time over the run's at both
    low ends and at both high ends; the crossed pairs would be wider."""
    _, adamw, dlion, _, _, rho, sigma, s, sb = fitted_by_hand(tmp_path)
    base_lo, base_hi = math.ceil(s - sb) * adamw.step_s, math.ceil(s + sb) * adamw.step_s
    run_lo, run_hi = (math.ceil((s - sb) * (rho - sigma)) * dlion.step_s,
                      math.ceil((s + sb) * (rho + sigma)) * dlion.step_s)
    ends = sorted([base_lo / run_lo, base_hi / run_hi])
    assert dlion.to_target_speedup_lo == pytest.approx(ends[0], rel=1e-9)
    assert dlion.to_target_speedup_hi == pytest.approx(ends[1], rel=1e-9)
    assert dlion.to_target_speedup_lo <= dlion.to_target_speedup <= dlion.to_target_speedup_hi
    crossed = sorted([base_lo / run_hi, base_hi / run_lo])  # S's spread counted twice: wider
    assert crossed[0] < ends[0] and crossed[1] > ends[1]
    # the baseline against itself: the same time at each end, no band
    assert adamw.to_target_speedup_lo == adamw.to_target_speedup_hi == pytest.approx(1.0)


def test_no_band_on_either_run_gives_the_speedup_none(tmp_path):
    got = rows(bench_dir(tmp_path), RUNS[:2])
    assert math.isnan(got[RUNS[1]].to_target_speedup_lo) and math.isnan(got[RUNS[1]].to_target_speedup_hi)


def test_the_speedup_band_columns_follow_the_old_ones_in_the_csv(tmp_path):
    """SPEC's estimate.csv contract: the --from-run columns keep their names and places; the speedup's
    band is added after them."""
    cfg = EstimateConfig(**BASE, strategies=RUNS[:2], from_run=str(sweep_dir(tmp_path, CELLS)))
    columns = list(estimate(cfg).columns)
    assert columns[-2:] == ["to_target_speedup_lo", "to_target_speedup_hi"]
    assert columns.index("to_target_speedup") < columns.index("time_to_target_lo_s") < columns.index(
        "to_target_common_loss") < columns.index("to_target_speedup_lo")


def test_the_command_prints_the_speedups_band_and_its_rule(tmp_path):
    from lionsim.cli.to_target_view import to_target_table
    from tests.helpers.cli import table_text

    cfg = EstimateConfig(**(BASE | {"workers": 256, "network": "h100x8-100gbe"}), strategies=RUNS[:2],
                         from_run=str(sweep_dir(tmp_path, CELLS)))
    frame = estimate(cfg)
    dlion = frame.set_index("strategy").loc["dlion-mavo"]
    text = table_text(to_target_table(frame), 80)
    assert "speedup band" in text.splitlines()[next(i for i, t in enumerate(text.splitlines()) if " run " in t)]
    assert f"{dlion.to_target_speedup_lo:.2f}-{dlion.to_target_speedup_hi:.2f}x" in text
    assert "speedup band: the baseline's time over this run's at both bands' low ends and at both high ends" in \
        " ".join(text.split())
    assert max(len(line) for line in text.splitlines()) <= 80


def test_a_terminal_too_narrow_for_the_speedups_band_names_its_columns_instead(tmp_path, monkeypatch):
    from lionsim.cli.to_target_view import to_target_table
    from tests.helpers.cli import table_text

    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    monkeypatch.setenv("COLUMNS", "60")
    cfg = EstimateConfig(**(BASE | {"workers": 256, "network": "h100x8-100gbe"}), strategies=RUNS[:2],
                         from_run=str(sweep_dir(tmp_path, CELLS)))
    text = table_text(to_target_table(estimate(cfg)), 60)
    assert max(len(line) for line in text.splitlines()) <= 60 and "…" not in text
    said = " ".join(text.split())
    dlion = estimate(cfg).set_index("strategy").loc["dlion-mavo"]
    assert (f"speedup band (too wide for a column here): dlion-mavo@int8-allreduce {dlion.to_target_speedup_lo:.2f}-"
            f"{dlion.to_target_speedup_hi:.2f}x; each the baseline's time over the run's at both") in said
    assert " run steps time band speedup " in f" {said} " and "speedup speedup band" not in said


def test_the_speedup_band_holds_the_speedup_itself():
    """A new user read dlion-mavo 3.38x with the band 3.44-3.45x: the paired ends (both lows, both highs)
    can both lie on one side of the central ratio."""
    import math

    from lionsim.estimate.to_target import speedup_band

    base, base_lo, base_hi, run, lo, hi = 1259.9, 1236.1, 1307.5, 372.2, 359.2, 378.8
    band = speedup_band(base_lo, base_hi, lo, hi, base / run)
    assert band == (base / run, base_hi / hi) and band[0] <= base / run <= band[1]
    assert speedup_band(base_lo, base_hi, lo, hi) == (base_lo / lo, base_hi / hi)  # without a point: the pairs
    assert all(math.isnan(x) for x in speedup_band(base_lo, base_hi, math.nan, hi, 3.0))
