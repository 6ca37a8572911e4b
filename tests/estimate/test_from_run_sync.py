"""`estimate --from-run`: the Lion family priced with the --momentum-sync its run trained with.

A run's steps to target are those of the sync it trained with, so where the user gives none the
estimate prices the recorded one (its step then equals an estimate given that sync by hand), and
where the user gives another, the row keeps its step but has no time to target, with the reason."""

from __future__ import annotations

import io
import math

import pandas as pd
import pytest

from tests.helpers.cli import run_cli

STEPS = 12
BASE = ["estimate", "-m", "gpt2-124m", "-n", "16", "--network", "10gbe", "--tokens", "1e9", "--format", "csv"]


@pytest.fixture(scope="module")
def synced_run(tmp_path_factory):
    from lionsim.bench import BenchConfig, run_bench
    from lionsim.reports import write_run

    result = run_bench(BenchConfig(workload="mlp", model_size="tiny", workers=2, steps=STEPS, batch_size=8,
                                   eval_every=STEPS, strategies=["adamw", "dlion-mavo"], momentum_sync="every:4"))
    out = tmp_path_factory.mktemp("synced") / "run"
    write_run(out, result.steps, result.summary, result.meta)
    return out


def _rows(capsys, args) -> pd.DataFrame:
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    return pd.read_csv(io.StringIO(out)).set_index("strategy")


def test_the_trained_sync_is_priced_where_none_is_given(synced_run, capsys):
    default = _rows(capsys, BASE + ["--from-run", str(synced_run)])
    by_hand = _rows(capsys, BASE + ["--from-run", str(synced_run), "--momentum-sync", "every:4"])
    never = _rows(capsys, BASE + ["--from-run", str(synced_run), "--momentum-sync", "never"])
    assert default.loc["dlion-mavo", "step_s"] == by_hand.loc["dlion-mavo", "step_s"]
    assert default.loc["dlion-mavo", "step_s"] > never.loc["dlion-mavo", "step_s"]  # a sync every 4 steps costs
    assert default.loc["dlion-mavo", "time_to_target_s"] == by_hand.loc["dlion-mavo", "time_to_target_s"]
    assert math.isfinite(default.loc["dlion-mavo", "time_to_target_s"])


def test_another_sync_than_the_trained_one_has_no_time_to_target(synced_run, capsys):
    never = _rows(capsys, BASE + ["--from-run", str(synced_run), "--momentum-sync", "never"])
    assert math.isnan(never.loc["dlion-mavo", "time_to_target_s"])
    assert never.loc["dlion-mavo", "to_target_note"] == (
        "the run trained it with --momentum-sync every:4, this estimate prices never: time to target needs the "
        "trained sync (drop --momentum-sync, or train with never)")
    assert math.isfinite(never.loc["adamw", "time_to_target_s"])  # no per-worker momentum: not compared


@pytest.fixture(scope="module")
def warmup_only_run(tmp_path_factory):
    """DiLoCo at H=50 trained 12 steps: its workers never synced, so its steps to target are no
    DiLoCo's (a new user's sweep crowned such a run and priced it 7.53x sooner)."""
    from lionsim.bench import BenchConfig, run_bench
    from lionsim.reports import write_run

    result = run_bench(BenchConfig(workload="mlp", model_size="tiny", workers=2, steps=STEPS, batch_size=8,
                                   eval_every=STEPS, strategies=["adamw", "diloco"], options={"local_steps": 50}))
    out = tmp_path_factory.mktemp("warm") / "run"
    write_run(out, result.steps, result.summary, result.meta)
    return out


def test_a_run_that_never_left_its_warm_up_has_no_time_to_target(warmup_only_run, capsys):
    import json

    runs = {e["run"]: e for e in json.loads((warmup_only_run / "run.json").read_text())["runs"]}
    assert runs["diloco@fp32-allreduce"]["warmup_until"] == 50 and "warmup_until" not in runs["adamw@fp32-allreduce"]
    rows = _rows(capsys, BASE + ["--from-run", str(warmup_only_run), "-s", "adamw", "-s", "diloco"])
    assert math.isnan(rows.loc["diloco", "time_to_target_s"])
    assert rows.loc["diloco", "to_target_note"].startswith("its trained run ended inside its warm-up (its first "
                                                           "step past it, 50, never ran)")
    assert math.isfinite(rows.loc["adamw", "time_to_target_s"])
