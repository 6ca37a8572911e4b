"""`lionsim bench --resume`: a run stopped at a step boundary continues exactly.

The reference is an uninterrupted bench of the same configuration: every strategy (each with
its own state: momentum, error memories, counters, random generators) is stopped after step 3
of 7, its state saved to disk and loaded back, and the resumed bench's rows must equal the
uninterrupted bench's, every column (times are modelled for a device, so they are exact too).
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from lionsim.bench import BenchConfig, plan, run_bench
from lionsim.errors import LionsimError
from lionsim.strategies import STRATEGIES
from lionsim.training.checkpoint import load_checkpoint, save_checkpoint
from lionsim.training.loop import RunStopped
from lionsim.training.results import Results
from lionsim.training.resume import config_differences, load_resume
from lionsim.training.runner import Runner
from lionsim.training.stop import StopRequest
from tests.helpers.cli import run_cli
from tests.helpers.recorded import as_three_ranks

STEPS = 7
STOP_AFTER = 3


def config(strategies: list[str], **extra) -> BenchConfig:
    return BenchConfig(workload="mlp", model_size="tiny", workers=3, batch_size=8, steps=STEPS, eval_every=2,
                       strategies=strategies, compute="h100", **extra)


def stopped_bench(cfg: BenchConfig, stop_label: str, tmp_path) -> tuple[Runner, pd.DataFrame]:
    """Run until `stop_label` finished STOP_AFTER steps, then stop it; return the runner and the
    rows it finished, with its checkpoint saved in tmp_path (as `lionsim bench` saves it)."""
    request = StopRequest()

    def progress(run, step, loss) -> None:
        if run.label == stop_label and step == STOP_AFTER:
            request.ask()

    bench = Runner(plan(cfg))
    with pytest.raises(RunStopped):
        bench.run(progress, stop=request)
    save_checkpoint(tmp_path, 0, bench.checkpoint)
    return bench, Results(bench).result(status="interrupted").steps


def continued(made, kept) -> pd.DataFrame:
    """The rows of a runner of the plan `made` continuing from `kept`, as `--resume` runs it."""
    again = Runner(made, resume=kept)
    again.run()
    return Results(again).result().steps


def resumed(cfg: BenchConfig, bench: Runner, tmp_path) -> pd.DataFrame:
    """A fresh bench continuing from what `bench` left, as `--resume` builds it."""
    partial = Results(bench).result(status="interrupted")
    from lionsim.reports.files import write_run

    write_run(tmp_path, partial.steps, partial.summary, partial.meta)
    made = plan(cfg)  # as a new `lionsim bench --resume` plans its own command
    return continued(made, load_resume(tmp_path, made))


@pytest.mark.parametrize("strategy", STRATEGIES.names())
def test_every_strategy_resumes_exactly(strategy, tmp_path):
    # the strategy alone: a run under way after finished ones (kept, not trained again) is
    # test_a_resume_keeps_the_finished_runs_rows_and_trains_only_the_rest's
    cfg = config([strategy])
    whole = run_bench(cfg).steps
    label = plan(cfg).labels[-1]
    bench, finished = stopped_bench(cfg, label, tmp_path)
    assert finished.groupby("strategy").step.max().to_dict()[strategy] == STOP_AFTER
    checkpoint = load_checkpoint(tmp_path, 0)
    assert (checkpoint.label, checkpoint.step) == (label, STOP_AFTER)
    pd.testing.assert_frame_equal(resumed(cfg, bench, tmp_path), whole)


def test_a_resume_keeps_the_finished_runs_rows_and_trains_only_the_rest(tmp_path, monkeypatch):
    cfg = config(["adamw", "lion", "dlion-mavo@a2a-1bit"], tie="random")
    whole = run_bench(cfg)
    bench, finished = stopped_bench(cfg, "lion@fp32-allreduce", tmp_path)
    trained = []
    import lionsim.training.runner as runner_module

    real = runner_module.train_run
    monkeypatch.setattr(runner_module, "train_run", lambda run, **kw: trained.append((run.label, kw["resume"])) or real(run, **kw))
    steps = resumed(cfg, bench, tmp_path)
    assert [(label, ck.step if ck else None) for label, ck in trained] == [
        ("lion@fp32-allreduce", STOP_AFTER), ("dlion-mavo@a2a-1bit", None)]  # adamw was kept as written
    pd.testing.assert_frame_equal(steps, whole.steps)


def stopped_without_state(cfg: BenchConfig, tmp_path):
    """A bench stopped as lion ran, its state lost (a second Ctrl-C, a dead rank): the runner, this
    command's plan, and what --resume loads from tmp_path."""
    bench, _ = stopped_bench(cfg, "lion@fp32-allreduce", tmp_path)
    (tmp_path / ".resume" / "rank0.pt").unlink()
    partial = Results(bench).result(status="interrupted")
    from lionsim.reports.files import write_run

    write_run(tmp_path, partial.steps, partial.summary, partial.meta)
    made = plan(cfg)
    return bench, made, load_resume(tmp_path, made)


