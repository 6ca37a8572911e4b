"""Issue 7: bench time figures come from what the strategies change, never from run order or
warm-up; the default target is the baseline's own (issue 19); run.json replays the same run."""

import json
import math

import pandas as pd
import pytest

from lionsim.bench import BenchConfig, run_bench
from lionsim.cli.app import main
from lionsim.reports.columns import TIME_COLUMNS

TINY = dict(workload="mlp", model_size="tiny", workers=4, batch_size=8, steps=12, eval_every=6)
NON_TIMING = ["strategy", "transport", "workers", "network", "backend", "step", "loss", "wire_bytes",
              "eval_loss", "eval_acc"]


def steps_of(strategies, compute="measured", **kw) -> pd.DataFrame:
    return run_bench(BenchConfig(strategies=list(strategies), compute=compute, **(TINY | kw))).steps


def test_strategy_order_does_not_change_the_booked_compute():
    forward = steps_of(["adamw", "lion", "dlion-mavo"])
    backward = steps_of(["dlion-mavo", "lion", "adamw"])
    # one forward+backward figure per bench, the same on every step of every run
    assert forward.compute_s.nunique() == 1 and backward.compute_s.nunique() == 1
    # a fresh bench measures again (noise may differ), but within a bench the order is irrelevant:
    # every run books the bench's figure, and the non-timing columns are identical either way
    key = ["strategy", "transport", "step"]
    a = forward.sort_values(key).reset_index(drop=True)
    b = backward.sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(a[NON_TIMING], b[NON_TIMING])


@pytest.mark.parametrize("compute", ["measured", "h100"])
def test_lion_and_adamw_differ_only_by_their_update_work(compute):
    steps = steps_of(["adamw@fp32-allreduce", "lion@fp32-allreduce"], compute=compute)
    adamw, lion = (steps[steps.strategy == s].reset_index(drop=True) for s in ("adamw", "lion"))
    same = ["compute_s", "comm_s", "comm_exposed_s", "wire_bytes"]
    if compute != "measured":  # modelled encode/decode: the same (empty) work gives the same figure
        same += ["encode_s", "decode_s"]
    for col in same:
        assert (adamw[col] == lion[col]).all(), col
    if compute != "measured":
        assert (adamw.update_s > lion.update_s).all()  # AdamW passes over two moments, Lion one
        diff = adamw.step_s - lion.step_s
        assert diff.to_numpy() == pytest.approx((adamw.update_s - lion.update_s).to_numpy(), abs=1e-12)


def test_warm_up_steps_are_not_booked():
    steps = steps_of(["lion"], warmup_steps=3)
    # measured parts are medians by step kind: every step of one kind books one figure, so a slow
    # first step (allocator, first-use kernels) cannot show in any row
    for col in ("encode_s", "decode_s", "update_s"):
        assert steps[col].nunique() == 1, col


def test_device_model_times_do_not_depend_on_the_machine():
    a = steps_of(["adamw", "dlion-mavo@a2a-1bit"], compute="h100")
    b = steps_of(["dlion-mavo@a2a-1bit", "adamw"], compute="h100")
    key = ["strategy", "transport", "step"]
    a, b = (f.sort_values(key).reset_index(drop=True) for f in (a, b))
    pd.testing.assert_frame_equal(a[NON_TIMING + TIME_COLUMNS], b[NON_TIMING + TIME_COLUMNS])


def test_the_default_target_is_the_baselines_loss_at_90_percent_and_a_bad_run_cannot_move_it():
    """A strategy that trains badly (sgdm at a tiny lr) does not move the target: the baseline
    reaches it at 90% of its steps, the bad run shows not reached and no speedup."""
    good = run_bench(BenchConfig(strategies=["adamw", "lion"], **(TINY | dict(steps=30))))
    with_bad = run_bench(BenchConfig(strategies=["adamw", "lion", "sgdm"], hyper={"sgdm": {"lr": 1e-6}},
                                     **(TINY | dict(steps=30))))
    assert with_bad.summary.target_loss.nunique() == 1
    assert with_bad.summary.target_loss.iloc[0] == good.summary.target_loss.iloc[0]
    base = with_bad.summary.iloc[0]
    assert base.target_reached and base.steps_to_target <= 27  # the target is its own smoothed loss at step 27
    bad = with_bad.summary.set_index("strategy").loc["sgdm"]
    assert not bad.target_reached and math.isnan(bad.time_to_target_speedup)


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
