"""The hint `estimate --from-run` prints where a priced run missed DIR's target names the command that
made DIR: bench for a run directory, sweep for a sweep root."""

from __future__ import annotations

import pandas as pd
import pytest

from lionsim.estimate.to_target import unreached_hint


@pytest.mark.parametrize("kind, command", [("bench run", "bench"), ("sweep", "sweep")])
def test_the_hint_names_the_command_that_made_the_directory(kind, command):
    """A sweep root's hint said "rerun it with bench --target-loss 2.179"."""
    frame = pd.DataFrame([{"strategy": s, "transport": "fp32-allreduce", "to_target_note": note,
                           "to_target_common_loss": 2.179, "to_target_from": "runs/x", "to_target_kind": kind}
                          for s, note in (("adamw", "reached"), ("signsgd", "did not reach the target"))])
    hint = unreached_hint(frame)
    assert f"train them longer ({command} --steps)" in hint
    assert "2.179" not in hint and "--target-loss L here" in hint  # the worst run's loss is no target (module doc)
    other = {"bench": "sweep", "sweep": "bench"}[command]
    assert f"{other} --" not in hint
