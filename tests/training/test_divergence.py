"""A run whose loss blows up is diverged though every value is finite (lionsim.divergence): the
step is the first whose loss passes 100x the first step's, read back from the run's own losses."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from lionsim.cli.app import main
from lionsim.divergence import BLOWUP, blew_up

# 1-bit Adam frozen after one step on the tiny ViT: losses 2.29, 2.35, 12.9, 9172 without the rule
BLOWS_UP = ["bench", "-n", "2", "--steps", "6", "--model-size", "tiny", "-b", "4", "-s", "onebit-adam",
            "--freeze-steps", "1"]


def test_a_loss_that_blows_up_marks_the_run_diverged(tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        main([*BLOWS_UP, "-o", str(tmp_path)])
    assert done.value.code == 1  # a diverged run is a result: exit 1, its files written
    steps = pd.read_csv(tmp_path / "steps.csv")
    summary = pd.read_csv(tmp_path / "summary.csv")
    losses = steps["loss"].tolist()
    # the reference: the first step whose loss passes 100x step 1's, by a plain scan
    expected = next(i + 1 for i, loss in enumerate(losses) if loss > 100 * losses[0])
    assert expected == len(losses) < 6  # the run stopped at that step, before its last
    assert summary["diverged_at_step"].iloc[0] == expected
    assert math.isnan(summary["final_loss"].iloc[0])  # a blown-up loss is no result, as a non-finite one was not
    assert all(math.isfinite(loss) for loss in losses)  # every loss finite: the blow-up alone counts
    assert "diverged: onebit-adam" in capsys.readouterr().err


def test_the_rule_needs_a_positive_first_loss():
    assert blew_up(BLOWUP * 2.0 + 1e-9, 2.0) and not blew_up(BLOWUP * 2.0, 2.0)
    assert not blew_up(1e30, 0.0) and not blew_up(1.0, -0.5)  # no scale to compare with: never
