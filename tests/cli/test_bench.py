"""`lionsim bench` end to end on a tiny configuration, and its bad-input contract."""

import json
import math

import pandas as pd
import pytest
import torch

import lionsim.simulator
from lionsim.cli.app import main
from lionsim.errors import LionsimError
from lionsim.strategies import STRATEGIES
from tests.helpers.cli import TINY_BENCH, run_cli

SPEC_STEP_COLUMNS = ["strategy", "transport", "workers", "network", "backend", "step", "loss",
                     "compute_s", "encode_s", "comm_s", "decode_s", "update_s", "step_s",
                     "sim_time_s", "wire_bytes", "eval_loss", "eval_acc"]
TINY = ["bench", "--workload", "mlp", "--workers", "3", "--steps", "30", "--batch-size", "16",
        "--eval-every", "10", "--network", "1gbe"]



def error_lines(text: str) -> list[str]:
    """stderr without the progress lines ("lionsim: run ..."), which go there off a terminal."""
    return [line for line in text.strip().splitlines() if not line.startswith("lionsim: ")]

@pytest.fixture(scope="session")
def every_strategy(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    args = TINY + ["--out", str(out)]
    for name in STRATEGIES.names():
        args += ["--strategy", name]
    args += ["--strategy", "dlion-mavo@a2a-1bit", "--strategy", "dlion-mavo@pbit-allreduce",
             "--strategy", "dlion-mavo@param-server", "--strategy", "dlion-mavo@allgather-1bit"]
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 0
    return out


def test_outputs_have_the_spec_columns(every_strategy):
    steps = pd.read_csv(every_strategy / "steps.csv")
    assert set(SPEC_STEP_COLUMNS) <= set(steps.columns)
    summary = pd.read_csv(every_strategy / "summary.csv")
    for col in ("strategy", "final_loss", "best_loss", "bits_per_param_up", "bits_per_param_down", "speedup"):
        assert col in summary.columns
    meta = json.loads((every_strategy / "run.json").read_text())
    assert meta["seed"] == 0 and "torch" in meta["versions"] and meta["config"]["workers"] == 3
    assert {p.name for p in every_strategy.glob("*.png")} >= {"loss_vs_time.png", "time_breakdown.png"}
    # the modelled clock is the running sum of the step times
    for _, run_steps in steps.groupby(["strategy", "transport"]):
        assert run_steps.sim_time_s.iloc[-1] == pytest.approx(run_steps.step_s.sum())


def test_every_strategy_lowers_the_loss(every_strategy):
    steps = pd.read_csv(every_strategy / "steps.csv")
    for (strategy, transport), run_steps in steps.groupby(["strategy", "transport"], sort=False):
        first, last = run_steps.loss.iloc[:3].mean(), run_steps.loss.iloc[-3:].mean()
        assert last < 0.9 * first, f"{strategy}@{transport}: {first:.3f} -> {last:.3f}"


def test_vote_transports_give_identical_training(every_strategy):
    steps = pd.read_csv(every_strategy / "steps.csv")
    mavo = steps[steps.strategy == "dlion-mavo"]
    curves = [g.loss.tolist() for _, g in mavo.groupby("transport")]
    assert len(curves) == 5 and all(c == curves[0] for c in curves)
    # ... while the bytes differ as their wire formats say
    sent = mavo.groupby("transport").wire_bytes.first()
    assert sent["a2a-1bit"] < sent["int8-allreduce"] and sent["param-server"] < sent["int8-allreduce"]


@pytest.mark.slow
def test_same_seed_same_numbers(tmp_path, capsys):
    frames = []
    for name in ("a", "b"):
        code, _, _ = run_cli(TINY + ["--steps", "5", "-s", "terngrad", "-s", "dlion-avg", "--out", str(tmp_path / name)], capsys)
        assert code == 0
        frames.append(pd.read_csv(tmp_path / name / "steps.csv"))
    deterministic = ["loss", "wire_bytes", "eval_loss", "eval_acc"]
    pd.testing.assert_frame_equal(frames[0][deterministic], frames[1][deterministic])


@pytest.mark.slow
def test_config_file_gives_options_and_flags_win(tmp_path, capsys):
    config = tmp_path / "run.toml"
    config.write_text('workload = "mlp"\nworkers = 2\nsteps = 50\nstrategy = ["lion", "dlion-mavo"]\n')
    code, _, _ = run_cli(["bench", "--config", str(config), "--steps", "3", "--out", str(tmp_path / "o")], capsys)
    assert code == 0
    steps = pd.read_csv(tmp_path / "o" / "steps.csv")
    assert steps.step.max() == 3 and set(steps.strategy) == {"lion", "dlion-mavo"} and steps.workers.iloc[0] == 2


@pytest.mark.parametrize("args,message", [
    (["--strategy", "adam"], "unknown strategy 'adam'; choose from: adamw, lion"),
    (["--strategy", "dlion-mavo@fp32-allreduce"], "valid transports: int8-allreduce"),
    (["--workers", "0"], "bad --workers 0"),
    (["--network", "5g-pigeon"], "5g-pigeon"),
    (["--workload", "resnet"], "unknown workload 'resnet'"),
    (["--data-split", "dirichlet:-1"], "dirichlet:-1"),
    (["--momentum-sync", "every:0", "-s", "dlion-mavo"], "bad --momentum-sync 'every:0'"),
    (["--backend", "mpi"], "backend 'mpi'"),
    (["--betas", "0.9"], "bad --betas '0.9'"),
    (["--lr", "nan"], "bad --lr nan"),
    (["--data", "/nonexistent/cifar", "--workload", "vit"], "/nonexistent/cifar"),
    (["--config", "/nonexistent.toml"], "bad --config /nonexistent.toml: no such file; accepted: a TOML file or a run.json"),
    (["-s", "adamw", "--tie", "random"], "--tie random applies to dlion-mavo"),
    (["--seed", "1180591620717411303424"], "bad --seed 1180591620717411303424"),
    (["--seed", "-1"], "bad --seed -1"),
    (["-s", "adamw", "--hyper", '{"adamw": {"lr": "x"}}'], "bad hyper.adamw.lr 'x'"),
    (["-s", "adamw", "--hyper", '{"adamw": {"lr": -1}}'], "bad hyper.adamw.lr -1"),
    (["-s", "adamw", "--hyper", '{"adamw": {"betas": [2, 0.9]}}'], "bad hyper.adamw.betas [2, 0.9]"),
    (["-s", "dlion-mavo", "--tie", "coin"], "bad --tie 'coin'"),
])
def test_bad_input_is_one_line_and_exit_2(args, message, tmp_path, capsys):
    out_dir = tmp_path / "out"
    code, _, err = run_cli(TINY + ["--out", str(out_dir)] + args, capsys)
    assert code == 2
    lines = error_lines(err)
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], err
    assert "Traceback" not in err
    assert not out_dir.exists()  # nothing written


