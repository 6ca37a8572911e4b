"""`estimate --from-run DIR --target-loss X`: DIR's steps to target measured again at X from the loss
curves on disk, no training. Each run's steps are checked against a plain loop over its recorded
losses (the first step whose trailing mean, over ceil(10%) of the longest run's steps, is <= X)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from lionsim.cli.app import main
from lionsim.estimate.from_run import load
from tests.estimate.test_from_run import bench_dir
from tests.helpers.cli import one_line_exit_2, run_cli

STEPS = 12


def first_at_or_below(losses: list[float], target: float, window: int) -> float:
    """The step (1-based) whose trailing mean of `window` losses (fewer at the start) is <= target; NaN: none."""
    for i in range(len(losses)):
        part = losses[max(0, i + 1 - window):i + 1]
        if sum(part) / len(part) <= target:
            return float(i + 1)
    return math.nan


@pytest.fixture(scope="module")
def sweep_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("retarget") / "sweep"
    with pytest.raises(SystemExit) as done:
        main(["sweep", "--workload", "mlp", "--model-size", "tiny", "--workers", "2,4", "--steps", str(STEPS),
              "--batch-size", "8", "-s", "adamw", "-s", "dlion-mavo", "--out", str(root)])
    assert done.value.code == 0
    return root


def test_a_sweep_is_measured_again_at_the_target_from_its_loss_curves(sweep_root):
    steps = pd.read_csv(sweep_root / "sweep_steps.csv")
    curves = {cell: list(rows.sort_values("step")["loss"]) for cell, rows in steps.groupby("cell")}
    base = next(c for c in curves if "w2" in c and "adamw" in c)
    target = float(pd.Series(curves[base]).rolling(2, min_periods=1).mean().iloc[5])  # the baseline gets there
    measured = load(sweep_root, target)
    window = math.ceil(0.1 * STEPS)
    summary = pd.read_csv(sweep_root / "sweep_summary.csv")
    expect = {}
    for row in summary.itertuples(index=False):
        expect[(row.run, row.workers)] = first_at_or_below(curves[row.cell], target, window)
    assert measured.target_loss == target and "(--target-loss)" in measured.target
    assert len(measured.reaches) == 4
    for reach in measured.reaches:
        assert reach.steps == pytest.approx(expect[(reach.label, reach.workers)], nan_ok=True)
        assert reach.baseline_steps == expect[("adamw@fp32-allreduce", reach.workers)]
    # the sweep as trained is read as before: its own targets, untouched on disk
    assert [r.steps for r in load(sweep_root).reaches] == pytest.approx(list(summary["steps_to_target"]), nan_ok=True)


def test_the_command_prices_the_new_target_and_says_it(sweep_root, capsys):
    code, out, err = run_cli(["estimate", "-m", "gpt2-124m", "--workers", "4", "--from-run", str(sweep_root),
                              "--target-loss", "2.3", "--format", "csv"], capsys)
    assert code == 0, err
    frame = pd.read_csv(__import__("io").StringIO(out))
    assert set(frame["to_target_loss"]) == {2.3}
    assert set(frame["to_target_rule"]) == {"2.3 in every cell (--target-loss)"}


def test_a_bench_run_is_measured_again_from_its_steps(tmp_path):
    from lionsim.bench import BenchConfig, run_bench
    from lionsim.reports import write_run

    result = run_bench(BenchConfig(workload="mlp", model_size="tiny", workers=2, steps=STEPS, batch_size=8,
                                   eval_every=STEPS, strategies=["adamw", "dlion-mavo"]))
    out = tmp_path / "bench"
    write_run(out, result.steps, result.summary, result.meta)
    steps = pd.read_csv(out / "steps.csv")
    curves = {f"{s}@{t}": list(rows.sort_values("step")["loss"]) for (s, t), rows in
              steps.groupby(["strategy", "transport"])}
    target = float(pd.Series(curves["adamw@fp32-allreduce"]).rolling(2, min_periods=1).mean().iloc[7])
    measured = load(out, target)
    assert measured.target_loss == target and "--target-loss" in measured.target
    for reach in measured.reaches:
        assert reach.steps == pytest.approx(first_at_or_below(curves[reach.label], target, 2), nan_ok=True)
        assert reach.baseline_steps == first_at_or_below(curves["adamw@fp32-allreduce"], target, 2)


@pytest.mark.parametrize("value", ["nan", "0", "-1", "inf"])
def test_a_target_that_is_no_loss_is_one_line(tmp_path, capsys, value):
    one_line_exit_2(["estimate", "-m", "gpt2-124m", "--from-run", str(bench_dir(tmp_path)), "--target-loss", value],
                    capsys, f"bad --target-loss {value}; accepted: a finite number above 0")


def test_without_from_run_or_loss_curves_it_is_one_line(tmp_path, capsys):
    one_line_exit_2(["estimate", "-m", "gpt2-124m", "--target-loss", "2"], capsys,
                    "--target-loss 2 measures --from-run DIR's steps to target again at that loss: give --from-run")
    one_line_exit_2(["estimate", "-m", "gpt2-124m", "--from-run", str(bench_dir(tmp_path)), "--target-loss", "2"],
                    capsys, "--target-loss re-reads the loss curves, and it holds no steps.csv")


def lowest_trailing_mean(losses: list[float], window: int) -> float:
    """The least trailing mean of `window` losses (fewer at the start): the lowest target reached."""
    return min(sum(losses[max(0, i + 1 - window):i + 1]) / len(losses[max(0, i + 1 - window):i + 1])
               for i in range(len(losses)))


def printed_bound(err: str, words: str) -> float:
    return float(err.split(words, 1)[1].split()[0].rstrip(";),"))


def test_a_target_the_sweep_s_baseline_never_reached_is_the_target_s_fault(sweep_root, capsys):
    """The line blamed --target-loss's fault on --from-run: it names --target-loss and the least loss
    accepted, the lowest of the cells' lowest smoothed losses (reached in some cells, which price
    it), and the least every cell's baseline reached (the highest of them), each rounded up, so a
    loss typed as printed counts those cells."""
    steps = pd.read_csv(sweep_root / "sweep_steps.csv")
    window = math.ceil(0.1 * STEPS)
    lowest = [lowest_trailing_mean(list(rows.sort_values("step")["loss"]), window)
              for cell, rows in steps.groupby("cell") if "adamw" in cell]
    err = one_line_exit_2(["estimate", "-m", "gpt2-124m", "--from-run", str(sweep_root), "--target-loss", "0.001"],
                          capsys, "error: bad --target-loss 0.001: the baseline adamw@fp32-allreduce reached it in "
                                  "none of the sweep's 2 cells; accepted: ")
    accepted = err.split("accepted: ", 1)[1].rstrip()
    if f"{min(lowest):.4g}" == f"{max(lowest):.4g}":  # one bound
        assert accepted.startswith("a loss the baseline reached in every cell (at least ")
        every = some = printed_bound(err, "at least ")
    else:
        assert accepted.startswith("at least ") and "(the baseline reached that in some cells; at least " in accepted
        assert accepted.endswith(" in every cell)")
        some, every = printed_bound(err, "accepted: at least "), printed_bound(err, "cells; at least ")
    assert max(lowest) <= every <= max(lowest) * (1 + 1e-3)
    assert min(lowest) <= some <= min(lowest) * (1 + 1e-3)
    assert load(sweep_root, every).left_out == 0  # as printed: every cell counts
    assert load(sweep_root, some).cells >= 1  # accepted, as the line says: priced from the cells that reach it
    if some < every:
        one_line_exit_2(["estimate", "-m", "gpt2-124m", "--from-run", str(sweep_root), "--target-loss",
                         f"{min(lowest) * (1 - 1e-3):.6g}"], capsys, "bad --target-loss ")


def test_the_refusal_accepts_from_the_lowest_loss_any_cell_reached():
    """What the line accepts is what is priced: from the least of the cells' lowest losses (rounded
    up), with the least that counts every cell; one bound where they agree, or for one run."""
    from lionsim.estimate.retarget import unreached

    said = str(unreached(0.01, "adamw", [0.98121, 0.80581, 0.9], 3))
    assert said.endswith("accepted: at least 0.8059 (the baseline reached that in some cells; at least 0.9813 in "
                         "every cell)")
    assert said.startswith("bad --target-loss 0.01: the baseline adamw reached it in none of the sweep's 3 cells; ")
    assert str(unreached(0.01, "adamw", [0.5, 0.5], 2)).endswith(
        "accepted: a loss the baseline reached in every cell (at least 0.5)")
    assert str(unreached(0.01, "adamw", [0.5], 1)) == ("bad --target-loss 0.01: the baseline adamw did not reach it in "
                                                      "the sweep's one cell; accepted: a loss the baseline reached "
                                                      "(at least 0.5)")  # not "none of the sweep's 1 cells"
    assert str(unreached(0.01, "adamw", [0.5])).endswith("did not reach it; accepted: a loss the baseline reached "
                                                         "(at least 0.5)")


def test_a_target_a_bench_run_s_baseline_never_reached_is_the_target_s_fault(tmp_path, capsys):
    from lionsim.bench import BenchConfig, run_bench
    from lionsim.reports import write_run

    result = run_bench(BenchConfig(workload="mlp", model_size="tiny", workers=2, steps=STEPS, batch_size=8,
                                   eval_every=STEPS, strategies=["adamw", "dlion-mavo"]))
    out = tmp_path / "bench"
    write_run(out, result.steps, result.summary, result.meta)
    steps = pd.read_csv(out / "steps.csv")
    base = list(steps[steps["strategy"] == "adamw"].sort_values("step")["loss"])
    err = one_line_exit_2(["estimate", "-m", "gpt2-124m", "--from-run", str(out), "--target-loss", "0.001"], capsys,
                          "error: bad --target-loss 0.001: the baseline adamw@fp32-allreduce did not reach it; "
                          "accepted: a loss the baseline reached (at least ")
    least = printed_bound(err, "at least ")
    assert lowest_trailing_mean(base, 2) <= least <= lowest_trailing_mean(base, 2) * (1 + 1e-3)
    assert load(out, least).reaches[0].baseline_steps > 0


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory):
    from lionsim.bench import BenchConfig, run_bench
    from lionsim.reports import write_run

    result = run_bench(BenchConfig(workload="mlp", model_size="tiny", workers=2, steps=STEPS, batch_size=8,
                                   eval_every=STEPS, strategies=["adamw", "dlion-mavo"]))
    out = tmp_path_factory.mktemp("bench") / "bench"
    write_run(out, result.steps, result.summary, result.meta)
    return out


def test_a_target_above_the_baselines_first_loss_is_refused_in_one_line(bench_run, capsys):
    """Every run reaches a target at or above the baseline's first loss at step 1: nothing is compared.
    The line names the first loss (the step's own: a trailing mean of one) rounded down, so a target
    typed as printed is below it and priced, and the least reached, as the too-low refusal reads it."""
    steps = pd.read_csv(bench_run / "steps.csv")
    base = list(steps[steps["strategy"] == "adamw"].sort_values("step")["loss"])
    err = one_line_exit_2(["estimate", "-m", "gpt2-124m", "--from-run", str(bench_run), "--target-loss", "1e9"],
                          capsys, "error: bad --target-loss 1e9: the baseline adamw@fp32-allreduce's first loss is ")
    first = printed_bound(err, "first loss is ")
    assert base[0] * (1 - 1e-3) <= first <= base[0]
    assert err.rstrip().endswith(f"so every run reaches it at once and nothing is compared; accepted: a loss below "
                                 f"{first:g} and at least {printed_bound(err, 'and at least '):g}")
    least = printed_bound(err, "and at least ")
    assert lowest_trailing_mean(base, 2) <= least <= lowest_trailing_mean(base, 2) * (1 + 1e-3)
    assert load(bench_run, first).reaches[0].baseline_steps >= 1  # as printed: accepted
    one_line_exit_2(["estimate", "-m", "gpt2-124m", "--from-run", str(bench_run), "--target-loss", repr(base[0])],
                    capsys, "first loss is ")  # at it: step 1 reaches it too


def test_a_target_above_a_sweeps_first_loss_in_some_cell_is_refused(sweep_root, capsys):
    steps = pd.read_csv(sweep_root / "sweep_steps.csv")
    firsts = [rows.sort_values("step")["loss"].iloc[0] for cell, rows in steps.groupby("cell") if "adamw" in cell]
    err = one_line_exit_2(["estimate", "-m", "gpt2-124m", "--from-run", str(sweep_root), "--target-loss",
                           f"{max(firsts):.6g}"], capsys, "the baseline adamw@fp32-allreduce's first loss is ")
    assert "(the lowest of its cells'), so every run reaches it at once" in err
    first = printed_bound(err, "first loss is ")
    assert min(firsts) * (1 - 1e-3) <= first <= min(firsts)


def test_the_hint_of_one_step_says_step():
    from lionsim.cli.estimate_cmd import _own_steps_hint

    frame = pd.DataFrame([{"strategy": "adamw", "transport": "fp32-allreduce", "baseline": "adamw@fp32-allreduce",
                           "steps_to_target": 1.0, "to_target_params": 1000.0, "params": 1e9}])
    assert "the trained run's own (1 step, for its model" in _own_steps_hint(frame)
    frame["steps_to_target"] = 1024.0
    assert "the trained run's own (1,024 steps, for its model" in _own_steps_hint(frame)
    # the report's headline likewise
    from lionsim.reports.to_target import _verdict

    frame = frame.assign(steps_to_target=1.0, time_to_target_s=0.5, to_target_speedup=1.0, to_target_note="",
                         to_target_how="exact", to_target_match="adamw@fp32-allreduce")
    assert "(1 step, 1.00x the baseline" in _verdict(frame)


def test_a_baseline_that_never_fell_below_its_first_loss_offers_no_range():
    """A baseline whose lowest smoothed loss is its first (a run too short to learn) leaves no target
    between the two: the line says so, rather than accepting "below 2.289 and at least 2.29"."""
    from lionsim.errors import LionsimError
    from lionsim.estimate.retarget import check_not_at_once

    with pytest.raises(LionsimError) as refused:
        check_not_at_once(2.3, "adamw@fp32-allreduce", first=[2.28931], lowest=[2.28931])
    line = str(refused.value)
    assert "loss never fell below its first, 2.289, so no target compares the runs" in line
    assert "at least" not in line
    check_not_at_once(2.0, "adamw@fp32-allreduce", first=[2.28931], lowest=[2.28931])  # below the start: not this check


@pytest.mark.parametrize("content, says", [
    (b"garbage\x00\xff\n", "malformed CSV"),
    (b"", "malformed CSV"),
    (b"step,loss\n1,2.0\n", "missing column"),
])
def test_a_bad_sweep_steps_file_is_one_line_naming_it(sweep_root, tmp_path, capsys, content, says):
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(sweep_root, root)
    (root / "sweep_steps.csv").write_bytes(content)
    err = one_line_exit_2(["estimate", "-m", "gpt2-124m", "--from-run", str(root), "--target-loss", "1.5"], capsys,
                          str(root / "sweep_steps.csv"))
    assert says in err, err