def test_without_a_saved_state_the_run_under_way_restarts(tmp_path):
    """A second Ctrl-C (or a dead rank) leaves no state: the finished runs are kept, the run
    under way trains again from step 1, and the result is still the uninterrupted one."""
    cfg = config(["adamw", "lion"])
    whole = run_bench(cfg).steps
    _, made, kept = stopped_without_state(cfg, tmp_path)
    assert kept.checkpoint is None and kept.restarted == "lion@fp32-allreduce" and list(kept.finished) == ["adamw@fp32-allreduce"]
    pd.testing.assert_frame_equal(continued(made, kept), whole)


TINY = ["bench", "-w", "mlp", "--model-size", "tiny", "-n", "2", "-b", "8", "--steps", "4", "--eval-every", "2"]


def interrupted_dir(tmp_path, capsys) -> str:
    out = tmp_path / "o"
    assert run_cli(TINY + ["-s", "adamw", "--out", str(out)], capsys)[0] == 0
    meta = json.loads((out / "run.json").read_text())
    meta["status"] = "interrupted"
    (out / "run.json").write_text(json.dumps(meta))
    return str(out)


@pytest.mark.parametrize("extra, names", [
    (["-s", "lion"], "--strategy"),
    (["-s", "adamw", "--steps", "5"], "--steps 4 -> 5"),
    (["-s", "adamw", "--lr", "0.01"], "--hyper"),
])
@pytest.mark.slow
def test_resume_refuses_another_configuration(extra, names, tmp_path, capsys):
    out = interrupted_dir(tmp_path, capsys)
    before = sorted(p.name for p in (tmp_path / "o").iterdir())
    code, _, err = run_cli([*TINY[:-4], *extra, "--out", out, "--resume"] if "--steps" in extra else
                       [*TINY, *extra, "--out", out, "--resume"], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith(f"error: --resume: {out} was run with another "
                                                                  "configuration (") and names in lines[0], err
    assert f"--config {out}/run.json --resume" in lines[0]
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == before


@pytest.mark.slow
def test_resume_refuses_a_complete_run_and_a_directory_without_one(tmp_path, capsys):
    out = tmp_path / "o"
    assert run_cli(TINY + ["-s", "adamw", "--out", str(out)], capsys)[0] == 0
    code, _, err = run_cli(TINY + ["-s", "adamw", "--out", str(out), "--resume"], capsys)
    assert code == 2 and err.strip() == (f"error: --resume: the run in {out} is complete, nothing to continue; "
                                         "pass --overwrite to run it again, or choose another --out")
    code, _, err = run_cli(TINY + ["-s", "adamw", "--out", str(tmp_path / "none"), "--resume"], capsys)
    assert code == 2 and "holds no bench run to continue" in err and not (tmp_path / "none").exists()


@pytest.mark.slow
def test_the_resumed_config_replays_from_run_json(tmp_path, capsys):
    """`--config DIR/run.json --resume` gives the same options back (the refusal's advice works)."""
    out = interrupted_dir(tmp_path, capsys)
    code, _, err = run_cli(["bench", "--config", f"{out}/run.json", "--resume"], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "o" / "run.json").read_text())["status"] == "complete"


def test_resume_with_a_new_lr_says_default_there(tmp_path):
    from lionsim.config.bench import BenchConfig
    from lionsim.config.sweep import SweepConfig, plan_sweep
    from lionsim.sweep import Grid

    grid = Grid.parse(workload=["mlp"], workers=["2"], network=["1gbe"], seed=["0"], strategies=["adamw"],
                      transport=None)
    old = plan_sweep(SweepConfig(grid=grid, bench=BenchConfig(), jobs=1, out=tmp_path), train=False).record(None)
    one_lr = Grid.parse(workload=["mlp"], workers=["2"], network=["1gbe"], seed=["0"], strategies=["adamw"],
                        transport=None, lr=["0.01"])  # a sweep's --lr is its grid's (bench's lr is ignored)
    new = plan_sweep(SweepConfig(grid=one_lr, bench=BenchConfig(), jobs=1, out=tmp_path), train=False)
    with pytest.raises(LionsimError, match=r"\(default there, 0.01 now\)"):
        new.check_resume(old, tmp_path / "sweep.json")


