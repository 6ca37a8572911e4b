"""The learning rate as a sweep axis (`lionsim sweep --lr 0.001,0.01`): the cells are the brute-force
product of the axes, a sweep of one lr keeps the ids and records it always had, a cell at lr X is a
`lionsim bench --lr X` (and its group the bench of every run at X), each run's best lr is the lowest
final loss, resume and grow keep every finished cell, shards merge to the unsharded sweep, and bad
values are one line."""

from __future__ import annotations

import itertools
import math
import json
import shutil

import pandas as pd
import pytest

import lionsim.sweep.train as train
from lionsim.cli.app import main
from lionsim.errors import LionsimError
from tests.helpers.cli import exit_code, table_text
from tests.helpers.sweeps import sweep_files

COMMON = ["--workload", "mlp", "--model-size", "tiny", "--workers", "2", "--steps", "4", "--eval-every", "2",
          "--batch-size", "8", "--strategy", "adamw", "--strategy", "lion"]
SWEEP = ["sweep", *COMMON, "--network", "1gbe"]
RUNS = ("adamw@fp32-allreduce", "lion@fp32-allreduce")
LRS = ("0.001", "0.01")


def cli(capsys, argv):
    with pytest.raises(SystemExit) as done:
        main(argv)
    captured = capsys.readouterr()
    return done.value.code, captured.out, captured.err


def counted_sweep(capsys, out, *extra) -> tuple[int, str, list]:
    """Run the sweep, counting its trainings (each unit's runs)."""
    trained = []
    real = train.Runner.run
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(train.Runner, "run", lambda self, *a, **k: trained.append(self.plan.runs[0].hyper.lr)
                   or real(self, *a, **k))
        code, printed, err = cli(capsys, [*SWEEP, "--out", str(out), *extra])
    assert code == 0, err
    return code, printed, trained


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """A sweep of two lrs."""
    out = tmp_path_factory.mktemp("lr") / "sweep"
    assert exit_code([*SWEEP, "--lr", ",".join(LRS), "--out", str(out)]) == 0
    return out


def old_id(workload, workers, network, seed, run) -> str:
    """A cell's id as every sweep before the lr axis named it."""
    return f"{workload}-w{workers}-{network}-s{seed}-{run}"


# --- the grid: brute-force product, ids ---

def test_the_cells_are_the_product_of_every_axis_and_the_first_lr_keeps_the_old_ids():
    from lionsim.sweep import Grid
    from lionsim.sweep.cells import grid_cells, grid_units

    axes = dict(workload=["mlp"], workers=[2, 4], network=["1gbe", "10gbe"], seed=[0, 1])
    grid = Grid.parse(**axes, strategies=["adamw", "lion"], transport=None, lr=["0.001,3e-4", "default"])
    assert grid.lrs == (0.001, 0.0003, None)
    cells = grid_cells(grid)
    product = set(itertools.product(*axes.values(), [0.001, 0.0003, None], RUNS))
    assert {(c.workload, c.workers, c.network, c.seed, c.lr, c.run.label) for c in cells} == product
    assert len(cells) == len(product) == 2 * 2 * 2 * 3 * 2
    ids = {c.id: c for c in cells}
    assert len(ids) == len(cells)  # one folder each
    for c in cells:
        plain = old_id(c.workload, c.workers, c.network, c.seed, c.run.label)
        want = {0.001: plain, 0.0003: plain.replace("-adamw", "-lr0.0003-adamw").replace("-lion", "-lr0.0003-lion"),
                None: plain.replace("-adamw", "-lrdefault-adamw").replace("-lion", "-lrdefault-lion")}[c.lr]
        assert c.id == want
    units = grid_units(grid)  # networks share a training; each lr trains on its own
    trainings = {(w, n, s, lr, r) for w, n, _, s, lr, r in product}
    assert {(u.workload, u.workers, u.seed, u.lr, u.run.label) for u in units} == trainings
    assert len({u.key for u in units}) == len(units) == len(trainings)