@pytest.mark.parametrize("args,message", [
    (["--baseline", "nope"], "unknown baseline 'nope'; choose from: lion@fp32-allreduce"),
    (["-s", "dlion-mavo@int8-allreduce", "-s", "dlion-mavo@a2a-1bit", "--baseline", "dlion-mavo"],
     "ambiguous baseline 'dlion-mavo': 2 runs are dlion-mavo (dlion-mavo@int8-allreduce, dlion-mavo@a2a-1bit)"),
    (["--out", "/dev/null/run"], "bad --out /dev/null/run: /dev/null is not a directory"),
])
def test_bad_input_found_late_still_fails_before_training(args, message, tmp_path, capsys, monkeypatch):
    def no_training(*args, **kwargs):
        pytest.fail("trained before rejecting the input")

    for method in ("loop", "vmap"):
        monkeypatch.setitem(lionsim.simulator.GRADIENT_METHODS, method, no_training)
    code, _, err = run_cli(TINY + ["-s", "lion", "--out", str(tmp_path / "o")] + args, capsys)
    lines = error_lines(err)
    assert code == 2 and len(lines) == 1 and message in lines[0], err
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_a_diverged_strategy_is_a_result_not_a_crash(tmp_path, capsys):
    out = tmp_path / "o"
    code, stdout, err = run_cli(TINY + ["-s", "adamw", "-s", "sgdm", "-s", "lion", "--hyper", '{"sgdm": {"lr": 1e12}}',
                                    "--out", str(out)], capsys)
    assert code == 1
    lines = error_lines(err)
    assert len(lines) == 1 and "diverged: sgdm@fp32-allreduce at step" in lines[0], err
    steps, summary = pd.read_csv(out / "steps.csv"), pd.read_csv(out / "summary.csv")
    sgdm = steps[steps.strategy == "sgdm"]
    at = int(sgdm.diverged_at_step.iloc[0])
    last, first = sgdm.loss.iloc[-1], sgdm.loss.iloc[0]  # stopped where it diverged: non-finite, or 100x its start
    assert sgdm.step.max() == at < 30 and (not math.isfinite(last) or last > 100 * first)
    assert (steps[steps.strategy != "sgdm"].groupby("strategy").step.max() == 30).all()  # the others ran on
    assert summary.set_index("strategy").diverged_at_step.fillna(0).to_dict() == {"adamw": 0, "sgdm": at, "lion": 0}
    meta = json.loads((out / "run.json").read_text())
    assert [r["diverged_at_step"] for r in meta["runs"]] == [None, at, None]