def test_resume_differences_name_what_changed():
    old = {"lr": None, "hyper": {"adamw@fp32-allreduce": {"lr": 0.001, "weight_decay": 0.1, "betas": [0.9, 0.999]}}}
    new = {"lr": 0.01, "hyper": {"adamw@fp32-allreduce": {"lr": 0.01, "weight_decay": 0.1, "betas": [0.9, 0.999]}}}
    assert config_differences(old, new) == ["--lr (not given) -> 0.01", "--hyper adamw@fp32-allreduce.lr 0.001 -> 0.01"]
    assert config_differences({"trace": False, "out": "a"}, {"trace": True, "out": "b"}) == []


def test_an_older_record_s_relative_paths_are_compared_from_where_it_resumes(tmp_path, monkeypatch):
    """run.json records absolute paths (lionsim.training.record); an older lionsim's relative ones
    were typed where it ran, where its --resume runs: the same files there, another elsewhere."""
    monkeypatch.chdir(tmp_path)
    root = tmp_path.resolve()
    old = {"network": "prof/a.toml", "compute_spread": ["trace:t.csv"], "data": "corpus.txt", "workers": 2}
    new = {"network": str(root / "prof" / "a.toml"), "compute_spread": [f"trace:{root / 't.csv'}"],
           "data": str(root / "corpus.txt"), "workers": 2}
    assert config_differences(old, new) == []
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert [d.split()[0] for d in config_differences(old, new)] == ["--network", "--compute-spread", "--data"]


def test_a_strategy_swapped_is_one_difference_not_its_runs_hyperparameters():
    """A run only one side has is --strategy's difference; --hyper names only the runs both have."""
    adamw, signsgd, lion = ({"lr": lr} for lr in (0.001, 0.003, 0.0001))
    old = {"strategies": ["adamw,signsgd"], "hyper": {"adamw@fp32-allreduce": adamw, "signsgd@int8-allreduce": signsgd}}
    new = {"strategies": ["adamw,lion"], "hyper": {"adamw@fp32-allreduce": adamw, "lion@fp32-allreduce": lion}}
    assert config_differences(old, new) == ['--strategies ["adamw,signsgd"] -> ["adamw,lion"]']
    new["hyper"]["adamw@fp32-allreduce"] = {"lr": 0.01}
    assert config_differences(old, new)[-1] == "--hyper adamw@fp32-allreduce.lr 0.001 -> 0.01"


def test_a_resume_keeps_every_finished_runs_calls(tmp_path):
    """calls.csv after a resume holds every run's calls, as an uninterrupted run's: the finished
    runs' read back from the interrupted directory (measured once, never again), the run under
    way's restored with its state; each run's calls cover exactly its steps in steps.csv."""
    from lionsim.reports.files import write_run

    cfg = config(["adamw", "lion", "dlion-mavo@a2a-1bit"])
    whole = as_three_ranks(plan(cfg))
    whole.run()
    expected = Results(whole).result().calls
    assert set(expected["strategy"]) == {"adamw", "lion", "dlion-mavo"}
    request = StopRequest()
    bench = as_three_ranks(plan(cfg))
    with pytest.raises(RunStopped):
        bench.run(lambda run, step, loss: request.ask() if run.label == "lion@fp32-allreduce" and step == STOP_AFTER
                  else None, stop=request)
    save_checkpoint(tmp_path, 0, bench.checkpoint)
    partial = Results(bench).result(status="interrupted")
    write_run(tmp_path, partial.steps, partial.summary, partial.meta)
    partial.calls.to_csv(tmp_path / "calls.csv", index=False)
    made = plan(cfg)
    again = as_three_ranks(made)
    again.resume = load_resume(tmp_path, made)
    again.run()
    done = Results(again).result()
    pd.testing.assert_frame_equal(done.calls, expected)
    steps = set(zip(done.steps["strategy"], done.steps["step"]))
    assert set(zip(done.calls["strategy"], done.calls["step"])) == steps


def test_a_run_stopped_without_state_keeps_the_measured_compute_figure(tmp_path):
    """A new user's gloo bench, stopped after lion finished and resumed, booked dlion-mavo's steps at a
    compute measured again (23.4 ms against lion's 22.0) and the ranking reversed: a bench measures
    compute once; a resume without the checkpoint takes the figure run.json records."""
    cfg = BenchConfig(workload="mlp", model_size="tiny", workers=3, batch_size=8, steps=STEPS, eval_every=2,
                      strategies=["adamw", "lion"], compute="measured")
    bench, made, kept = stopped_without_state(cfg, tmp_path)
    assert kept.checkpoint is None and kept.compute().samples == bench.compute.samples
    rows = continued(made, kept)
    assert set(rows.compute_s) == {bench.compute.seconds}, rows.groupby("strategy").compute_s.unique()