@pytest.mark.parametrize("lr", [None, "0.001"])
def test_a_sweep_of_one_lr_keeps_its_ids_and_its_record(lr, tmp_path):
    from lionsim.config.bench import BenchConfig
    from lionsim.config.sweep import SweepConfig, plan_sweep
    from lionsim.sweep import Grid

    grid = Grid.parse(workload=["mlp"], workers=[2], network=["1gbe"], seed=[0], strategies=["adamw"],
                      transport=None, lr=lr)
    plan = plan_sweep(SweepConfig(grid=grid, bench=BenchConfig(model_size="tiny", steps=2), out=tmp_path),
                      train=False)
    assert [c.id for c in plan.cells] == [old_id("mlp", 2, "1gbe", 0, "adamw@fp32-allreduce")]
    record = plan.record(None)
    assert "lr" not in record["grid"] and record["bench"]["lr"] == (None if lr is None else 0.001)


# --- bad input ---

@pytest.mark.parametrize("given, says", [
    ("0,-1", "bad --lr 0; accepted: a finite number above 0, or default (each strategy's own); a comma list like "),
    ("abc", "bad --lr abc: not a number; accepted: a finite number above 0, or default"),
    ("0.001,-1", "bad --lr -1; accepted: a finite number above 0"),
    ("1e39", "bad --lr 1e39: beyond float32's range"),
    ("0.001,1e-3", "bad --lr 0.001,1e-3: 0.001 given twice; accepted: a comma list like 0.0003,0.001, each value once"),
    ("0.001,0.001", "bad --lr 0.001,0.001: 0.001 given twice; accepted: a comma list like 0.0003,0.001, each value once"),
    ("0.001,,0.01", "bad --lr 0.001,,0.01: an empty item"),
    ("default,0.003", "adamw@fp32-allreduce's own lr on mlp is 0.003, so default and 0.003 are one value given twice; "
                      "accepted: a comma list like 0.0003,0.001, each value once"),
])
def test_a_bad_lr_is_one_line_exit_2_and_writes_nothing(given, says, tmp_path, capsys):
    code, _, err = cli(capsys, [*SWEEP, "--lr", given, "--out", str(tmp_path / "s")])
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "s").exists()


def test_an_lr_axis_with_a_runs_own_lr_is_refused(tmp_path, capsys):
    hyper = json.dumps({"lion": {"lr": 1e-4}})
    code, _, err = cli(capsys, [*SWEEP, "--lr", "0.001,0.01", "--hyper", hyper, "--out", str(tmp_path / "s")])
    assert code == 2 and "hyper.lion.lr fixes lion@fp32-allreduce's" in err and len(err.strip().splitlines()) == 1


# --- a sweep of two lrs ---

def test_each_lr_is_a_training_and_a_cell_is_a_bench_at_that_lr(swept, tmp_path, capsys):
    out = swept
    ids = [old_id("mlp", 2, "1gbe", 0, run) for run in RUNS]
    ids += [i.replace("-s0-", "-s0-lr0.01-") for i in ids]
    assert sorted(p.name for p in (out / "cells").iterdir()) == sorted(ids)
    summary = pd.read_csv(out / "sweep_summary.csv")
    assert list(summary.cell) == ids and list(summary.lr) == [0.001, 0.001, 0.01, 0.01]
    assert json.loads((out / "sweep.json").read_text())["grid"]["lr"] == [0.001, 0.01]
    bench = tmp_path / "bench"  # the second lr's group, as one bench of both runs at it
    code, _, err = cli(capsys, ["bench", *COMMON, "--network", "1gbe", "--lr", "0.01", "--out", str(bench)])
    assert code == 0, err
    steps = pd.read_csv(bench / "steps.csv")
    for run, cell in zip(RUNS, ids[2:]):
        strategy, transport = run.split("@")
        own = steps[(steps.strategy == strategy) & (steps.transport == transport)].reset_index(drop=True)
        pd.testing.assert_frame_equal(pd.read_csv(out / "cells" / cell / "steps.csv"), own)
        assert json.loads((out / "cells" / cell / "run.json").read_text())["runs"][0]["lr"] == 0.01
    expected = pd.read_csv(bench / "summary.csv")
    group = summary[summary.lr == 0.01].reset_index(drop=True)
    for column in ("final_loss", "speedup", "target_loss", "time_to_target_s", "time_to_target_speedup"):
        assert group[column].tolist() == pytest.approx(expected[column].tolist(), nan_ok=True), column