def test_interrupted_run_keeps_what_finished(tmp_path, capsys, monkeypatch):
    calls = {"n": 0}
    real = dict(lionsim.simulator.GRADIENT_METHODS)

    def interrupting(method):
        def interrupt_late(*args, **kwargs):
            calls["n"] += 1
            if calls["n"] > 45:  # 13 timing passes, then 30 steps of adamw, then 2 of lion
                raise KeyboardInterrupt
            return real[method](*args, **kwargs)
        return interrupt_late

    for method in real:  # whichever method the workload uses at this worker count
        monkeypatch.setitem(lionsim.simulator.GRADIENT_METHODS, method, interrupting(method))
    out = tmp_path / "o"
    code, _, err = run_cli(TINY + ["-s", "adamw", "-s", "lion", "--compute", "measured", "--out", str(out)], capsys)
    assert code == 2 and error_lines(err) == [f"error: interrupted: 32 finished steps kept in {out}; the same "
                                              "command with --resume trains the runs that did not finish"]
    steps = pd.read_csv(out / "steps.csv")
    assert steps.groupby("strategy").step.max().to_dict() == {"adamw": 30, "lion": 2}
    assert json.loads((out / "run.json").read_text())["status"] == "interrupted"
    assert not list(tmp_path.glob(".*partial"))  # the staging directory is gone


