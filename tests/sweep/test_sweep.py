"""`lionsim sweep`: grid parsing and bad input, every cell once, network reuse equal to a direct
bench, resume after interrupts (mid-cell and mid-write), and --jobs 2 equal to --jobs 1.

Times are deterministic here (--compute h100, the sim default), so whole CSVs are compared."""

import io
import json
import shutil
import signal
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest

import lionsim.sweep.tables as tables
import lionsim.sweep.train as train
from lionsim.cli.app import main
from lionsim.cli.sweep_view import SweepDisplay
from lionsim.errors import LionsimError
from lionsim.ranges import MAX_SEED, SEED, WORKERS
from lionsim.sweep.grid import Grid, parse_ints, split_items
from lionsim.whole import MAX_WORKERS
from tests.helpers.cli import run_cli, table_text
from tests.helpers.sweeps import sweep_files

RUNS = ["--strategy", "adamw", "--strategy", "dlion-mavo"]
SWEEP = ["sweep", "--workload", "mlp", "--model-size", "tiny", "--workers", "2", "--network", "1gbe,10gbe",
         "--steps", "4", "--eval-every", "2", "--batch-size", "8", *RUNS]
CELLS = [f"mlp-w2-{net}-s0-{run}" for net in ("1gbe", "10gbe")
         for run in ("adamw@fp32-allreduce", "dlion-mavo@int8-allreduce")]


def sweep(capsys, out, *extra):
    with pytest.raises(SystemExit) as done:
        main([*SWEEP, "--out", str(out), *extra])
    captured = capsys.readouterr()
    return done.value.code, captured.out, captured.err


@pytest.fixture(scope="session")
def reference(tmp_path_factory):
    """An uninterrupted sweep with --jobs 1, counting the trainings."""
    out = tmp_path_factory.mktemp("sweep") / "ref"
    trained = []
    real = train.Runner.run
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(train.Runner, "run", lambda self, *a, **k: trained.append(list(self.plan.choices.strategies))
                   or real(self, *a, **k))
        with pytest.raises(SystemExit) as done:
            main([*SWEEP, "--out", str(out)])
    assert done.value.code == 0
    return out, trained


# --- grid parsing and bad input ---

def test_axes_take_comma_lists_and_toml_arrays():
    assert split_items("--workers", ["4,8", 16]) == ["4", "8", "16"]
    assert parse_ints("--seed", [0, "1, 2"], 0, MAX_SEED, SEED) == [0, 1, 2]
    grid = Grid.parse(workload=["mlp"], workers=[2, "4"], network=["1gbe,10gbe"], seed=["0"],
                      strategies=["adamw", "dlion-mavo@a2a-1bit"], transport=None)
    assert grid.to_dict() == {"workload": ["mlp"], "workers": [2, 4], "network": ["1gbe", "10gbe"], "seed": [0],
                              "runs": ["adamw@fp32-allreduce", "dlion-mavo@a2a-1bit"]}
    with pytest.raises(LionsimError, match="given twice"):
        parse_ints("--workers", ["4", "04"], 1, MAX_WORKERS, WORKERS)


@pytest.mark.parametrize("bad, says", [
    (["--workers", "2,,4"], "empty item"),
    (["--workers", "0"], "bad --workers 0"),
    (["--workers", "2,2"], "bad --workers 2,2: 2 given twice; accepted: a comma list like 4,8,16, each value once"),
    (["--network", "1gbe,nowhere"], "unknown network 'nowhere'"),
    (["--workload", "mlp,nope"], "unknown workload 'nope'"),
    (["--strategy", "bogus"], "unknown strategy 'bogus'"),
    (["--strategy", "adamw"], "strategy adamw@fp32-allreduce given twice"),
    (["--seed", "x"], "bad --seed x: not a whole number; accepted: a whole number from 0 to "),
    (["--jobs", "0"], "bad --jobs 0"),
    (["--threads", "100000"], "bad --threads 100000; accepted: a whole number from 1 to 1,024"),
    (["--backend", "gloo"], "sim backend only"),
    (["--baseline", "lion"], "unknown baseline 'lion'"),
])
def test_bad_input_is_one_line_and_writes_nothing(bad, says, tmp_path, capsys):
    code, out, err = sweep(capsys, tmp_path / "s", *bad)
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("option", ["--workers", "--seed"])
def test_a_value_of_100_digits_or_more_is_refused_in_the_words_bench_uses(option, tmp_path, capsys):
    """sweep called 10**400 "not a whole number" where bench and estimate say "100 digits or more":
    read_whole's own reason is passed on (the reference: bench's line for the same value)."""
    from tests.helpers.cli import one_line_exit_2

    value = "1" + "0" * 400
    said = one_line_exit_2(["sweep", "--workload", "mlp", option, value, "--out", tmp_path / "s"], capsys)
    bench = one_line_exit_2(["bench", "-w", "mlp", option, value, "--out", tmp_path / "b"], capsys)
    assert said == bench and f"bad {option} {value}: 100 digits or more; accepted: " in said, said
    assert one_line_exit_2(["sweep", "--workload", "mlp", option, "2.5", "--out", tmp_path / "s"], capsys) == \
        one_line_exit_2(["bench", "-w", "mlp", option, "2.5", "--out", tmp_path / "b"], capsys)