def test_each_runs_best_lr_is_its_lowest_final_loss_and_the_table_says_it(swept):
    from lionsim.cli.sweep_view import sweep_table
    from lionsim.reports.best_lr import best_lrs

    out = swept
    summary = pd.read_csv(out / "sweep_summary.csv")
    best = best_lrs(summary)
    for run in RUNS:  # brute force: the lr of the least final loss
        rows = summary[summary.run == run]
        want = float(rows.loc[rows.final_loss.idxmin(), "lr"])
        assert best.loc[best.run == run, "lr"].item() == want
    words = " ".join(table_text(sweep_table(summary, out)).split())
    assert "best lr per run" in words and "lowest final loss" in words and "2 lrs" in words


def test_the_plots_and_the_report_compare_each_run_at_its_best_lr(swept, tmp_path):
    from lionsim.reports.best_lr import at_best_lr, best_lrs
    from lionsim.reports.markdown import write_report
    from lionsim.reports.summary import summarize

    out = tmp_path / "copy"
    shutil.copytree(swept, out)
    summary, steps = pd.read_csv(out / "sweep_summary.csv"), pd.read_csv(out / "sweep_steps.csv")
    chosen, kept = at_best_lr(summary, steps)
    best = dict(zip(best_lrs(summary).run, best_lrs(summary).lr))
    assert [(r, lr) for r, lr in zip(chosen.run, chosen.lr)] == [(r, best[r]) for r in RUNS]
    cells = list(chosen.cell)  # a bench of those two cells' steps, summarised as bench summarises
    again = summarize(steps[steps.cell.isin(cells)].drop(columns="cell"))
    assert chosen.time_to_target_speedup.tolist() == pytest.approx(again.time_to_target_speedup.tolist(), nan_ok=True)
    assert set(kept.cell) == set(cells)
    text = write_report(out).read_text()
    assert "## Best learning rate per run" in text and "Each run at its best lr" in text


# --- resume, grow, shards ---

@pytest.mark.slow
def test_a_sweep_of_one_lr_grows_to_two_training_only_the_new_lr(swept, tmp_path, capsys):
    fresh = swept
    out = tmp_path / "grown"
    _, _, trained = counted_sweep(capsys, out, "--lr", LRS[0])  # a sweep as any before the lr axis
    before = {p.name: (p / "steps.csv").read_text() for p in (out / "cells").iterdir()}
    assert sorted(before) == sorted(old_id("mlp", 2, "1gbe", 0, r) for r in RUNS) and trained == [0.001, 0.001]
    _, printed, trained = counted_sweep(capsys, out, "--lr", ",".join(LRS))
    assert trained == [0.01, 0.01] and "2 cells were already finished" in " ".join(printed.split())
    assert all((out / "cells" / name / "steps.csv").read_text() == text for name, text in before.items())
    assert sweep_files(out) == sweep_files(fresh)
    code, _, err = cli(capsys, [*SWEEP, "--lr", f"{LRS[1]},{LRS[0]}", "--out", str(out)])
    assert code == 2 and "give 0.001 first" in err and len(err.strip().splitlines()) == 1, err
    code, _, err = cli(capsys, [*SWEEP, "--lr", LRS[0], "--out", str(out)])
    assert code == 2 and "--lr differs" in err and "lacks 0.01, which finished cells hold" in err, err


@pytest.mark.slow
def test_shards_of_an_lr_sweep_merge_to_the_unsharded_sweep(swept, tmp_path, capsys):
    fresh = swept
    out = tmp_path / "sharded"
    for shard in ("1/2", "2/2"):
        code, _, err = cli(capsys, [*SWEEP, "--lr", ",".join(LRS), "--shard", shard, "--out", str(out)])
        assert code == 0, err
    code, _, err = cli(capsys, ["sweep", "merge", str(out)])
    assert code == 0, err
    merged = {k: v for k, v in sweep_files(out).items() if not k.startswith("parts/")}
    assert merged == sweep_files(fresh)


