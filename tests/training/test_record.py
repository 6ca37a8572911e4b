"""run.json: a bench's record replays the same run (`lionsim bench --config run.json`)."""

import json

import pandas as pd
import pytest

from lionsim.cli.app import main

NON_TIMING = ["strategy", "transport", "workers", "network", "backend", "step", "loss", "wire_bytes",
              "eval_loss", "eval_acc"]


@pytest.mark.slow
def test_run_json_replays_the_run(tmp_path, capsys):
    first, again = tmp_path / "a", tmp_path / "b"
    args = ["bench", "--workload", "mlp", "--model-size", "tiny", "--workers", "4", "--batch-size", "8",
            "--steps", "8", "--eval-every", "4", "-s", "adamw", "-s", "dlion-mavo@a2a-1bit", "--lr", "0.002"]
    for cmd in (args + ["--out", str(first)], ["bench", "--config", str(first / "run.json"), "--out", str(again)]):
        with pytest.raises(SystemExit) as done:
            main(cmd)
        assert done.value.code == 0, capsys.readouterr().err
    a, b = pd.read_csv(first / "steps.csv"), pd.read_csv(again / "steps.csv")
    pd.testing.assert_frame_equal(a[NON_TIMING], b[NON_TIMING])
    meta = json.loads((first / "run.json").read_text())
    assert [r["lr"] for r in meta["runs"]] == [0.002, 0.002]
    assert meta["versions"]["lionsim"] and meta["argv"] and meta["started"] and meta["duration_s"] > 0
    assert set(meta["timing"]) >= {"compute_s", "encode_s", "comm_s", "decode_s", "update_s", "warmup_steps"}


def test_a_recorded_strategy_without_betas_replays(tmp_path, capsys):
    """signSGD takes no betas: its record carries none, so --config reads it back (it refused
    `hyper.signsgd.betas` when the record wrote the unused [0, 0])."""
    first, again = tmp_path / "a", tmp_path / "b"
    args = ["bench", "--workload", "mlp", "--model-size", "tiny", "--workers", "2", "--batch-size", "4",
            "--steps", "3", "-s", "signsgd", "-s", "adamw"]
    for cmd in (args + ["--out", str(first)], ["bench", "--config", str(first / "run.json"), "--out", str(again)]):
        with pytest.raises(SystemExit) as done:
            main(cmd)
        assert done.value.code == 0, capsys.readouterr().err
    hyper = json.loads((first / "run.json").read_text())["config"]["hyper"]
    assert "betas" not in hyper["signsgd@int8-allreduce"] and hyper["adamw@fp32-allreduce"]["betas"] == [0.9, 0.999]
