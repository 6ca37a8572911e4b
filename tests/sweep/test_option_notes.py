"""`lionsim sweep` says what its cells' benches noted of their options, once a run however many
cells ran it: a PowerSGD rank given to runs of 4 steps never acted (its first compressed step is 11,
past the default 10 warm-up steps: lionsim.strategies.core.unacted), as bench says it."""

from __future__ import annotations

import json

import pytest

from tests.helpers.cli import run_cli

NEVER = ("powersgd: --powersgd-rank 1 never acted: no compressed step ran: the run's {n} steps end before its "
         "first, step 11")
SWEEP = ["sweep", "--workload", "mlp", "--model-size", "tiny", "--workers", "2", "-b", "4", "-s", "adamw",
         "-s", "powersgd", "--powersgd-rank", "1", "--network", "1gbe", "--seed", "0,1"]


@pytest.mark.parametrize("steps", [4, 12])
def test_a_sweep_says_a_cells_option_that_never_acted_once(tmp_path, capsys, steps):
    out = tmp_path / "sweep"
    code, text, err = run_cli([*SWEEP, "--steps", str(steps), "--out", str(out)], capsys)
    assert code == 0, err
    said = " ".join(text.split())
    inside = steps <= 10
    assert said.count("never acted") == (1 if inside else 0)  # two cells noted it: said once
    assert (NEVER.format(n=steps) in said) == inside
    cells = [json.loads(p.read_text()) for p in sorted((out / "cells").glob("*powersgd*/run.json"))]
    assert len(cells) == 2 and all(("option_notes" in c) == inside for c in cells)