def test_interrupted_before_any_step_writes_nothing(tmp_path, capsys, monkeypatch):
    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    for method in ("loop", "vmap"):
        monkeypatch.setitem(lionsim.simulator.GRADIENT_METHODS, method, interrupt)
    code, _, err = run_cli(TINY + ["-s", "lion", "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and error_lines(err) == ["error: interrupted: no results were written"]
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("workload", ["mlp", "gpt"])
def test_vmap_gradients_equal_the_plain_loop(workload):
    from lionsim.simulator import vmap_gradients, worker_gradients
    from lionsim.strategies import flatten_parameters
    from lionsim.workloads import WorkloadConfig, build_workload

    wl = build_workload(WorkloadConfig(name=workload, workers=3, batch_size=8, size="tiny"))
    _, layout = flatten_parameters(wl.model)
    loop, fast = torch.zeros(3, layout.numel), torch.zeros(3, layout.numel)
    loop_losses = worker_gradients(wl.model, wl.loss, wl.batches(0), loop)
    fast_losses = vmap_gradients(wl.model, wl.loss, wl.batches(0), fast)
    torch.testing.assert_close(fast, loop, atol=1e-5, rtol=1e-4)
    assert fast_losses == pytest.approx(loop_losses, abs=1e-6)


@pytest.mark.slow
def test_a_reader_that_stops_early_is_not_an_error():
    import subprocess
    import sys

    done = subprocess.run(f"set -o pipefail; {sys.executable} -m lionsim strategies | head -1", shell=True,
                          capture_output=True, text=True, executable="/bin/bash", timeout=120)
    # pipefail: the status is lionsim's own; one line came through and nothing was said on stderr
    assert done.returncode == 0 and done.stdout.strip() and not done.stderr.strip(), done.stderr


def test_an_interrupt_while_drawing_plots_keeps_every_run(tmp_path, capsys, monkeypatch):
    import lionsim.reports.writing as writing

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(writing, "plot_run", interrupted)
    out = tmp_path / "o"
    code, _, err = run_cli(TINY + ["-s", "adamw", "-s", "lion", "--out", str(out)], capsys)
    assert code == 2 and error_lines(err) == [
        f"error: interrupted while drawing the plots: every run's results are kept in {out}; `lionsim plot {out}` draws them"]
    steps = pd.read_csv(out / "steps.csv")
    assert steps.groupby("strategy").step.max().to_dict() == {"adamw": 30, "lion": 30}
    assert json.loads((out / "run.json").read_text())["status"] == "complete"
    assert not list(out.glob("*.png")) and not list(tmp_path.glob(".*partial"))


@pytest.mark.slow
def test_bench_format_json_prints_the_summary_alone_on_stdout(tmp_path, capsys):
    code, out, err = run_cli([*TINY_BENCH, "-s", "adamw", "--out", str(tmp_path / "o"), "--format", "json"], capsys)
    assert code == 0
    rows = json.loads(out)
    assert [r["run"] for r in rows] == ["adamw@fp32-allreduce"] and "wrote" in err


def test_transport_is_one_rule_for_named_and_default_strategies():
    from lionsim.bench import DEFAULT_STRATEGIES
    from lionsim.runs import parse_runs

    named = parse_runs(["adamw", "dlion-mavo"], "a2a-1bit")
    assert [r.label for r in named] == ["adamw@fp32-allreduce", "dlion-mavo@a2a-1bit"]
    default = parse_runs(list(DEFAULT_STRATEGIES), "a2a-1bit")
    assert default[0].label == "adamw@fp32-allreduce"  # fits none of adamw's: its default, as when named
    assert [r.label for r in default].count("dlion-mavo@a2a-1bit") == 1  # the same run once, not "given twice"
    for specs, said in ((["adamw"], "strategy 'adamw' cannot use transport 'a2a-1bit'"),  # nobody can use it:
                        (["adamw", "lion"], "adamw, lion cannot use it")):  # an error, naming every one given
        with pytest.raises(LionsimError, match=said):
            parse_runs(specs, "a2a-1bit")


def test_bench_names_a_widened_container_under_its_table(tmp_path, capsys):
    argv = ["bench", "-w", "mlp", "--model-size", "tiny", "--steps", "1", "--eval-every", "1", "-s",
            "dlion-mavo@int8-allreduce", "--workers", "128", "--out", str(tmp_path)]
    code, out, _ = run_cli(argv, capsys)
    text = " ".join(out.split())
    assert code == 0 and "from 128 workers on: a sum of 128 workers' values" in text
    assert json.loads((tmp_path / "run.json").read_text())["notes"] == [
        next(line for line in [text[text.index("int8-allreduce sends"):text.index("int16.") + 6]])]
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert summary["bits_per_param_up"].tolist() == [32.0]


def test_a_hier_transport_on_one_worker_per_node_says_its_levels_collapse(tmp_path, capsys):
    """1gbe has one worker per node: hier:a2a-1bit has no node level and runs a2a-1bit flat, which
    the bench used to accept without a word (the multi-node case prints its note)."""
    code, out, err = run_cli([*TINY_BENCH, "-s", "dlion-mavo@hier:a2a-1bit", "--network", "1gbe",
                              "--out", tmp_path / "r"], capsys)
    assert code == 0, err
    text = " ".join(out.split())
    assert ("hier:a2a-1bit: one worker per node on this network, so the two levels collapse to one: a2a-1bit "
            "runs flat across the 2 workers") in text


def test_a_measured_bench_marks_a_network_left_at_its_default(tmp_path, monkeypatch):
    """On gloo without --network the plan says its network was not chosen (NetworkPlan.given), so
    run.json and the reports can leave the model's error out; --network or a --config key is a
    choice. The mark survives the pickling that hands the plan to a spawned rank."""
    import pickle

    from lionsim.cli import bench_cmd

    seen = []
    monkeypatch.setattr(bench_cmd, "_run_distributed", lambda plan, *args, **kwargs: seen.append(plan))
    base = ["bench", "-w", "mlp", "-n", "2", "--steps", "1", "-s", "adamw", "--backend", "gloo"]
    (tmp_path / "run.toml").write_text('network = "1gbe"\n')
    for extra in ([], ["--network", "1gbe"], ["--config", str(tmp_path / "run.toml")]):
        with pytest.raises(SystemExit) as exit_info:
            main([*base, *extra, "--out", str(tmp_path / f"out{len(seen)}")])
        assert exit_info.value.code == 0
    assert [plan.network.given for plan in seen] == [False, True, True]
    assert pickle.loads(pickle.dumps(seen[0])).network.given is False
    assert pickle.loads(pickle.dumps(seen[1])).network.given is True


def test_a_replay_of_a_measured_run_without_network_leaves_it_a_default(tmp_path, monkeypatch):
    """run.json records the default's name in its config (network = 1gbe) and network_given false:
    `--config DIR/run.json` (a replay, or --resume) read the name as chosen, and the model's error
    against a link never crossed came back."""
    from lionsim.cli import bench_cmd

    seen = []
    monkeypatch.setattr(bench_cmd, "_run_distributed", lambda plan, *args, **kwargs: seen.append(plan))
    config = {"workload": "mlp", "workers": 2, "steps": 1, "strategy": ["adamw"], "backend": "gloo",
              "network": "1gbe"}
    for given in (False, True):
        record = tmp_path / f"given{given}" / "run.json"
        record.parent.mkdir()
        record.write_text(json.dumps({"command": "bench", "config": config, "network_given": given}))
        with pytest.raises(SystemExit) as exit_info:
            main(["bench", "--config", str(record), "--out", str(tmp_path / f"out{given}")])
        assert exit_info.value.code == 0
    assert [plan.network.given for plan in seen] == [False, True]
    assert seen[0].network.network.name == "1gbe"  # the same preset prices it


def test_resume_with_overwrite_is_refused_before_anything_runs(tmp_path, capsys, monkeypatch):
    """--resume --overwrite on an interrupted run resumed and ignored --overwrite: now one line,
    exit 2, and the interrupted run's files untouched."""
    from lionsim.cli import bench_cmd
    from tests.helpers.cli import one_line_exit_2

    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json").write_text(json.dumps({"command": "bench", "status": "interrupted"}))
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    monkeypatch.setattr(bench_cmd, "_run_distributed", lambda *a, **k: pytest.fail("ran"))
    for flag in ("--overwrite", "--overwrite-sweep"):
        one_line_exit_2(["bench", "-w", "mlp", "--steps", "1", "--resume", flag, "--out", str(out)], capsys,
                        f"--resume continues the run in --out and {flag} replaces it: pass one of them")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


@pytest.mark.parametrize(("hyper", "message"), [
    ('{"lr": -1}', "bad --hyper: key 'lr' is not a run of this command; accepted: the run names (adamw, "
                   'dlion-mavo@a2a-1bit), each with an object of its hyperparameters, e.g. {"adamw": {"lr": 0.001}}'),
    ('{"dlion-mavo": 0.1}', "bad --hyper: run 'dlion-mavo' maps to 0.1, not an object"),
    ("[1]", "bad --hyper '[1]': not a JSON object"),
])
def test_a_bad_hyper_names_the_bad_key_and_the_runs(hyper, message, capsys):
    """--hyper '{"lr": -1}' said only "accepted: a JSON object of objects": now the key that is no run."""
    from tests.helpers.cli import one_line_exit_2

    for command in ("bench", "sweep"):
        one_line_exit_2([command, "-w", "mlp", "--steps", "1", "-s", "adamw,dlion-mavo@a2a-1bit", "--hyper", hyper],
                        capsys, message)


def test_an_interruption_after_the_files_are_written_says_so(tmp_path, capsys, monkeypatch):
    """A KeyboardInterrupt while the summary table printed, after every run was published, said
    "no results were written; DIR still holds its previous results". The reference: steps.csv
    on disk, with every step of the run."""
    import lionsim.reports
    from tests.helpers.cli import interrupted_while_printing

    out = tmp_path / "o"
    interrupted_while_printing([*TINY_BENCH, "-s", "adamw"], (lionsim.reports, "summary_table"), out, capsys,
                               monkeypatch, progress=True)
    assert pd.read_csv(out / "steps.csv").step.max() == 2
    assert json.loads((out / "run.json").read_text())["status"] != "interrupted"
