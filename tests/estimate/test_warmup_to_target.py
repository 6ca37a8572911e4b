"""A time to target that is a warm-up's, not the method's, says so: 1-bit Adam (warm-up of 15 fp32
steps by default) reaching the target by step 12 in the trained run measured its warm-up's
convergence; priced at 10 steps, every step at scale is a warm-up step. Past both, nothing is said."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.helpers.cli import run_cli

FP32, ONE = "adamw@fp32-allreduce", "onebit-adam@compressed-allreduce"
FREEZE = 15
"""onebit-adam's default --freeze-steps (its warm-up's last step)."""


def proxy(tmp_path: Path, one_steps: int) -> Path:
    out = tmp_path / f"proxy-{one_steps}"
    out.mkdir()
    rows = [{"cell": f"c{n}-{label}", "strategy": label.split("@")[0], "transport": label.split("@")[1],
             "workers": n, "network": "1gbe", "workload": "mlp", "seed": 0, "steps_to_target": steps,
             "target_loss": 0.5, "target_rule": "adamw's loss at step 90 of 100", "baseline": FP32, "params": 1234}
            for n in (4, 8) for label, steps in ((FP32, 40), (ONE, one_steps))]
    pd.DataFrame(rows).to_csv(out / "sweep_summary.csv", index=False)
    (out / "sweep.json").write_text(json.dumps({"kind": "sweep", "cells": len(rows)}))
    return out


def note(tmp_path, capsys, one_steps: int, *extra: str) -> str:
    out = tmp_path / f"est-{one_steps}-{len(extra)}"
    code, _, err = run_cli(["estimate", "--params", "1e9", "--tokens-per-worker", "8192", "--workers", "8",
                            "--network", "h100x8-100gbe", "--from-run", str(proxy(tmp_path, one_steps)), *extra,
                            "--out", str(out)], capsys)
    assert code == 0, err
    row = pd.read_csv(out / "estimate.csv").set_index("strategy").loc["onebit-adam"]
    return row["to_target_note"] if isinstance(row["to_target_note"], str) else ""


@pytest.mark.parametrize("one_steps, extra, says", [
    (12, (), "reached the target inside its warm-up in the trained run (by step 12)"),  # 12 <= 15
    (20, ("--steps", "20"), "all 10 of its steps to target are its warm-up's"),  # 20 / 40 x 20 = 10 <= 15
    (20, (), ""),  # trained to step 20, priced 20 steps: past the warm-up both times
    (FREEZE + 1, ("--steps", "40"), ""),  # 16 / 40 x 40 = 16 steps at scale: one past the warm-up
])
def test_a_time_to_target_made_in_the_warm_up_says_so(tmp_path, capsys, one_steps, extra, says):
    said = note(tmp_path, capsys, one_steps, *extra)
    assert (says in said) if says else ("warm-up" not in said), said
