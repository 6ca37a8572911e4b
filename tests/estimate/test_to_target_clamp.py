"""`estimate --from-run`: a fit extrapolated to zero or negative steps is held at the nearest
measured worker count (marked), and the command says --steps / --tokens set the baseline's
steps at scale."""

from __future__ import annotations

import math

import numpy as np
import pytest
from typer.testing import CliRunner

from lionsim.cli import app
from tests.estimate.test_from_run import REACHED, RUNS, bench_dir, rows, sweep_dir

FALLING = {(4, 0): {RUNS[0]: 100, RUNS[1]: 60}, (8, 0): {RUNS[0]: 80, RUNS[1]: 50},
           (16, 0): {RUNS[0]: 60, RUNS[1]: 40}}
"""The baseline's steps fall by 20 a doubling: its fit is 100 at 4 workers, 0 at 128, below past it."""


def test_a_baseline_fit_below_zero_is_held_at_the_nearest_measured_count(tmp_path):
    got = rows(sweep_dir(tmp_path, FALLING), RUNS[:2], workers=256)
    ns = np.log([4, 8, 16])
    slope, intercept = np.polyfit(ns, [0.6, 50 / 80, 40 / 60], 1)
    rho = intercept + slope * math.log(256)
    dlion, adamw = got[RUNS[1]], got[RUNS[0]]
    assert adamw.steps_to_target == 60  # the baseline's fit at 16 workers: its own measurement
    assert dlion.steps_to_target == math.ceil(60 * rho)
    assert dlion.to_target_ratio == pytest.approx(rho, rel=1e-12)
    assert ("clamped (the baseline's steps fitted against log N fall to zero by 256 workers): held at 16 workers, "
            "the nearest measured") in dlion.to_target_note
    assert dlion.to_target_beyond
    given = rows(tmp_path / "sweep", RUNS[:2], workers=256, steps=1000)[RUNS[1]]  # --steps: nothing to clamp
    assert given.steps_to_target == math.ceil(1000 * rho) and "clamped" not in given.to_target_note


def test_the_command_hints_that_steps_or_tokens_set_the_baselines_steps(tmp_path):
    root = sweep_dir(tmp_path, FALLING)
    args = ["estimate", "--params", "2e8", "--tokens-per-worker", "1024", "--workers", "256", "--network",
            "h100x8-100gbe", "-s", "adamw", "-s", "dlion-mavo", "--from-run", str(root)]
    done = CliRunner().invoke(app, args, env={"COLUMNS": "80"})
    assert done.exit_code == 0, done.output
    hints = [line for line in done.output.splitlines() if line.startswith("hint:")]
    assert len(hints) == 1 and "--steps or --tokens sets the baseline's steps at scale" in hints[0]
    done = CliRunner().invoke(app, [*args, "--steps", "1000"], env={"COLUMNS": "80"})
    assert done.exit_code == 0 and "hint:" not in done.output


def test_without_steps_or_tokens_the_command_hints_that_the_runs_own_steps_were_priced(tmp_path):
    """Unclamped, the baseline's steps at scale are still the trained run's own (80 here): one hint,
    in the clamped hint's words, names them and says --steps or --tokens prices the run planned."""
    args = ["estimate", "--params", "1e9", "--tokens-per-worker", "1024", "--workers", "32", "-s", "adamw",
            "-s", "dlion-mavo", "--from-run", str(bench_dir(tmp_path))]
    done = CliRunner().invoke(app, args, env={"COLUMNS": "80"})
    assert done.exit_code == 0, done.output
    assert rows(tmp_path / "run", RUNS[:2], params=1_000_000_000)[RUNS[0]].steps_to_target == REACHED[RUNS[0]]
    hints = [line for line in done.output.splitlines() if line.startswith("hint:")]
    assert len(hints) == 1 and f"the trained run's own ({REACHED[RUNS[0]]} steps" in hints[0]
    assert "--steps or --tokens sets the baseline's steps at scale instead, for the run you plan" in hints[0]
    for given in (["--steps", "1000"], ["--tokens", "1e9"]):
        done = CliRunner().invoke(app, [*args, *given], env={"COLUMNS": "80"})
        assert done.exit_code == 0 and "hint:" not in done.output