def test_the_checks_before_torch_and_the_grid_refuse_the_first_bad_axis_alike():
    """check_axes (before torch) checks the lrs and leaves the runs to Grid.parse, which checked the
    runs before the lrs: a bad strategy and a bad lr were refused by the lr in one path, by the
    strategy in the other. Grid.parse checks the runs last now, so both name the lr."""
    from lionsim.sweep.grid import check_axes

    axes = dict(workload=["mlp"], workers=["2"], network=["1gbe"], seed=["0"], lr=["-1"])
    with pytest.raises(LionsimError) as early:
        check_axes(**axes)
    with pytest.raises(LionsimError) as late:
        Grid.parse(**axes, strategies=["bogus"], transport=None)
    assert str(late.value) == str(early.value) and str(early.value).startswith("bad --lr -1"), str(late.value)


# --- every cell once; one training per unit; reuse equals a direct bench ---

@pytest.mark.slow
def test_every_cell_once_and_one_training_per_unit(reference):
    out, trained = reference
    assert trained == [["adamw@fp32-allreduce"], ["dlion-mavo@int8-allreduce"]]  # 4 cells, 2 trainings
    assert sorted(p.name for p in (out / "cells").iterdir()) == sorted(CELLS)
    summary = pd.read_csv(out / "sweep_summary.csv")
    assert list(summary.cell) == CELLS  # grid order, each once
    assert list(summary.columns[:7]) == ["cell", "workload", "seed", "workers", "network", "bandwidth_GBps", "alpha_us"]
    assert list(summary.baseline) == ["adamw@fp32-allreduce"] * 4 and list(summary.speedup[[0, 2]]) == [1.0, 1.0]
    steps = pd.read_csv(out / "sweep_steps.csv")
    assert steps.groupby("cell").step.apply(list).to_dict() == {c: [1, 2, 3, 4] for c in CELLS}
    record = json.loads((out / "sweep.json").read_text())
    assert record["kind"] == "sweep" and record["cells"] == 4 and record["grid"]["network"] == ["1gbe", "10gbe"]


@pytest.mark.slow
def test_a_reused_training_books_as_a_direct_bench(reference, tmp_path, capsys):
    out, _ = reference
    bench = tmp_path / "bench"
    with pytest.raises(SystemExit) as done:  # the second network's cell: booked from the first's training
        main(["bench", "--workload", "mlp", "--model-size", "tiny", "--workers", "2", "--network", "10gbe",
              "--steps", "4", "--eval-every", "2", "--batch-size", "8", "--strategy", "dlion-mavo", "--out", str(bench)])
    assert done.value.code == 0, capsys.readouterr().err
    cell = out / "cells" / "mlp-w2-10gbe-s0-dlion-mavo@int8-allreduce"
    for name in ("steps.csv", "summary.csv"):
        assert (cell / name).read_text() == (bench / name).read_text(), name
    meta = json.loads((cell / "run.json").read_text())
    assert meta["config"]["network"] == "10gbe" and meta["network"]["name"] == "10gbe"


# --- resume ---