def test_a_resume_keeps_the_first_lr_first_and_drops_only_values_no_cell_holds(tmp_path):
    from lionsim.config.bench import BenchConfig
    from lionsim.config.sweep import SweepConfig, plan_sweep
    from lionsim.sweep import Grid

    def planned(lr):
        grid = Grid.parse(workload=["mlp"], workers=[2], network=["1gbe"], seed=[0], strategies=["adamw"],
                          transport=None, lr=lr)
        return plan_sweep(SweepConfig(grid=grid, bench=BenchConfig(model_size="tiny", steps=2), out=tmp_path),
                          train=False)

    where = tmp_path / "sweep.json"
    one = planned("0.001").record(None)  # as every sweep recorded its lr before it was an axis
    assert "lr" not in one["grid"] and one["bench"]["lr"] == 0.001
    planned("0.001,0.01").check_resume(one, where)  # nothing finished: anything goes
    planned("0.01,0.001").check_resume(one, where)
    (tmp_path / "cells" / old_id("mlp", 2, "1gbe", 0, "adamw@fp32-allreduce")).mkdir(parents=True)
    planned("0.001,0.01").check_resume(one, where)  # grows
    with pytest.raises(LionsimError, match="^--lr differs .*its first value is 0.001.* give 0.001 first"):
        planned("0.01,0.001").check_resume(one, where)
    with pytest.raises(LionsimError, match=r"^--lr differs .*\(0.001 there, 0.01 now\)"):  # one lr to one: as ever
        planned("0.01").check_resume(one, where)
    two = planned("0.001,0.01").record(None)
    assert two["grid"]["lr"] == [0.001, 0.01] and "lr" not in two["bench"]
    planned("0.001").check_resume(two, where)  # no cell of 0.01 finished: it may go
    (tmp_path / "cells" / old_id("mlp", 2, "1gbe", 0, "lr0.01-adamw@fp32-allreduce")).mkdir()
    with pytest.raises(LionsimError, match="it lacks 0.01, which finished cells hold"):
        planned("0.001").check_resume(two, where)
    legacy = planned(None).record(None)  # --lr not given: each strategy's own, named `default` in a list
    legacy["grid"].pop("lr", None)
    planned("default,0.001").check_resume(legacy, where.with_name("other.json"))


