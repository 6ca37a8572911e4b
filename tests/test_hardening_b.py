"""Issue 12, part B: all-or-nothing outputs, the memory guard, the umask, --eval-samples,
tables in pipes and --format, the --transport rule, bits that count momentum sync, small edges."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import stat
from pathlib import Path

import pandas as pd
import pytest

from lionsim.cli.app import main
from lionsim.errors import LionsimError
from tests.workloads.test_data import write_cifar

TINY = ["bench", "-w", "mlp", "--model-size", "tiny", "--steps", "2", "-n", "2", "--eval-every", "1"]


def run(capsys, *argv) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(argv))
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """One tiny bench (two runs, momentum sync every 2 steps), written once for the tests below."""
    out = tmp_path_factory.mktemp("run") / "r"
    with pytest.raises(SystemExit) as e:
        main([*TINY, "-s", "dlion-mavo,adamw", "--momentum-sync", "every:2", "--out", str(out)])
    assert e.value.code == 0
    return out


def snapshot(directory) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())} if directory.exists() else {}


def full_disk_after(monkeypatch, calls: int) -> None:
    """savefig fills the disk on its `calls`-th call (the earlier files are written)."""
    from matplotlib.figure import Figure

    real, count = Figure.savefig, {"n": 0}

    def savefig(self, *args, **kwargs):
        count["n"] += 1
        if count["n"] >= calls:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)


# --- item 2: a full disk leaves --out as it was; one line, exit 2 ----------------------------------


@pytest.mark.slow
def test_full_disk_during_bench_leaves_the_previous_run_and_no_staging(tmp_path, monkeypatch, capsys, finished_run):
    out = tmp_path / "r"
    out.mkdir()
    (out / "steps.csv").write_text("previous\n")  # a previous run's file, which --overwrite may replace
    before = snapshot(out)
    full_disk_after(monkeypatch, 3)
    code, _, err = run(capsys, *TINY, "-s", "adamw", "--out", str(out), "--overwrite")
    # (the progress lines of the finished training come first, on stderr)
    assert code == 2 and err.count("error:") == 1 and "Traceback" not in err
    last = err.splitlines()[-1]
    assert last.startswith(f"error: no space left on the device writing {out}: the results are kept in "), last
    kept = last.split("the results are kept in ")[1].split(" (")[0]
    assert sorted(p.name for p in Path(kept).iterdir()) == ["run.json", "steps.csv", "summary.csv"]
    shutil.rmtree(kept)
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]  # no .r.partial left


@pytest.mark.slow
@pytest.mark.parametrize("command", ["plot", "report"])
def test_full_disk_while_redrawing_replaces_no_file(tmp_path, monkeypatch, capsys, finished_run, command):
    import shutil

    run_dir = tmp_path / "r"
    shutil.copytree(finished_run, run_dir)
    before = snapshot(run_dir)
    full_disk_after(monkeypatch, 4)
    code, _, err = run(capsys, command, str(run_dir))
    assert code == 2 and err.count("\n") == 1 and "no space left" in err
    assert snapshot(run_dir) == before  # the first plots were staged, never published


def test_full_disk_during_comm_out_writes_nothing(tmp_path, monkeypatch, capsys):
    full_disk_after(monkeypatch, 2)
    code, _, err = run(capsys, "comm", "--sizes", "1KB:4KB", "--out", str(tmp_path / "c"))
    assert code == 2 and "no space left" in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_write_run_with_a_full_disk_part_way_keeps_the_old_files(tmp_path, monkeypatch, finished_run):
    from lionsim.reports import files

    steps, summary, meta = files.load_run(finished_run)
    out = tmp_path / "r"
    files.write_run(out, steps, summary, meta)
    before = snapshot(out)
    real = files._stage

    def stage(path, write, binary=False):
        if path.name == files.META_FILE:
            raise files.write_failed(path, OSError(errno.ENOSPC, "full"))
        return real(path, write, binary)

    monkeypatch.setattr(files, "_stage", stage)
    with pytest.raises(LionsimError, match="no space left"):
        files.write_run(out, steps.assign(loss=steps["loss"] + 1), summary, meta)
    assert snapshot(out) == before and not [p for p in out.iterdir() if p.name.startswith(".")]


# --- item 3: the memory guard ---------------------------------------------------------------------


@pytest.mark.parametrize("argv", [
    ["bench", "-w", "vit", "-b", "100000", "-n", "2", "--steps", "1", "-s", "adamw"],
    ["bench", "-n", "100000", "-w", "mlp", "--steps", "1"],
    ["sweep", "--workload", "mlp", "--workers", "2,100000", "--steps", "1", "-s", "adamw"],
])
def test_a_run_that_does_not_fit_stops_before_allocating(tmp_path, monkeypatch, capsys, argv):
    from lionsim.training import memory, runner

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(memory, "available_memory", lambda: 16 * 10**9)
    monkeypatch.setattr(runner.Runner, "__init__", lambda *a, **k: pytest.fail("the run started"))
    code, _, err = run(capsys, *argv, "--out", "o")
    assert code == 2 and err.count("\n") == 1
    assert "needs about" in err and "16 GB is available" in err
    assert list(tmp_path.iterdir()) == []


def test_memory_estimate_grows_with_workers_and_batch_and_small_runs_fit():
    from lionsim.training.memory import check_memory, estimate_memory
    from lionsim.workloads import WorkloadConfig

    small = estimate_memory(WorkloadConfig(name="mlp", workers=2, batch_size=32))
    assert small.total < 10**8
    assert estimate_memory(WorkloadConfig(name="mlp", workers=200, batch_size=32)).workers == 100 * small.workers
    vit = estimate_memory(WorkloadConfig(name="vit", workers=2, batch_size=1000))
    assert vit.activations == 10 * estimate_memory(WorkloadConfig(name="vit", workers=2, batch_size=100)).activations
    check_memory(WorkloadConfig(name="mlp", workers=2), available=10**9)
    with pytest.raises(LionsimError, match="2 at once"):
        check_memory(WorkloadConfig(name="mlp", workers=2), processes=2, available=small.total)


# --- item 4: the umask --------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o027, 0o640)])
def test_every_file_written_honours_the_umask(tmp_path, capsys, finished_run, mask, mode):
    import shutil

    run_dir = tmp_path / "r"
    shutil.copytree(finished_run, run_dir)
    old = os.umask(mask)
    try:
        run(capsys, "plot", str(run_dir))
        run(capsys, "report", str(run_dir))
        run(capsys, "comm", "--sizes", "1KB:2KB", "--out", str(tmp_path / "c"))
    finally:
        os.umask(old)
    written = [p for p in run_dir.iterdir() if p.suffix in (".png", ".svg", ".md")]  # redrawn by plot, report
    written += list((tmp_path / "c").iterdir())
    assert {p.suffix for p in written} == {".png", ".svg", ".csv", ".md"}
    assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in written} == {oct(mode)}


# --- item 5: --eval-samples -----------------------------------------------------------------------


def cifar_bench(tmp_path, capsys, *extra):
    root = write_cifar(tmp_path / "cifar", n=8)  # 40 training, 8 test images
    out = tmp_path / "out"
    code, stdout, err = run(capsys, "bench", "-w", "vit", "--model-size", "tiny", "--data", str(root), "-n", "2",
                            "-b", "4", "--steps", "1", "-s", "adamw", "--out", str(out), *extra)
    return code, stdout, err, out


@pytest.mark.slow
def test_a_small_cifar_test_set_is_used_whole_by_default_and_run_json_says_so(tmp_path, capsys):
    code, stdout, err, out = cifar_bench(tmp_path, capsys)
    assert code == 0, err
    record = json.loads((out / "run.json").read_text())
    assert record["evaluation"]["samples"] == 8 and record["config"]["eval_samples"] is None
    assert "evaluated on 8 held-out samples" in stdout


@pytest.mark.slow
@pytest.mark.parametrize("given, used", [("all", 8), ("5", 5)])
def test_eval_samples_all_or_a_count(tmp_path, capsys, given, used):
    code, _, err, out = cifar_bench(tmp_path, capsys, "--eval-samples", given)
    assert code == 0, err
    record = json.loads((out / "run.json").read_text())
    assert record["evaluation"]["samples"] == used
    assert record["config"]["eval_samples"] == ("all" if given == "all" else used)


@pytest.mark.parametrize("given, message", [("9", "--eval-samples 9: the CIFAR-10 test set in .* holds 8"),
                                            ("0", "bad --eval-samples 0"), ("some", "bad --eval-samples 'some'")])
def test_bad_eval_samples_name_the_option(tmp_path, capsys, given, message):
    import re

    code, _, err, out = cifar_bench(tmp_path, capsys, "--eval-samples", given)
    assert code == 2 and re.search(message, err) and err.count("\n") == 1 and not out.exists()


def test_generated_data_scores_the_default_or_the_count():
    from lionsim.workloads import WorkloadConfig, build_workload

    kw = dict(name="mlp", workers=2, batch_size=8, size="tiny", train_size=256)
    assert build_workload(WorkloadConfig(**kw)).eval_size == 1024
    assert build_workload(WorkloadConfig(**kw, eval_samples=100)).eval_size == 100


# --- item 8: tables in pipes, --format ------------------------------------------------------------


@pytest.mark.parametrize("command", ["networks", "strategies", "workloads"])
def test_listings_fit_80_columns_with_whole_headers(capsys, command):
    code, out, _ = run(capsys, command)
    assert code == 0 and max(map(len, out.splitlines())) <= 80 and "…" not in out


@pytest.mark.parametrize("command, key", [("networks", "bandwidth_GBps"), ("strategies", "bits_per_param_up"),
                                          ("workloads", "summary")])
def test_listings_as_csv_and_json(capsys, command, key):
    import io

    code, out, _ = run(capsys, command, "--format", "csv")
    assert code == 0 and key in pd.read_csv(io.StringIO(out)).columns
    code, out, _ = run(capsys, command, "--format", "json")
    assert code == 0 and key in json.loads(out)[0]


@pytest.mark.slow
def test_bench_format_json_prints_the_summary_alone_on_stdout(tmp_path, capsys):
    code, out, err = run(capsys, *TINY, "-s", "adamw", "--out", str(tmp_path / "o"), "--format", "json")
    assert code == 0
    rows = json.loads(out)
    assert [r["run"] for r in rows] == ["adamw@fp32-allreduce"] and "wrote" in err


def test_progress_lines_off_a_terminal_go_to_stderr(monkeypatch, capsys):
    from rich.console import Console

    from lionsim.cli import progress

    monkeypatch.setattr(progress, "LOG_EVERY_S", 0.0)
    with progress.step_progress(Console(file=open(os.devnull, "w")), ["a@b"], 2) as update:
        update("a@b", 1, 1.5)
    out, err = capsys.readouterr()
    assert out == "" and "run 1/1 a@b step 1/2 loss 1.5000" in err


# --- item 9: one --transport rule ----------------------------------------------------------------


def test_transport_is_one_rule_for_named_and_default_strategies():
    from lionsim.bench import DEFAULT_STRATEGIES
    from lionsim.runs import parse_runs

    named = parse_runs(["adamw", "dlion-mavo"], "a2a-1bit")
    assert [r.label for r in named] == ["adamw@fp32-allreduce", "dlion-mavo@a2a-1bit"]
    default = parse_runs(list(DEFAULT_STRATEGIES), "a2a-1bit")
    assert default[0].label == "adamw@fp32-allreduce"  # fits none of adamw's: its default, as when named
    assert [r.label for r in default].count("dlion-mavo@a2a-1bit") == 1  # the same run once, not "given twice"
    for specs in (["adamw"], ["adamw", "lion"]):  # nobody can use it: an error, named or not
        with pytest.raises(LionsimError, match="cannot use transport 'a2a-1bit'"):
            parse_runs(specs, "a2a-1bit")


# --- items 10, 11: bits count momentum sync, wire_bytes are integers per step --------------------


def test_bits_count_momentum_sync_and_wire_bytes_are_whole(finished_run):
    steps = pd.read_csv(finished_run / "steps.csv")
    summary = pd.read_csv(finished_run / "summary.csv")
    mavo = steps[steps.strategy == "dlion-mavo"].set_index("step")
    assert mavo.loc[2, "wire_bytes"] > 4 * mavo.loc[1, "wire_bytes"]  # step 2 also averages the momentum
    assert mavo.loc[2, "bits_per_param_up"] > mavo.loc[1, "bits_per_param_up"]
    assert steps["wire_bytes"].dtype.kind == "i"
    row = summary[summary.strategy == "dlion-mavo"].iloc[0]
    assert row["bits_per_param_up"] == pytest.approx(mavo["bits_per_param_up"].mean())
    assert row["wire_bytes"] == pytest.approx(mavo["wire_bytes"].mean())  # the summary's is the mean


# --- item 17 --------------------------------------------------------------------------------------


def test_a_truncated_steps_csv_says_so(tmp_path, capsys, finished_run):
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    text = (finished_run / "steps.csv").read_text()
    (run_dir / "steps.csv").write_text(text[: len(text) - 40])
    code, _, err = run(capsys, "plot", str(run_dir))
    assert code == 2 and "truncated or corrupt" in err


def test_a_nan_loss_is_called_not_finite(tmp_path, capsys, finished_run):
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    steps = pd.read_csv(finished_run / "steps.csv")
    steps["loss"] = steps["loss"].astype(object)
    steps.loc[1, "loss"] = "nan"
    steps.to_csv(run_dir / "steps.csv", index=False)
    code, _, err = run(capsys, "plot", str(run_dir))
    assert code == 2 and "not a finite number in column loss" in err and "non-numeric" not in err


def test_a_one_step_run_draws_its_loss_as_a_point(tmp_path, monkeypatch, finished_run):
    from lionsim.reports import files
    from lionsim.reports.plots import run as run_plots

    steps, summary, _ = files.load_run(finished_run)
    one = steps[steps.step == 1].reset_index(drop=True)
    figures = []
    monkeypatch.setattr(run_plots, "save", lambda fig, path: figures.append((path.name, fig)) or [])
    from lionsim.reports.summary import summarize

    run_plots.plot_run(tmp_path, one, summarize(one))
    fig = dict(figures)["loss_vs_step.png"]
    markers = [line.get_marker() for line in fig.axes[0].get_lines() if len(line.get_xdata()) == 1]
    assert "o" in markers


# --- issue 13 (new-user tester): listed spellings, 80-column tables, wording ---------------------


def test_network_and_workload_names_are_recorded_in_their_listed_spelling(tmp_path):
    from lionsim.bench import BenchConfig
    from lionsim.sweep.cells import network_stem
    from lionsim.sweep.grid import Grid, check_grows

    cfg = BenchConfig(network="10GbE", workload="MLP")
    assert (cfg.network, cfg.workload) == ("10gbe", "mlp")
    cfg.network = "IB-HDR"
    cfg.validate()
    assert cfg.network == "ib-hdr"
    profile = tmp_path / "My.toml"
    assert BenchConfig(network=str(profile)).network == str(profile)  # a file stays as given
    grid = Grid.parse(workload=["MLP"], workers=["4"], network=["10GbE,IB-HDR"], seed=["0"], strategies=["lion"],
                      transport=None)
    assert grid.to_dict()["network"] == ["10gbe", "ib-hdr"] and grid.workloads == ("mlp",)
    assert network_stem("10GbE") == "10gbe"
    with pytest.raises(LionsimError, match="10gbe given twice"):
        Grid.parse(workload=["mlp"], workers=["4"], network=["10gbe,10GbE"], seed=["0"], strategies=["lion"],
                   transport=None)
    check_grows({"network": ["10GbE"], "workload": ["MLP"]}, grid.to_dict(), "x")  # an older sweep.json


@pytest.mark.slow
def test_bench_run_json_and_steps_csv_carry_the_listed_network(tmp_path, capsys):
    out = tmp_path / "r"
    code, _, err = run(capsys, *TINY, "-s", "adamw", "--network", "10GbE", "--out", str(out))
    assert code == 0, err
    meta = json.loads((out / "run.json").read_text())
    assert meta["config"]["network"] == "10gbe"
    assert set(pd.read_csv(out / "steps.csv")["network"]) == {"10gbe"}


@pytest.mark.parametrize("option, example", [("--network", "1gbe,10gbe"), ("--workload", "mlp,vit"),
                                             ("--workers", "4,8,16"), ("--seed", "0,1,2")])
def test_an_empty_axis_gives_an_example_of_its_own_kind(option, example):
    from lionsim.sweep.grid import split_items

    with pytest.raises(LionsimError, match=f"a comma list like {example}"):
        split_items(option, [""])


def test_comm_table_fits_80_columns_without_cutting_a_number(capsys):
    code, out, _ = run(capsys, "comm", "--network", "1gbe", "--sizes", "1KB:4GB:x16", "--workers", "1024")
    assert code == 0 and max(map(len, out.splitlines())) <= 80 and "…" not in out
    assert any(re.fullmatch(r"\d{1,3}(,\d{3}){2}", token) for token in out.split())  # millions of us, whole


def test_estimate_tables_fit_80_columns_and_fold_runs_at_boundaries(capsys):
    code, out, _ = run(capsys, "estimate", "--model", "gpt2-345m", "--tokens-per-worker", "8192", "--workers", "16",
                       "--network", "10gbe", "-s", "adamw,lion,dgc,dlion-mavo@a2a-1bit", "--sweep",
                       "bandwidth=0.1:100:4")
    lines = out.splitlines()
    assert code == 0 and max(map(len, lines)) <= 80 and "…" not in out
    assert any(line.split()[:1] == ["@sparse-allgather"] for line in lines)  # whole, on its own line
    assert "local: encode + decode + update" in " ".join(out.split())  # the fold is in the footnote


def test_bench_summary_folds_run_labels_only_at_the_at_sign():
    """Issue 19: `@packed-` / `allreduce` read as two words: a name is never split; the run column
    widens to the longest name instead."""
    from lionsim.reports.tables import fold_run, run_width

    assert fold_run("dgc*", "sparse-allgather") == "dgc*\n@sparse-allgather"
    assert fold_run("lion", "fp32-allreduce") == "lion\n@fp32-allreduce"
    assert run_width([("lion*", "fp32-allreduce"), ("lioncub-ternary", "packed-allreduce")], 15) == 17


def test_sweep_table_shows_accuracy_as_percent():
    from lionsim.cli.sweep_view import sweep_table
    from rich.console import Console

    summary = pd.DataFrame([{"workload": "mlp", "run": "dgc@sparse-allgather", "workers": 2, "network": "10gbe",
                             "seed": 0, "final_loss": 1.0, "final_eval_acc": 0.5873, "step_s": 1.5, "speedup": 1.0}])
    console = Console(width=80, record=True)
    console.print(sweep_table(summary))
    text = console.export_text()
    assert "58.7%" in text and "0.587" not in text and "1,500" in text and "@sparse-\n" not in text


def test_resume_with_a_new_lr_says_default_there(tmp_path):
    from lionsim.config.bench import BenchConfig
    from lionsim.config.sweep import SweepConfig, plan_sweep
    from lionsim.sweep import Grid

    grid = Grid.parse(workload=["mlp"], workers=["2"], network=["1gbe"], seed=["0"], strategies=["adamw"],
                      transport=None)
    old = plan_sweep(SweepConfig(grid=grid, bench=BenchConfig(), jobs=1, out=tmp_path), train=False).record(None)
    new = plan_sweep(SweepConfig(grid=grid, bench=BenchConfig(lr=0.01), jobs=1, out=tmp_path), train=False)
    with pytest.raises(LionsimError, match=r"\(default there, 0.01 now\)"):
        new.check_resume(old, tmp_path / "sweep.json")


def test_a_speedup_within_half_a_percent_is_level_not_a_win():
    from lionsim.estimate.sweep import Sweep, crossovers

    def frame(speedups):
        return pd.DataFrame([{"strategy": "lion", "transport": "t", "sweep_value": v, "speedup": s,
                              "baseline": "adamw@t"} for v, s in zip((1, 2, 4), speedups)])

    assert crossovers(frame([1.001, 0.998, 1.004]), Sweep("bandwidth", (1, 2, 4)))["wins"].tolist() == ["level"]
    assert crossovers(frame([1.2, 1.001, 1.1]), Sweep("bandwidth", (1, 2, 4)))["wins"].tolist() == ["everywhere"]
    got = crossovers(frame([0.5, 1.0, 2.0]), Sweep("bandwidth", (1, 2, 4)))
    assert got["wins"].tolist() == ["above"] and got["crossover"].iloc[0] == pytest.approx(2.0)