@pytest.mark.slow
def test_resume_after_interrupts_mid_write_and_mid_cell(reference, tmp_path, capsys, monkeypatch):
    ref, _ = reference
    out = tmp_path / "s"
    real_write = tables.write_atomic
    hits = {"summary": 0}

    def half_then_ctrl_c(path, write, binary=False):
        if path.name == tables.SUMMARY_CSV:
            hits["summary"] += 1
            if hits["summary"] == 2:  # the second cell's rewrite: Ctrl-C half way through the file
                def half(f):
                    buffer = io.StringIO()
                    write(buffer)
                    f.write(buffer.getvalue()[: len(buffer.getvalue()) // 2])
                    raise KeyboardInterrupt
                return real_write(path, half, binary)
        return real_write(path, write, binary)

    monkeypatch.setattr(tables, "write_atomic", half_then_ctrl_c)
    code, _, err = sweep(capsys, out)
    errors = [line for line in err.splitlines() if not line.startswith("lionsim: ")]  # progress goes to stderr too
    assert code == 2 and "interrupted: 2 of 4 cells finished" in err and "rerun" in err and len(errors) == 1
    # the CSVs hold exactly the finished cells, whole; no temp file is left
    assert list(pd.read_csv(out / "sweep_summary.csv").cell) == CELLS[:1] + CELLS[2:3]
    assert not list(out.glob(".*"))
    monkeypatch.setattr(tables, "write_atomic", real_write)

    def ctrl_c_at_step_2(self, key, step, loss):
        if step == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(SweepDisplay, "step", ctrl_c_at_step_2)
    code, _, err = sweep(capsys, out)  # mid-cell: the second unit's training
    assert code == 2 and "interrupted: 2 of 4 cells finished" in err
    monkeypatch.undo()

    # what a SIGKILL mid-write leaves: a cell's staging directory and a CSV temp file
    (out / "cells" / f".{CELLS[1]}.partial").mkdir()
    (out / "cells" / f".{CELLS[1]}.partial" / "steps.csv").write_text("strategy,trans")
    (out / ".sweep_steps.csv.abc.tmp").write_text("cell,str")
    code, _, err = sweep(capsys, out)
    assert code == 0, err
    assert sweep_files(out) == sweep_files(ref)  # every cell once, the same values, CSVs and cells alike


@pytest.mark.slow
def test_resume_refuses_other_options_and_grows_the_grid(reference, tmp_path, capsys):
    ref, _ = reference
    code, _, err = sweep(capsys, ref, "--steps", "5")
    assert code == 2 and err.startswith("error: --steps differs") and len(err.splitlines()) == 1
    code, _, err = sweep(capsys, ref, "--network", "10gbe")
    assert code == 2 and "--network differs" in err and "lacks 1gbe" in err
    grown = tmp_path / "grown"
    (grown / "cells").mkdir(parents=True)
    (grown / "sweep.json").write_text((ref / "sweep.json").read_text())
    for cell in CELLS:
        shutil.copytree(ref / "cells" / cell, grown / "cells" / cell)
    code, out, err = sweep(capsys, grown, "--strategy", "lion")  # a third run: only its cells train
    assert code == 0, err
    assert "6 cells (1 training this run; 4 cells were already finished)" in " ".join(out.split())
    assert list(pd.read_csv(grown / "sweep_summary.csv").cell)[:2] == CELLS[:2]


@pytest.mark.slow
def test_a_grid_grown_then_interrupted_before_its_new_cells_shrinks_back(reference, tmp_path, capsys, monkeypatch):
    """A rerun that adds a seed records the grown grid before it trains; Ctrl-C before the new
    seed's first cell left the root refusing the command that made it ("--seed ... lacks 1"),
    though every finished cell is one that command computes. Now it resumes as the original,
    trains nothing and writes the uninterrupted sweep's files; a value that finished cells hold
    is still refused."""
    ref, _ = reference
    out = tmp_path / "grown"
    shutil.copytree(ref, out)

    def ctrl_c(self, key, step, loss):
        raise KeyboardInterrupt

    monkeypatch.setattr(SweepDisplay, "step", ctrl_c)
    code, _, err = sweep(capsys, out, "--seed", "0,1")
    assert code == 2 and "interrupted: 4 of 8 cells finished" in err, err
    monkeypatch.undo()
    code, printed, err = sweep(capsys, out)
    assert code == 0, err
    assert "every cell was already finished" in " ".join(printed.split())
    assert json.loads((out / "sweep.json").read_text())["grid"]["seed"] == [0]
    assert sweep_files(out) == sweep_files(ref)
    code, _, err = sweep(capsys, out, "--network", "10gbe")
    assert code == 2 and "it lacks 1gbe, which finished cells hold" in err and len(err.splitlines()) == 1, err


def test_a_resume_may_drop_only_grid_values_no_finished_cell_holds(tmp_path):
    """Each axis: a value of the recorded grid that the new grid lacks is refused exactly when a
    finished cell (a folder under ROOT/cells) holds it."""
    from lionsim.config.bench import BenchConfig
    from lionsim.config.sweep import SweepConfig, plan_sweep
    from lionsim.sweep import Grid

    small = dict(workload=["mlp"], workers=[2], network=["1gbe"], seed=[0], strategies=["adamw"])
    extra = dict(workload="vit", workers=4, network="10gbe", seed=1, strategies="lion")
    option = dict(workload="--workload", workers="--workers", network="--network", seed="--seed",
                  strategies="--strategy")
    for axis, value in extra.items():
        root = tmp_path / axis
        (root / "cells").mkdir(parents=True)
        grown = Grid.parse(**{**small, axis: [*small[axis], value]}, transport=None)
        record = plan_sweep(SweepConfig(grid=grown, bench=BenchConfig(model_size="tiny", steps=2), out=root),
                            train=False).record(None)
        planned = plan_sweep(SweepConfig(grid=Grid.parse(**small, transport=None),
                                         bench=BenchConfig(model_size="tiny", steps=2), out=root), train=False)
        kept = {**{k: v[0] for k, v in small.items()}, axis: value}  # the dropped value's one cell
        run = {"adamw": "adamw@fp32-allreduce", "lion": "lion@fp32-allreduce"}[kept["strategies"]]
        (root / "cells" / "mlp-w2-1gbe-s0-adamw@fp32-allreduce").mkdir()  # the kept value's cell finished
        planned.check_resume(record, root / "sweep.json")
        (root / "cells" / f"{kept['workload']}-w{kept['workers']}-{kept['network']}-s{kept['seed']}-{run}").mkdir()
        shown = run if axis == "strategies" else value
        with pytest.raises(LionsimError, match=f"^{option[axis]} differs .*: it lacks {shown}, which finished"):
            planned.check_resume(record, root / "sweep.json")


@pytest.mark.slow
def test_a_toml_config_gives_the_same_sweep(reference, tmp_path, capsys):
    ref, _ = reference
    config = tmp_path / "sweep.toml"
    config.write_text('workload = "mlp"\nmodel-size = "tiny"\nworkers = [2]\nnetwork = ["1gbe", "10gbe"]\n'
                      'steps = 4\neval-every = 2\nbatch-size = 8\nstrategy = ["adamw", "dlion-mavo"]\n')
    with pytest.raises(SystemExit) as done:
        main(["sweep", "--config", str(config), "--out", str(ref)])
    out = capsys.readouterr().out
    assert done.value.code == 0 and "every cell was already finished" in out


# --- parallel ---

@pytest.mark.slow
def test_jobs_2_writes_what_jobs_1_writes(reference, tmp_path, capsys):
    ref, _ = reference
    code, _, err = sweep(capsys, tmp_path / "j2", "--jobs", "2")
    assert code == 0, err
    assert sweep_files(tmp_path / "j2") == sweep_files(ref)


@pytest.mark.slow
def test_a_finished_sweep_rerun_with_jobs_trains_nothing(reference, tmp_path, capsys):
    ref, _ = reference
    shutil.copytree(ref, tmp_path / "again")
    code, out, err = sweep(capsys, tmp_path / "again", "--jobs", "2")
    assert code == 0, err
    assert "every cell was already finished" in " ".join(out.split())
    assert sweep_files(tmp_path / "again") == sweep_files(ref)


@pytest.mark.slow
def test_an_interrupt_while_drawing_plots_keeps_every_cell(reference, tmp_path, capsys, monkeypatch):
    import lionsim.reports.plots as plots

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(plots, "plot_dir", interrupted)
    ref, _ = reference
    code, _, err = sweep(capsys, tmp_path / "p")
    lines = [line for line in err.strip().splitlines() if line.startswith("error:")]
    assert code == 2 and len(lines) == 1 and "interrupted while drawing the plots: all 4 cells are kept" in lines[0]
    assert sweep_files(tmp_path / "p") == sweep_files(ref)


def test_a_unit_builds_and_trains_on_its_threads_only(monkeypatch):
    """Before, the workload's data was built on every core, so two jobs on two cores ran four
    threads that waited on each other; everything a unit does runs on --threads now."""
    import torch

    import lionsim.training.runner as runner
    from lionsim.config.bench import BenchConfig
    from lionsim.config.sweep import SweepConfig, plan_sweep

    seen = []
    real_build, real_train = runner.build_workload, runner.train_run
    monkeypatch.setattr(runner, "build_workload", lambda *a, **k: seen.append(torch.get_num_threads()) or real_build(*a, **k))
    monkeypatch.setattr(runner, "train_run", lambda *a, **k: seen.append(torch.get_num_threads()) or real_train(*a, **k))
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        grid = Grid.parse(workload=["mlp"], workers=[2], network=["1gbe"], seed=[0], strategies=["adamw"], transport=None)
        planned = plan_sweep(SweepConfig(grid=grid, bench=BenchConfig(model_size="tiny", steps=2, batch_size=8))).units[0]
        unit = planned.unit
        outcome = train.train_unit(train.UnitTask(unit.key, planned.plan, ((unit.cell("1gbe").id, "1gbe"),)))
        assert outcome.error is None and len(outcome.results) == 1
        assert seen == [1, 1] and torch.get_num_threads() == 2  # the caller's count is back
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("option, example", [("--network", "1gbe,10gbe"), ("--workload", "mlp,vit"),
                                             ("--workers", "4,8,16"), ("--seed", "0,1,2")])
def test_an_empty_axis_gives_an_example_of_its_own_kind(option, example):
    from lionsim.sweep.grid import split_items

    with pytest.raises(LionsimError, match=f"a comma list like {example}"):
        split_items(option, [""])


def test_sweep_table_shows_accuracy_as_percent():
    from rich.console import Console

    from lionsim.cli.sweep_view import sweep_table

    summary = pd.DataFrame([{"workload": "mlp", "run": "dgc@sparse-allgather", "workers": 2, "network": "10gbe",
                             "seed": 0, "final_loss": 1.0, "final_eval_acc": 0.5873, "step_s": 1.5, "speedup": 1.0}])
    console = Console(width=80, record=True)
    console.print(sweep_table(summary))
    text = console.export_text()
    assert "58.7%" in text and "0.587" not in text and "1,500" in text and "@sparse-\n" not in text


def test_sweep_table_has_a_title_saying_what_was_swept_and_how_many_cells():
    """The sweep table began with a blank line, where bench's names its run: now what was swept."""
    from lionsim.cli.sweep_view import sweep_table

    summary = pd.DataFrame([{"workload": "mlp", "run": run, "workers": workers, "network": "10gbe", "seed": 0,
                             "steps": 20, "final_loss": 1.0, "final_eval_acc": 0.5, "step_s": 0.001, "speedup": 1.0,
                             "cell": f"{run}-{workers}"}
                            for run in ("adamw@fp32-allreduce", "lion@fp32-allreduce") for workers in (2, 4)])
    from lionsim.cli.app import _Console

    shown = _Console(width=80, record=True, file=io.StringIO())  # as the CLI prints it
    shown.print(sweep_table(summary))
    first = shown.export_text().splitlines()[0].strip()
    assert first == "lionsim sweep: mlp, 2/4 workers, 10gbe, 2 runs, 1 seed, 20 steps: 4 cells"


def test_sweep_table_prints_speedup_as_bench_does():
    """The sweep table printed 1.31 where bench prints 1.31x (README: a row per cell, as bench)."""
    from lionsim.cli.sweep_view import sweep_table

    summary = pd.DataFrame([{"workload": "mlp", "run": run, "workers": 2, "network": "10gbe", "seed": 0,
                             "final_loss": 1.0, "final_eval_acc": 0.5, "step_s": step, "speedup": speedup}
                            for run, step, speedup in (("adamw@fp32-allreduce", 0.00131, 1.0),
                                                       ("lion@fp32-allreduce", 0.001, 1.31))])
    rows = [line.split() for line in table_text(sweep_table(summary)).splitlines()]
    assert [row[-1] for row in rows if row and row[0] in ("adamw", "lion")] == ["1.00x", "1.31x"]


def test_sweep_table_says_how_its_step_times_were_obtained(tmp_path):
    """Its caption said "each cell's run.json says how each part was obtained": now what its cells'
    run.json say, in a few words (comm on each row's network where the networks differ)."""
    from lionsim.cli.sweep_view import sweep_table
    from tests.helpers.timing import run_record

    summary = pd.DataFrame([{"workload": "mlp", "run": "adamw@fp32-allreduce", "workers": 2, "network": network,
                             "seed": 0, "final_loss": 1.0, "final_eval_acc": 0.5, "step_s": 0.001, "speedup": 1.0,
                             "cell": f"c-{network}"} for network in ("1gbe", "10gbe")])
    for network in ("1gbe", "10gbe"):
        (tmp_path / "cells" / f"c-{network}").mkdir(parents=True)
        (tmp_path / "cells" / f"c-{network}" / "run.json").write_text(json.dumps(run_record(network=network)))
    said = " ".join(table_text(sweep_table(summary, tmp_path)).split())
    assert ("step times modelled: comp on h100 (FLOPs at peak x mfu), enc/upd (memory passes at h100's "
            "bandwidth, at least 10 us a kernel), comm on each row's network (alpha-beta). loss:") in said, said
    one = " ".join(table_text(sweep_table(summary.iloc[:1], tmp_path)).split())
    assert "comm on 1gbe (alpha-beta)" in one
    (tmp_path / "cells" / "c-10gbe" / "run.json").unlink()  # a cell without its record: no claim
    assert "each cell's run.json says how each was obtained" in " ".join(table_text(sweep_table(summary, tmp_path)).split())


def test_sweep_takes_benchs_short_names(tmp_path, capsys):
    code, _, err = run_cli(["sweep", "-w", "mlp", "-n", "2", "--model-size", "tiny", "-b", "8", "--steps", "2",
                        "--eval-every", "2", "-s", "adamw", "--out", str(tmp_path / "s")], capsys)
    assert code == 0, err
    assert [p.name for p in (tmp_path / "s" / "cells").iterdir()] == ["mlp-w2-1gbe-s0-adamw@fp32-allreduce"]


def test_a_resume_clears_what_a_killed_run_left_half_written(tmp_path):
    from lionsim.sweep.store import CellStore

    store = CellStore(tmp_path)
    store.prepare()
    (tmp_path / ".sweep.csv.tmp").write_text("half")
    store.prepare()
    assert not (tmp_path / ".sweep.csv.tmp").exists()


def test_a_rerun_keeps_the_report_until_the_results_change_then_says_it_removed_it(reference, tmp_path, capsys):
    """A finished sweep rerun deleted the report.md `lionsim report` wrote, silently, though
    nothing it described had changed; a grown grid makes it stale: removed, in one line."""
    ref, _ = reference
    out = tmp_path / "again"
    shutil.copytree(ref, out)
    code, _, err = run_cli(["report", out], capsys)
    assert code == 0, err
    report = (out / "report.md").read_text()
    code, _, err = sweep(capsys, out)
    assert code == 0 and (out / "report.md").read_text() == report and "report.md" not in err, err
    code, _, err = sweep(capsys, out, "--network", "1gbe,10gbe,100gbe")
    said = f"removed {out}/report.md: it described the sweep before this run; `lionsim report {out}` writes it again"
    assert code == 0 and not (out / "report.md").exists(), err
    assert [line for line in err.splitlines() if "report.md" in line] == [said], err


def test_a_sweep_recorded_with_the_old_bucket_default_resumes(tmp_path):
    """A sweep begun while --bucket-mb's default was recorded as 25.0 resumes under a command that
    leaves it unset (null now: the same 25 MB); another size is still refused."""
    from lionsim.config.bench import BenchConfig
    from lionsim.config.sweep import SweepConfig, plan_sweep
    from lionsim.sweep import Grid

    grid = Grid.parse(workload=["mlp"], workers=[2], network=["1gbe"], seed=[0], strategies=["adamw"], transport=None)
    planned = plan_sweep(SweepConfig(grid=grid, bench=BenchConfig(model_size="tiny", steps=2), out=tmp_path), train=False)
    previous = planned.record(None)
    planned.check_resume({**previous, "bench": {**previous["bench"], "bucket_mb": 25.0}}, tmp_path)
    with pytest.raises(LionsimError, match=r"--bucket-mb differs from the sweep .* \(1.0 there, default now\)"):
        planned.check_resume({**previous, "bench": {**previous["bench"], "bucket_mb": 1.0}}, tmp_path)


@pytest.mark.slow  # a two-workload sweep trained, then one cell replayed (a few seconds)
def test_a_workload_files_cell_replays_with_its_own_model(tmp_path, capsys):
    """--model-size sizes the built-in workloads of a mixed sweep; a workload file's cell records the
    default, so its run.json replays (bench refuses a size for a file's own model)."""
    cnn = str(Path(__file__).resolve().parents[2] / "examples" / "plugins" / "cnn_workload.py") + ":make"
    out = tmp_path / "s"
    with pytest.raises(SystemExit) as done:
        main(["sweep", "--workload", f"mlp,{cnn}", "--model-size", "tiny", "--workers", "2", "--steps", "2",
              "--batch-size", "8", "-s", "adamw", "--out", str(out)])
    assert done.value.code == 0, capsys.readouterr().err
    (cell,) = [c for c in (out / "cells").iterdir() if c.name.startswith("cnn_workload")]
    assert json.loads((cell / "run.json").read_text())["config"]["model_size"] == "small"
    with pytest.raises(SystemExit) as done:
        main(["bench", "--config", str(cell / "run.json"), "--out", str(tmp_path / "again")])
    assert done.value.code == 0, capsys.readouterr().err


def test_a_shard_dealt_no_unit_says_so(tmp_path, capsys):
    """A grid of one training unit over two shards: shard 2 has no cell at all, which is not
    'every cell was already finished' (nothing was ever run)."""
    grid = ["sweep", "-w", "mlp", "--model-size", "tiny", "-n", "2", "-s", "adamw", "--steps", "2"]
    code, out, err = run_cli([*grid, "--shard", "2/2", "--out", str(tmp_path / "s")], capsys)
    said = " ".join(out.split())
    assert code == 0 and "shard 2/2: 0 cells (none of the grid's 1 training unit is dealt to this shard)" in said, said
    assert "already finished" not in said


def test_a_cell_finished_before_any_training_prints_no_eta(capsys):
    """A resumed or parallel sweep's first cell can finish before a training of this run has: no
    estimate yet, so no 'ETA -'; after one training, the estimate."""
    from types import SimpleNamespace

    from rich.console import Console

    view = SweepDisplay(Console(file=io.StringIO(), force_terminal=False))
    with view:
        view.started(total=4, finished=1, units=2, steps=4)
        cell = SimpleNamespace(id="mlp-w2-1gbe-s0-adamw@fp32-allreduce")
        view.cell_finished(cell, pd.DataFrame({"final_loss": [1.5]}), 2, 4)
        first = capsys.readouterr().err.strip().splitlines()[-1]
        view.unit_finished("a")
        view.cell_finished(cell, pd.DataFrame({"final_loss": [1.5]}), 3, 4)
        second = capsys.readouterr().err.strip().splitlines()[-1]
    assert "ETA" not in first and first.endswith("loss 1.5000 (0 s)"), first
    assert "ETA " in second, second


def _checked(workloads: str, eval_samples: int) -> None:
    """SweepConfig.validate of an mlp-sized grid over `workloads` with --eval-samples (nothing trains)."""
    from lionsim.config.bench import BenchConfig
    from lionsim.config.sweep import SweepConfig

    grid = Grid.parse(workload=[workloads], workers=["2"], network=["1gbe"], seed=["0"], strategies=["adamw"], transport=None)
    SweepConfig(grid=grid, bench=BenchConfig(model_size="tiny", eval_samples=eval_samples)).validate()


def test_eval_samples_is_checked_against_each_workload_of_the_grid_not_the_default():
    """gpt holds out more than vit (bench's default workload) generates: a sweep of gpt takes what
    bench -w gpt takes; a grid with a workload that holds out fewer is refused naming that one."""
    from lionsim.config.bench import BenchConfig
    from lionsim.workloads import workload_class

    gpt = BenchConfig(workload="gpt", model_size="tiny")
    vit = BenchConfig(workload="vit", model_size="tiny")
    limit = workload_class("gpt").heldout_limit(gpt.workload_config())
    between = workload_class("vit").heldout_limit(vit.workload_config()) + 1
    assert between <= limit  # a count gpt takes and vit refuses
    _checked("gpt", between)
    with pytest.raises(LionsimError, match=f"bad --eval-samples {between}: vit's"):
        _checked("gpt,vit", between)


def test_a_resume_with_other_options_names_every_one_and_the_ways_on(tmp_path):
    """Every option that differs from sweep.json is named with both values (not only the first),
    and the refusal says how to go on (sweep has no --overwrite-sweep, so it is not offered)."""
    from lionsim.cli.app import click_app
    from lionsim.config.bench import BenchConfig
    from lionsim.config.sweep import SweepConfig, plan_sweep
    from lionsim.sweep import Grid

    grid = Grid.parse(workload=["mlp"], workers=[2], network=["1gbe"], seed=[0], strategies=["adamw"], transport=None)
    planned = plan_sweep(SweepConfig(grid=grid, bench=BenchConfig(model_size="tiny", steps=2), out=tmp_path), train=False)
    previous = planned.record(None)
    then = {**previous, "bench": {**previous["bench"], "steps": 50, "lr": 0.01}}
    with pytest.raises(LionsimError) as err:
        planned.check_resume(then, tmp_path / "sweep.json")
    assert str(err.value) == (
        f"--lr, --steps differ from the sweep in {tmp_path / 'sweep.json'} (--lr: 0.01 there, default now; --steps: "
        f"50 there, 2 now); rerun with the same options to resume, or use a new --out (lionsim sweep never clears a "
        f"sweep root: delete {tmp_path} to start it over)")
    sweep_command = click_app().get_command(None, "sweep")
    assert "--overwrite-sweep" not in {o for p in sweep_command.params for o in p.opts}  # else offer it


def test_a_sweep_resumed_under_another_target_says_how_to_re_target_it_without_training(tmp_path):
    """Rerunning a finished sweep with another --target-loss was refused with no way on but training the
    grid again; its steps to target come from the loss curves, which estimate --from-run reads again."""
    from lionsim.config.bench import BenchConfig
    from lionsim.config.sweep import SweepConfig, plan_sweep
    from lionsim.sweep import Grid

    grid = Grid.parse(workload=["mlp"], workers=[2], network=["1gbe"], seed=[0], strategies=["adamw"], transport=None)
    before = plan_sweep(SweepConfig(grid=grid, bench=BenchConfig(model_size="tiny", steps=2), out=tmp_path),
                        train=False).record(None)
    now = plan_sweep(SweepConfig(grid=grid, bench=BenchConfig(model_size="tiny", steps=2, target_loss=2.1),
                                 out=tmp_path), train=False)
    where = tmp_path / "sweep.json"
    with pytest.raises(LionsimError, match=r"--target-loss differs from the sweep .*; to re-target its finished "
                                           rf"cells without training: lionsim estimate -m MODEL --from-run {tmp_path} "
                                           r"--target-loss 2.1$"):
        now.check_resume(before, where)
    with pytest.raises(LionsimError) as other:  # another option differing too: no such hint
        plan_sweep(SweepConfig(grid=grid, bench=BenchConfig(model_size="tiny", steps=3, target_loss=2.1),
                               out=tmp_path), train=False).check_resume(before, where)
    assert "estimate" not in str(other.value)


@contextmanager
def ctrl_c_after_step(step: int):
    """SIGINT to this process as the sweep's first unit finishes step `step` (once), this test's
    own handler taking the Ctrl-C the command hands back to its caller (lionsim.training.stop)."""
    sent, got = [], []
    real = SweepDisplay.step

    def then(self, key, i, loss):
        real(self, key, i, loss)
        if i == step and not sent:
            sent.append(key)
            signal.raise_signal(signal.SIGINT)

    previous = signal.signal(signal.SIGINT, lambda signum, frame: got.append(signum))
    SweepDisplay.step = then
    try:
        yield sent
    finally:
        SweepDisplay.step = real
        signal.signal(signal.SIGINT, previous)


def without_resume_notes(files: dict[str, str]) -> dict[str, str]:
    """sweep_files with run.json's note of a resume left out (a resumed bench's run.json has one too)."""
    out = {}
    for name, text in files.items():
        if name.endswith("run.json"):
            meta = json.loads(text)
            meta.pop("resumed", None)
            text = json.dumps(meta, sort_keys=True)
        out[name] = text
    return out


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_keeps_the_unit_under_ways_steps_and_the_rerun_continues_it(jobs, reference, tmp_path, capsys):
    """The first Ctrl-C stops the units under way at a step boundary and keeps their state, as
    bench does; the rerun continues them, and every file equals an uninterrupted sweep's. (It
    dropped their steps: the rerun trained them from step 1.)"""
    ref, _ = reference
    out = tmp_path / "s"
    with ctrl_c_after_step(2) as sent:
        code, _, err = sweep(capsys, out, "--jobs", jobs)
    # with --jobs 2 the workers' steps reach this process late: both units may have finished
    # before they saw the stop (the sweep then completes, exit 0), or stopped at any step
    assert code == 2 or (jobs == "2" and code == 0), err
    kept = list((out / ".units").iterdir()) if (out / ".units").is_dir() else []
    if jobs == "1":  # one unit under way, stopped after the step the Ctrl-C came in
        line = next(line for line in err.splitlines() if line.startswith("error:"))
        assert line.startswith(f"error: interrupted: 0 of 4 cells finished and {sent[0]} stopped after step 2 of 4 "
                               "(its state kept: the rerun continues it), kept in "), line
        assert [p.name for p in kept] == sent
    code, _, err = sweep(capsys, out)
    assert code == 0, err
    assert not (out / ".units").exists()  # the states went, and their folder with them
    resumed = [json.loads(p.read_text()).get("resumed") for p in sorted(out.glob("cells/*/run.json"))]
    if jobs == "1":  # the stopped unit's two cells (one per network) continued from step 3
        assert sorted(r[0]["from_step"] for r in resumed if r) == [3, 3]
    assert without_resume_notes(sweep_files(out)) == sweep_files(ref)


@pytest.mark.slow  # a sweep of its own, in its own session, for ~10 s
def test_sigterm_to_the_whole_group_stops_a_parallel_sweeps_units_and_keeps_them(tmp_path):
    """`timeout`, Slurm and CI send SIGTERM to the process group: with --jobs 2 it killed a worker
    ("a sweep worker died ... (killed, or out of memory)") and no unit's state was kept."""
    import os
    import subprocess
    import sys
    import time

    out = tmp_path / "s"
    cmd = [sys.executable, "-m", "lionsim", "sweep", "--workload", "vit", "--model-size", "tiny", "--workers", "4,8",
           "--steps", "100000", "-s", "lion", "-s", "dlion-mavo", "--jobs", "2", "--out", str(out)]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (out / "sweep.json").exists():
            time.sleep(0.2)
        time.sleep(8)  # both units under way
        os.killpg(proc.pid, signal.SIGTERM)
        err = proc.communicate(timeout=120)[1]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert "worker died" not in err, err
    assert "units stopped after steps" in err or "stopped after step" in err, err
    assert list((out / ".units").iterdir()), err