def test_a_diverged_lr_is_never_chosen_and_a_tie_goes_to_the_smaller_lr():
    from lionsim.reports.best_lr import best_lrs

    nan = float("nan")

    def frame(lrs, losses, diverged):
        return pd.DataFrame({"workload": "mlp", "workers": 2, "network": "1gbe", "seed": [0, 1] * (len(lrs) // 2),
                             "strategy": "lion", "transport": "fp32-allreduce", "lr": lrs, "final_loss": losses,
                             "diverged_at_step": diverged})

    # 0.1's mean is the lowest, but one of its seeds diverged: 0.01 (mean 1.1) is the best
    best = best_lrs(frame([0.001, 0.001, 0.01, 0.01, 0.1, 0.1], [2.0, 2.2, 1.0, 1.2, 0.5, nan],
                          [nan, nan, nan, nan, nan, 3.0])).iloc[0]
    assert (best.lr, best.final_loss, best.diverged) == (0.01, pytest.approx(1.1), 0)
    assert best.tried == {0.001: pytest.approx(2.1), 0.01: pytest.approx(1.1), 0.1: float("inf")}
    tie = best_lrs(frame([0.01, 0.01, 0.001, 0.001], [1.0, 1.0, 1.0, 1.0], [nan] * 4)).iloc[0]
    assert tie.lr == 0.001
    every = best_lrs(frame([0.01, 0.01, 0.1, 0.1], [nan] * 4, [5.0, 7.0, 2.0, 3.0])).iloc[0]
    assert (every.lr, every.diverged) == (0.01, 1) and math.isnan(every.final_loss)  # lasted longest


def test_a_best_lr_at_the_grids_edge_says_extend_the_grid_in_the_table_and_the_report():
    """A best lr that is the smallest or largest tried may not be the best: the loss can fall further
    past it. The terminal's caption and report.md say so, in the same words; one in the middle does not."""
    from lionsim.cli.sweep_view import best_lr_table
    from lionsim.reports.best_lr import best_lr_markdown

    losses = {"adamw": [2.0, 1.5, 1.0], "lion": [1.0, 1.5, 2.0], "sgd": [2.0, 1.0, 2.0],  # largest, smallest, middle
              "dlion": [float("nan"), 1.0, 2.0]}  # the smallest diverged: 0.1 is the edge of what trained
    rows = [{"workload": "mlp", "workers": 2, "network": "1gbe", "seed": 0, "strategy": s, "transport": "t", "lr": lr,
             "final_loss": loss, "diverged_at_step": 3.0 if loss != loss else float("nan")}
            for s, ls in losses.items() for lr, loss in zip((0.01, 0.1, 0.5), ls)]
    summary = pd.DataFrame(rows)
    largest = "adamw@t, N=2: best lr is the largest tried (0.5): extend the grid"
    smallest = "lion@t, N=2: best lr is the smallest tried (0.01): extend the grid"
    caption = " ".join(table_text(best_lr_table(summary)).split())
    report = best_lr_markdown(summary)
    for said in (caption, report):
        assert largest in said and smallest in said
        assert "sgd@t, N=2: best lr" not in said and "dlion@t, N=2: best lr" not in said


# --- one text of an lr everywhere ---

def test_every_table_the_report_and_the_ids_write_an_lr_alike_and_two_close_lrs_apart(swept, tmp_path):
    """1e-3 and 1.0001e-3 are two lrs: each printed text reads back as its own float (:g's 6 digits
    printed both 0.001), and the terminal and the report write each lr's loss as `lr=loss`."""
    from lionsim.cli.sweep_view import sweep_table
    from lionsim.reports.markdown import write_report
    from lionsim.sweep.grid import lr_tag

    close = 1.0001e-3
    out = tmp_path / "close"
    shutil.copytree(swept, out)
    summary = pd.read_csv(out / "sweep_summary.csv")
    summary["lr"] = summary["lr"].replace({0.01: close})
    summary.to_csv(out / "sweep_summary.csv", index=False)
    assert lr_tag(close, [0.001, close]) == "lr0.0010001"  # the id's text, which the tables now share
    terminal = " ".join(table_text(sweep_table(summary, out), width=120).split())
    report = write_report(out).read_text()
    for run in RUNS:  # the reference: each run's mean final loss at each lr, from the rows themselves
        rows = summary[summary.run == run]
        for lr, text in ((0.001, "0.001"), (close, "0.0010001")):
            loss = rows.loc[rows.lr == lr, "final_loss"].mean()
            assert f"{text}={loss:.3f}" in terminal and f"{text}={loss:.4f}" in report, (run, text)
    assert "| 0.0010001 |" in report and " 0.0010001 " in terminal  # the per-cell tables' lr column


def test_a_refusal_of_two_shard_grids_writes_the_default_lr_as_the_ids_do(tmp_path):
    from lionsim.sweep.merge import merged_grid

    axes = {"workload": ["mlp"], "workers": [2], "network": ["1gbe"], "seed": [0], "runs": [RUNS[0]]}
    parts = {tmp_path / "parts" / "shard-1-of-2": {"grid": {**axes, "lr": [0.001, None]}},
             tmp_path / "parts" / "shard-2-of-2": {"grid": {**axes, "lr": [0.001]}}}
    with pytest.raises(LionsimError) as refused:
        merged_grid(tmp_path, None, parts)
    said = str(refused.value)
    assert "shard-1-of-2/sweep.json has --lr default, which" in said and "None" not in said, said


def test_each_plot_legend_names_the_lr_each_run_is_drawn_at(swept, tmp_path, monkeypatch):
    import lionsim.reports.plots.sweep as plots

    figures = {}
    monkeypatch.setattr(plots, "save", lambda fig, path: figures.setdefault(path.stem, fig) and [])
    summary = pd.read_csv(swept / "sweep_summary.csv")
    plots.plot_sweep(tmp_path, pd.read_csv(swept / "sweep_steps.csv"), summary)
    best = {}
    for run in RUNS:  # brute force: the lr of the run's least final loss (one worker count here)
        rows = summary[summary.run == run]
        best[run] = repr(float(rows.loc[rows.final_loss.idxmin(), "lr"]))
    want = {f"{RUNS[0]} (baseline, lr {best[RUNS[0]]})", f"{RUNS[1]} (lr {best[RUNS[1]]})"}
    assert {"loss_vs_step", "eval_acc_vs_step", "accuracy_by_workers"} <= set(figures)
    for stem, fig in figures.items():
        if stem == "loss_vs_step_by_lr":  # every lr, not each run at one: its legend names the lrs
            continue
        legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]
        texts = {t.get_text() for legend in legends for t in legend.get_texts()}
        assert want <= texts, (stem, texts)


@pytest.mark.parametrize("chosen, words", [
    ({2: 0.01, 4: 0.01}, "lr 0.01"),
    ({2: 0.001, 4: 0.01}, "lr 0.001 at N=2, 0.01 at N=4"),
    ({2: 0.001, 4: 0.01, 8: 1.0001e-3}, "lr 0.001 at N=2, 0.01 at N=4, 0.0010001 at N=8"),
    ({2: 0.001, 4: 0.01, 8: 0.01, 16: 0.01}, "lr per worker count in the report"),
])
def test_a_legend_gives_the_lr_per_worker_count_where_the_counts_chose_differently(chosen, words):
    from lionsim.reports.best_lr import CHOSEN, chosen_lr_words

    frame = pd.DataFrame([{"workload": "mlp", "workers": n, "network": net, "seed": seed, "strategy": "lion",
                           "transport": "fp32-allreduce", "lr": lr, CHOSEN: 1}
                          for n, lr in reversed(chosen.items()) for net in ("1gbe", "10gbe") for seed in (0, 1)])
    assert chosen_lr_words(frame) == {"lion@fp32-allreduce": words}
    assert chosen_lr_words(frame.drop(columns=CHOSEN)) == {}  # no lr axis: the legend as it was


# --- an lr search of one run: its table, report and plots ---

SEARCH = ["sweep", "--workload", "mlp", "--model-size", "tiny", "--workers", "2", "--steps", "6", "--eval-every", "2",
          "--batch-size", "8", "--strategy", "sgdm", "--network", "1gbe", "--lr", "0.01,1e12"]


@pytest.fixture(scope="module")
def searched(tmp_path_factory):
    """An lr search of sgdm alone, whose lr 1e12 diverges: exit 1, both cells written."""
    out = tmp_path_factory.mktemp("search") / "sweep"
    assert exit_code([*SEARCH, "--out", str(out)]) == 1
    return out


def _diverged_step(out) -> int:
    """The step the lr 1e12 cell diverged at, read from its steps (the reference): its loss went
    non-finite or passed 100x its first step's (lionsim.divergence), by a plain scan."""
    steps, summary = pd.read_csv(out / "sweep_steps.csv"), pd.read_csv(out / "sweep_summary.csv")
    cell = summary.loc[summary.lr == 1e12, "cell"].item()
    losses = steps[steps.cell == cell].sort_values("step")
    first = losses.loss.iloc[0]
    return next(int(s) for s, loss in zip(losses.step, losses.loss) if not math.isfinite(loss) or loss > 100 * first)


def test_an_lr_search_says_its_steps_marks_the_diverged_cell_and_shows_no_speedup_of_a_run_against_itself(searched):
    """The title said "6/3 steps" (3: where a cell diverged), the diverged row no more than a "-"
    loss, and every row "1.00x", each cell its own baseline. Now the steps asked, the row "diverged
    at N" under its name, and no speedup column, the caption saying why; so too report.md."""
    from lionsim.cli.sweep_view import sweep_table
    from lionsim.reports.markdown import write_report

    summary = pd.read_csv(searched / "sweep_summary.csv")
    at = _diverged_step(searched)
    assert 1 <= at < 6
    text = table_text(sweep_table(summary, searched))
    assert text.splitlines()[0].strip().endswith(", 2 lrs, 6 steps: 2 cells"), text
    rows = text.split("step times")[0]  # the header and rows, the caption after them
    assert f"diverged at {at}" in rows and "1.00x" not in rows and "speedup" not in rows
    words = " ".join(text.split())
    assert "no speedup column: one run, so each cell's baseline is itself" in words
    assert "its times and bytes are over the steps before." in words and "speedup shows" not in words
    report = write_report(searched).read_text()
    table = report.split("## Summary (mean ± sd over seeds)\n\n")[1].split("\n\n")
    assert "speedup" not in table[0] and table[1].count("No speedup column: one run") == 1


def test_a_sweeps_report_names_each_runs_hyperparameters_at_each_lr(swept, searched):
    """The Configuration table named the lr axis, not what each run trained with: a `hyper.RUN` row
    each, its lr per cell. Reference: the lrs typed and the strategies' own defaults for mlp."""
    from lionsim.reports.markdown import write_report
    from lionsim.strategies import STRATEGIES

    config = write_report(swept).read_text().split("## Configuration\n\n")[1].split("\n\n")[0]
    for run in RUNS:
        own = STRATEGIES.get(run.split("@")[0]).defaults_for("mlp")
        row = (f"| hyper.{run} | lr 0.001/0.01 (by cell), weight_decay {own.weight_decay:g}, "
               f"betas ({own.betas[0]:g}, {own.betas[1]:g}) |")
        assert row in config, config
    sgdm = STRATEGIES.get("sgdm")
    config = write_report(searched).read_text().split("## Configuration\n\n")[1].split("\n\n")[0]
    wd = sgdm.defaults_for("mlp").weight_decay
    assert f"| hyper.sgdm@fp32-allreduce | lr 0.01/1000000000000.0 (by cell), weight_decay {wd:g}" in config


def test_the_lr_search_has_a_plot_of_every_lr(searched, swept, tmp_path, monkeypatch):
    """loss_vs_step drew each run at its best lr only: loss_vs_step_by_lr draws every lr, a panel a
    run and worker count, each line the cell's own losses (the reference: sweep_steps.csv), the best
    lr thickest, a diverged lr ending in an X at its last finite loss or on the top edge where it left;
    loss_vs_step's subtitle points to it. A sweep of one lr has none."""
    import lionsim.reports.plots.sweep as plots

    figures = {}
    monkeypatch.setattr(plots, "save", lambda fig, path: figures.setdefault(path.stem, fig) and [])
    monkeypatch.setattr("lionsim.reports.plots.lr_curves.save", lambda fig, path: figures.setdefault(path.stem, fig) and [])
    summary, steps = pd.read_csv(searched / "sweep_summary.csv"), pd.read_csv(searched / "sweep_steps.csv")
    plots.plot_sweep(tmp_path, steps, summary)
    fig = figures["loss_vs_step_by_lr"]
    assert "every lr: loss_vs_step_by_lr.png" in " ".join(figures["loss_vs_step"]._suptitle.get_text().split())
    ax = [a for a in fig.axes if a.get_visible()]
    assert len(ax) == 1 and "sgdm@fp32-allreduce" in ax[0].get_title() and "best lr 0.01" in ax[0].get_title()
    lines = [l for l in ax[0].get_lines() if l.get_linestyle() != "None"]
    for lr in (0.01, 1e12):
        own = steps[steps.cell == summary.loc[summary.lr == lr, "cell"].item()]
        own = own[own.loss.apply(math.isfinite)]
        drawn = [l for l in lines if list(l.get_xdata()) == own.step.tolist()]
        assert len(drawn) == 1 and list(drawn[0].get_ydata()) == pytest.approx(own.loss.tolist())
        if lr == 0.01:
            assert drawn[0].get_linewidth() == max(l.get_linewidth() for l in lines)
        else:
            from lionsim.reports.plots.lr_curves import left_at

            marks = [l for l in ax[0].get_lines() if l.get_marker() == "X"]
            top = ax[0].get_ylim()[1]
            left = left_at(own.step, own.loss, top)  # where it left the axis for good, if it did
            assert len(marks) == 1
            assert (marks[0].get_xdata()[0], marks[0].get_ydata()[0]) == \
                ((own.step.iloc[-1], own.loss.iloc[-1]) if left is None else (pytest.approx(left), top))
    legends = [*fig.legends, *(a.get_legend() for a in fig.axes if a.get_legend() is not None)]
    assert {"lr 0.01", "lr 1000000000000.0"} <= {t.get_text() for legend in legends for t in legend.get_texts()}
    figures.clear()
    plots.plot_sweep(tmp_path, pd.read_csv(swept / "sweep_steps.csv"), pd.read_csv(swept / "sweep_summary.csv"))
    titles = [a.get_title() for a in figures["loss_vs_step_by_lr"].axes if a.get_visible()]
    assert [t.split("\n")[0] for t in titles] == list(RUNS)
    one = pd.read_csv(swept / "sweep_summary.csv")
    one = one[one.lr == 0.001]
    figures.clear()
    plots.plot_sweep(tmp_path, pd.read_csv(swept / "sweep_steps.csv").pipe(lambda d: d[d.cell.isin(set(one.cell))]),
                     one)
    assert "loss_vs_step_by_lr" not in figures
