"""lionsim.reports: summary maths against hand-computed numbers, files, plots, `lionsim plot`."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from lionsim.cli.app import console, main
from lionsim.errors import LionsimError
from lionsim.reports import STEP_COLUMNS, SummaryRule
from lionsim.reports import files as report_files
from lionsim.reports import load_run, plot_run, summarize, summary_table, write_run
from lionsim.reports.summary import pick_baseline
from tests.helpers.cli import run_cli

NAN = math.nan
N_STEPS = 20  # final window = ceil(10% of 20) = 2 steps


def _row(strategy, transport, k, loss, compute, encode, comm, decode, update, step_s, wire, bits, eval_loss, eval_acc):
    return {
        "strategy": strategy, "transport": transport, "workers": 4, "network": "1gbe", "backend": "sim",
        "workload": "toy", "seed": 7, "step": k, "loss": loss, "compute_s": compute, "encode_s": encode,
        "comm_s": comm, "decode_s": decode, "update_s": update, "step_s": step_s, "sim_time_s": step_s * k,
        "wire_bytes": wire, "bits_per_param_up": bits[0], "bits_per_param_down": bits[1], "params": 1000,
        "eval_loss": eval_loss, "eval_acc": eval_acc,
    }


def make_steps() -> pd.DataFrame:
    """Three runs, rows interleaved and steps in reverse order (summarize must sort them).

    A lion@fp32-allreduce: loss 21-k (20..1), step 0.5 s; evals at 10, 20.
    B dlion-mavo@int8-allreduce: loss max(21-2k, 0), step 0.25 s; comm and wire alternate.
    C dlion-mavo@a2a-1bit: loss 5 throughout, step 0.2 s (< its 0.25 s of parts: overlap); no evals.
    """
    rows = []
    for k in range(N_STEPS, 0, -1):
        rows.append(_row("lion", "fp32-allreduce", k, 21.0 - k, 0.3, 0.0, 0.15, 0.0, 0.05, 0.5, 4e6, (32, 32),
                         {10: 9.0, 20: 2.0}.get(k, NAN), {10: 0.5, 20: 0.7}.get(k, NAN)))
        rows.append(_row("dlion-mavo", "int8-allreduce", k, max(21.0 - 2 * k, 0.0), 0.2, 0.01,
                         0.01 if k % 2 else 0.03, 0.01, 0.0, 0.25, 1000.0 if k % 2 else 3000.0, (1, 1),
                         {10: 1.5, 20: 0.5}.get(k, NAN), {10: 0.8, 20: 0.75}.get(k, NAN)))
        rows.append(_row("dlion-mavo", "a2a-1bit", k, 5.0, 0.2, 0.02, 0.01, 0.02, 0.0, 0.2, 125.0, (1, 1),
                         NAN, NAN))
    return pd.DataFrame(rows)


@pytest.fixture
def steps() -> pd.DataFrame:
    return make_steps()


# --- summarize -----------------------------------------------------------------------------


def test_summary_rows_means_and_losses(steps):
    s = summarize(steps)
    assert list(s["run"]) == ["lion@fp32-allreduce", "dlion-mavo@int8-allreduce", "dlion-mavo@a2a-1bit"]
    assert list(s["steps"]) == [20, 20, 20]
    a, b, c = (s.iloc[i] for i in range(3))
    # final_loss = mean of the last 2 of 20 steps
    assert a.final_loss == pytest.approx((2 + 1) / 2)
    assert b.final_loss == pytest.approx(0.0)
    assert c.final_loss == pytest.approx(5.0)
    assert (a.best_loss, b.best_loss, c.best_loss) == (1.0, 0.0, 5.0)
    assert (a.final_eval_loss, a.final_eval_acc, a.best_eval_acc) == (2.0, 0.7, 0.7)
    assert (b.final_eval_loss, b.final_eval_acc, b.best_eval_acc) == (0.5, 0.75, 0.8)
    assert math.isnan(c.final_eval_loss) and math.isnan(c.final_eval_acc) and math.isnan(c.best_eval_acc)
    assert b.comm_s == pytest.approx(0.02)  # alternating 0.01 / 0.03
    assert b.wire_bytes == pytest.approx(2000.0)
    assert (b.compute_s, b.encode_s, b.decode_s, b.update_s) == pytest.approx((0.2, 0.01, 0.01, 0.0))
    assert (a.step_s, b.step_s, c.step_s) == pytest.approx((0.5, 0.25, 0.2))
    assert (a.sim_time_s, b.sim_time_s, c.sim_time_s) == pytest.approx((10.0, 5.0, 4.0))
    assert (a.bits_per_param_up, a.bits_per_param_down, c.bits_per_param_up) == (32, 32, 1)
    assert (a.workers, a.network) == (4, "1gbe")


def test_speedups_against_first_run(steps):
    s = summarize(steps)
    assert list(s["speedup"]) == pytest.approx([1.0, 0.5 / 0.25, 0.5 / 0.2])
    # Default target: the baseline A's smoothed loss (trailing mean over 2 steps) at step
    # ceil(0.9 * 20) = 18: (21-17 + 21-18) / 2 = 3.5. A reaches it there by construction (9.0 s);
    # B's smoothed loss is 22-2k: 4 at k=9, 2 at k=10, so k=10 (2.5 s); C stays at 5: not reached.
    assert s["target_loss"].iloc[0] == pytest.approx(3.5)
    assert set(s["target_rule"]) == {"lion@fp32-allreduce's loss at step 18 of 20"}
    assert list(s["target_reached"]) == [True, True, False]
    assert list(s["time_to_target_s"][:2]) == pytest.approx([9.0, 2.5]) and math.isnan(s["time_to_target_s"].iloc[2])
    assert list(s["steps_to_target"][:2]) == [18, 10]
    assert list(s["time_to_target_speedup"][:2]) == pytest.approx([1.0, 9.0 / 2.5])
    assert math.isnan(s["time_to_target_speedup"].iloc[2])  # never a speedup for a run that never got there
    assert set(s["baseline"]) == {"lion@fp32-allreduce"}


def test_explicit_target_loss(steps):
    # target 1.5: A's 21.5-k at k=20 (10 s); B's 22-2k <= 1.5 at k=11 (0.5 there, 2.75 s); C never
    s = summarize(steps, SummaryRule(target_loss=1.5))
    assert list(s["time_to_target_s"][:2]) == pytest.approx([10.0, 2.75])
    assert s["time_to_target_speedup"].iloc[1] == pytest.approx(10.0 / 2.75)
    assert math.isnan(s["time_to_target_s"].iloc[2]) and math.isnan(s["time_to_target_speedup"].iloc[2])


def test_baseline_by_label_and_by_strategy(steps):
    s = summarize(steps, SummaryRule(baseline="dlion-mavo@a2a-1bit"))
    assert list(s["speedup"]) == pytest.approx([0.2 / 0.5, 0.2 / 0.25, 1.0])
    # the target is the new baseline's: C's smoothed loss at step 18, 5.0; A's 21.5-k reaches it at
    # k=17 (8.5 s), B's 22-2k at k=9 (smoothed (5+3)/2 = 4; 2.25 s), C at step 1 (0.2 s)
    assert s["target_loss"].iloc[0] == pytest.approx(5.0)
    assert list(s["time_to_target_s"]) == pytest.approx([8.5, 2.25, 0.2])
    assert list(s["time_to_target_speedup"]) == pytest.approx([0.2 / 8.5, 0.2 / 2.25, 1.0])
    # a bare strategy name picks that strategy's one run (two runs of it: refused, test below)
    s = summarize(steps[steps["transport"] != "a2a-1bit"], SummaryRule(baseline="dlion-mavo", target_loss=0.0))
    assert s["baseline"].iloc[0] == "dlion-mavo@int8-allreduce"
    assert s["speedup"].iloc[1] == pytest.approx(1.0)
    assert math.isnan(s["time_to_target_speedup"].iloc[0])  # A never gets down to 0


def test_unknown_baseline_lists_runs(steps):
    with pytest.raises(LionsimError, match="unknown baseline 'sgdm'.*lion@fp32-allreduce, dlion-mavo@int8"):
        summarize(steps, SummaryRule(baseline="sgdm"))


def test_a_strategy_several_runs_share_is_an_ambiguous_baseline():
    labels = ["lion@fp32-allreduce", "dlion-mavo@int8-allreduce", "dlion-mavo@a2a-1bit"]
    strategies = [label.split("@")[0] for label in labels]
    with pytest.raises(LionsimError, match=r"^ambiguous baseline 'dlion-mavo': 2 runs are dlion-mavo "
                                           r"\(dlion-mavo@int8-allreduce, dlion-mavo@a2a-1bit\); give one"):
        pick_baseline(labels, strategies, "dlion-mavo")
    assert pick_baseline(labels, strategies, "dlion-mavo@a2a-1bit") == 2  # in full: that run
    assert pick_baseline(labels, strategies, "lion") == 0  # the one run of its strategy


def test_summarize_rejects_bad_records(steps):
    with pytest.raises(LionsimError, match="missing column.*wire_bytes"):
        summarize(steps.drop(columns=["wire_bytes"]))
    with pytest.raises(LionsimError, match="step 3 more than once"):
        summarize(pd.concat([steps, steps[steps["step"] == 3]]))
    mixed = steps.copy()
    mixed.loc[0, "workers"] = 8
    with pytest.raises(LionsimError, match="mixes workers"):
        summarize(mixed)
    with pytest.raises(LionsimError, match="no rows"):
        summarize(steps.iloc[:0])


def test_nan_loss_is_divergence_not_skipped(steps):
    # A's last loss is NaN: pandas' rolling mean would skip it and report 1.0
    steps.loc[(steps["strategy"] == "lion") & (steps["step"] == 20), "loss"] = NAN
    s = summarize(steps, SummaryRule(baseline="dlion-mavo@int8-allreduce", target_loss=0.0))
    assert math.isnan(s["final_loss"].iloc[0]) and s["best_loss"].iloc[0] == 2.0
    assert math.isnan(s["time_to_target_speedup"].iloc[0])  # target 0: A never got there


def test_a_diverged_run_does_not_move_the_target_and_a_diverged_baseline_sets_none(steps):
    # B diverges at step 5 (its run stops there, the loss is inf): the target is still the
    # baseline A's (3.5), and B shows not reached. With B as the baseline there is no target.
    b = (steps["strategy"] == "dlion-mavo") & (steps["transport"] == "int8-allreduce")
    steps = steps[~b | (steps["step"] <= 5)].copy()
    steps["diverged_at_step"] = NAN
    steps.loc[b, "diverged_at_step"] = 5
    steps.loc[b & (steps["step"] == 5), "loss"] = math.inf
    s = summarize(steps).set_index("run")
    assert s["target_loss"].tolist() == pytest.approx([3.5] * 3)
    assert s["target_reached"].tolist() == [True, False, False]
    assert math.isnan(s.loc["dlion-mavo@int8-allreduce", "time_to_target_speedup"])
    s = summarize(steps, SummaryRule(baseline="dlion-mavo@int8-allreduce"))
    assert s["target_loss"].isna().all() and not s["target_reached"].any()
    assert set(s["target_rule"]) == {"none: the baseline dlion-mavo@int8-allreduce diverged"}


def test_single_step_run():
    one = make_steps().query("step == 1")
    s = summarize(one)
    assert list(s["final_loss"]) == [20.0, 19.0, 5.0]
    assert s["time_to_target_speedup"].iloc[0] == 1.0


# --- files -----------------------------------------------------------------------------------


def test_write_load_round_trip(tmp_path, steps):
    summary = summarize(steps)
    meta = {"seed": 7, "out": tmp_path / "x", "versions": {"python": "3.11"}}
    out = tmp_path / "new" / "run"
    paths = write_run(out, steps.assign(extra=1.0 / 3.0), summary, meta)
    assert [p.name for p in paths] == ["steps.csv", "summary.csv", "run.json"]
    assert sorted(p.name for p in out.iterdir()) == ["run.json", "steps.csv", "summary.csv"]  # no temp files

    header = (out / "steps.csv").read_text().splitlines()[0].split(",")
    assert header == STEP_COLUMNS + ["extra"]
    back_steps, back_summary, back_meta = load_run(out)
    pd.testing.assert_frame_equal(
        back_steps, steps.assign(extra=1.0 / 3.0)[header], check_exact=True, check_dtype=False
    )
    assert back_steps["extra"].iloc[0] == 1.0 / 3.0  # full float precision
    pd.testing.assert_frame_equal(back_summary, summary, check_exact=True, check_dtype=False)
    assert back_meta == {"seed": 7, "out": str(tmp_path / "x"), "versions": {"python": "3.11"}}
    assert json.loads((out / "run.json").read_text()) == back_meta
    assert (out / "run.json").read_text().startswith('{\n  "seed"')  # indent 2


def test_names_stay_text(tmp_path, steps):
    steps = steps.assign(network="NA", workload="100")
    write_run(tmp_path, steps, summarize(steps), {})
    back, summary, _ = load_run(tmp_path)
    assert set(back["network"]) == {"NA"} and set(back["workload"]) == {"100"}
    assert set(summary["network"]) == {"NA"}


def test_failing_write_keeps_old_files(tmp_path, steps, monkeypatch):
    write_run(tmp_path, steps, summarize(steps), {"seed": 7})
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def half_then_fail(self, f, **kwargs):
        f.write("strategy,transp")
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_csv", half_then_fail)
    with pytest.raises(LionsimError, match="cannot write .*disk full; nothing was written"):  # one line, exit 2
        write_run(tmp_path, steps.assign(loss=0.0), summarize(steps), {"seed": 8})
    monkeypatch.undo()

    def bad_json(*args, **kwargs):
        raise TypeError("not serializable")

    # steps.csv and summary.csv stage fine, run.json fails: none of the three is replaced
    monkeypatch.setattr(report_files.json, "dumps", bad_json)
    with pytest.raises(TypeError):
        write_run(tmp_path, steps.assign(loss=0.0), summarize(steps), {"seed": 8})
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # same files, no temps


def test_write_atomic_replaces_only_on_success(tmp_path):
    path = tmp_path / "f.txt"
    report_files.write_atomic(path, lambda f: f.write("old"))

    def fail(f):
        f.write("ne")
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        report_files.write_atomic(path, fail)
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_run_json_rejects_unknown_types(tmp_path, steps):
    with pytest.raises(TypeError, match="cannot hold an object"):
        write_run(tmp_path, steps, summarize(steps), {"x": object()})
    assert list(tmp_path.iterdir()) == []


def test_load_run_errors(tmp_path, steps):
    with pytest.raises(LionsimError, match="does not exist"):
        load_run(tmp_path / "nope")
    with pytest.raises(LionsimError, match="steps.csv not found"):
        load_run(tmp_path)
    steps.drop(columns=["comm_s", "loss"]).to_csv(tmp_path / "steps.csv", index=False)
    with pytest.raises(LionsimError, match="missing column\\(s\\): loss, comm_s"):
        load_run(tmp_path)
    steps.assign(loss="x").to_csv(tmp_path / "steps.csv", index=False)
    with pytest.raises(LionsimError, match="non-numeric values in column\\(s\\): loss"):
        load_run(tmp_path)

    write_run(tmp_path, steps, summarize(steps), {})
    (tmp_path / "run.json").write_text("{oops")
    with pytest.raises(LionsimError, match="malformed JSON"):
        load_run(tmp_path)
    (tmp_path / "run.json").unlink()
    summarize(steps[steps["strategy"] == "lion"]).to_csv(tmp_path / "summary.csv", index=False)
    with pytest.raises(LionsimError, match="lists runs lion@fp32-allreduce but"):
        load_run(tmp_path)
    (tmp_path / "summary.csv").unlink()
    back, summary, meta = load_run(tmp_path)
    assert summary is None and meta is None and len(back) == len(steps)


# --- plots and table ---------------------------------------------------------------------------


def _is_png(path: Path) -> bool:
    return path.stat().st_size > 1000 and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
@pytest.mark.plots  # checks the PNGs it renders
def test_plot_run_writes_pngs(tmp_path, steps):
    paths = plot_run(tmp_path, steps, summarize(steps))
    stems = ["loss_vs_time", "loss_vs_step", "time_breakdown", "bytes_per_step", "step_time_distribution",
             "eval_acc_vs_time", "eval_acc_vs_step"]
    assert [p.name for p in paths] == [f"{s}.{ext}" for s in stems for ext in ("png", "svg")]
    assert all(_is_png(p) for p in paths if p.suffix == ".png")
    # no eval accuracy anywhere: no accuracy plot
    no_acc = steps.assign(eval_acc=NAN)
    paths = plot_run(tmp_path / "b", no_acc, summarize(no_acc))
    assert "eval_acc_vs_time.png" not in [p.name for p in paths]


def test_summary_table_renders(steps):
    console = Console(record=True, width=160)
    console.print(summary_table(summarize(steps)))
    text = console.export_text()
    assert "lion*" in text and "@fp32-allreduce" in text  # the baseline is starred
    assert "dlion-mavo " in text and "@a2a-1bit" in text
    assert "2.00x" in text and "2.50x" in text and "3.60x" in text  # speedups, 9.0/2.5 to-target
    lines = text.splitlines()
    c = next(i for i, line in enumerate(lines) if line.split()[:1] == ["@a2a-1bit"])
    # C never got there: `not` / `reached` beside its two-line name (built for 80 columns: fit)
    assert lines[c - 1].endswith(" not") and lines[c].split() == ["@a2a-1bit", "reached"]
    assert "(lion@fp32-allreduce's loss at step 18 of 20" in " ".join(text.split())
    assert "4.00MB" in text and "125B" in text


def test_in_80_columns_not_reached_and_names_stay_whole_words(steps):
    """examples/run.toml's table at 80 columns split "not" / "reached" and "dlion-" / "mavo"; then
    "not reached" stayed whole and every transport broke after its '-' (three lines a run) to make
    room for it. Now "not" / "reached" sit beside the two-line names, which stay whole: no row is
    taller for it, and no word is cut."""
    from tests.helpers.cli import table_text

    lines = table_text(summary_table(summarize(steps), {"config": {"steps": 20}}), 80).splitlines()
    table = lines[:lines.index(next(line for line in lines if line.startswith("* baseline")))]
    assert max(map(len, table)) <= 80
    c = next(i for i, line in enumerate(table) if line.split()[:1] == ["@a2a-1bit"])
    assert table[c - 1].endswith(" not") and table[c].endswith(" reached")
    body = table[table.index(next(line for line in table if line.startswith("─"))) + 1:]
    assert [line.split()[0] for line in body if line.strip()] == [
        "lion*", "@fp32-allreduce", "dlion-mavo", "@int8-allreduce", "dlion-mavo", "@a2a-1bit"]


def test_where_names_alone_leave_a_table_over_80_columns_not_reached_breaks_between_its_words(steps):
    """examples/run.toml at --steps 50 printed 82 columns: `dlion-mavo` (never broken) held the run
    column at 10 and "not reached" its column at 11. Now, the run column at its least, a column of
    words breaks between them; every number stays whole and on its row's first line."""
    from tests.helpers.cli import table_text

    name = "dlion-mavo-extra"  # 16 columns: the run column's least (the table then 80 wide; 18 before the
    # sent column's figures kept their zeros: "4.00MB", two columns more than "4MB")
    summary = summarize(steps.assign(strategy=steps["strategy"].replace("dlion-mavo", name)))
    lines = table_text(summary_table(summary, {"config": {"steps": 20}}), 80).splitlines()
    table = lines[:lines.index(next(line for line in lines if line.startswith("* baseline")))]
    assert max(map(len, table)) <= 80
    c = next(i for i, line in enumerate(table) if line.split()[:1] == ["@a2a-1bit"])
    assert table[c - 1].endswith(" not") and table[c].endswith(" reached")
    # the case: whole, "not reached" would widen its column (7) by 4, past 80
    assert max(map(len, table)) + len(" not") > 80
    rows = [line.split() for line in table if line.split()[:1] in (["lion*"], [name])]
    assert [row[1:] for row in rows] == [  # every number whole, on its row's first line
        ["1.500", "70.0%", "300", "0.00", "150", "50.0", "500", "4.00MB", "32/32", "1.00x", "1.00x"],
        ["0.000", "75.0%", "200", "20.0", "20.0", "0.00", "250", "2.00kB", "1/1", "2.00x", "3.60x"],
        ["5.000", "-", "200", "40.0", "10.0", "0.00", "200", "125B", "1/1", "2.50x", "not"]]


# --- `lionsim plot` ----------------------------------------------------------------------------


def _run_cli(args, capsys):
    with pytest.raises(SystemExit) as exc:
        main(args)
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


@pytest.mark.slow
@pytest.mark.plots  # checks the PNGs it renders
def test_cli_plot_redraws(tmp_path, steps, capsys, monkeypatch):
    monkeypatch.setattr(console, "width", 200)  # one line per table row
    write_run(tmp_path, steps, summarize(steps), {"seed": 7})
    (tmp_path / "summary.csv").unlink()  # recomputed when absent
    code, out, err = _run_cli(["plot", str(tmp_path), "--baseline", "dlion-mavo@a2a-1bit"], capsys)
    assert code == 0, err
    assert _is_png(tmp_path / "loss_vs_time.png") and _is_png(tmp_path / "time_breakdown.png")
    assert "dlion-mavo*" in out and "@a2a-1bit" in out and str(tmp_path / "loss_vs_step.png") in out.replace("\n", "")
    assert not (tmp_path / "summary.csv").exists()  # plot draws; it does not rewrite the run's CSVs


@pytest.mark.parametrize(
    "setup, message",
    [
        (lambda d: None, "does not exist"),
        (lambda d: d.mkdir(), "holds no plottable CSV; expected"),
        (lambda d: (d.mkdir(), (d / "steps.csv").write_text("strategy,step\nlion,1\n")), "missing column"),
        (lambda d: (d.mkdir(), (d / "steps.csv").write_text("")), "malformed CSV"),
    ],
)
def test_cli_plot_bad_dir(tmp_path, capsys, setup, message):
    run_dir = tmp_path / "run"
    setup(run_dir)
    code, out, err = _run_cli(["plot", str(run_dir)], capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and message in err and "Traceback" not in err


def test_cli_plot_unknown_baseline(tmp_path, steps, capsys):
    write_run(tmp_path, steps, summarize(steps), {})
    code, _, err = _run_cli(["plot", str(tmp_path), "--baseline", "nope"], capsys)
    assert code == 2 and "unknown baseline 'nope'" in err and len(err.strip().splitlines()) == 1


def test_model_check_table_only_on_real_backends(steps):
    from lionsim.reports import model_check_table

    summary = summarize(steps)
    assert model_check_table(summary) is None  # sim: the model is the time
    one_rank = summary.assign(backend="gloo")  # every worker in one process: nothing measured
    assert "comm_measured_s" in one_rank.columns and model_check_table(one_rank) is None
    real = summary.assign(backend="gloo", comm_s=0.004, comm_measured_s=0.004, comm_model_s=0.003,
                          comm_model_error=-0.25)
    console = Console(record=True, width=80)
    console.print(model_check_table(real))
    text = console.export_text()
    assert "measured on gloo" in text and "-25%" in text and " 4.00 " in text and " 3.00 " in text  # ms, 3 digits


def test_bits_count_momentum_sync_and_wire_bytes_are_whole(tiny_run):
    steps = pd.read_csv(tiny_run / "steps.csv")
    summary = pd.read_csv(tiny_run / "summary.csv")
    mavo = steps[steps.strategy == "dlion-mavo"].set_index("step")
    assert mavo.loc[2, "wire_bytes"] > 4 * mavo.loc[1, "wire_bytes"]  # step 2 also averages the momentum
    assert mavo.loc[2, "bits_per_param_up"] > mavo.loc[1, "bits_per_param_up"]
    assert steps["wire_bytes"].dtype.kind == "i"
    row = summary[summary.strategy == "dlion-mavo"].iloc[0]
    assert row["bits_per_param_up"] == pytest.approx(mavo["bits_per_param_up"].mean())
    assert row["wire_bytes"] == pytest.approx(mavo["wire_bytes"].mean())  # the summary's is the mean


def test_a_truncated_steps_csv_says_so(tmp_path, capsys, tiny_run):
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    text = (tiny_run / "steps.csv").read_text()
    (run_dir / "steps.csv").write_text(text[: len(text) - 40])
    code, _, err = run_cli(["plot", str(run_dir)], capsys)
    assert code == 2 and "truncated or corrupt" in err


def test_a_nan_loss_is_called_not_finite(tmp_path, capsys, tiny_run):
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    steps = pd.read_csv(tiny_run / "steps.csv")
    steps["loss"] = steps["loss"].astype(object)
    steps.loc[1, "loss"] = "nan"
    steps.to_csv(run_dir / "steps.csv", index=False)
    code, _, err = run_cli(["plot", str(run_dir)], capsys)
    assert code == 2 and "not a finite number in column loss" in err and "non-numeric" not in err


def test_an_estimate_from_a_run_draws_the_plots_lionsim_plot_draws_of_it(tmp_path):
    """estimate --from-run --out (no sweep) writes to_target.png itself, as --sweep writes its plots:
    `lionsim plot OUT` then redraws the same files, none new."""
    from typer.testing import CliRunner

    from lionsim.cli.app import app
    from lionsim.reports.plots import plot_dir
    from tests.estimate.test_from_run import bench_dir

    out = tmp_path / "est"
    args = ["estimate", "--params", "2e8", "--tokens-per-worker", "1024", "--network", "10gbe", "-s", "adamw",
            "-s", "dlion-mavo", "--from-run", str(bench_dir(tmp_path)), "--out", str(out)]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    written = {p.name for p in out.iterdir()}
    assert {"to_target.png", "to_target.svg"} <= written
    _kind, drawn = plot_dir(out)
    assert {Path(p).name for p in drawn} == {"to_target.png", "to_target.svg"}


@pytest.mark.parametrize("sweep, heading", [("workers=16,64", "workers"),
                                            ("bandwidth=1,10", "inter-node bandwidth (GB/s)")])
def test_an_estimate_sweep_report_heads_the_swept_column_alike_in_every_table(sweep, heading, tmp_path, capsys):
    """Step time, speedup, time to target and crossovers: the swept column is named for what it
    is (and its unit) in each, never "value" in some and "workers" in others."""
    measured = Path(__file__).resolve().parents[2] / "reports" / "readme" / "from-run-sweep"
    out = tmp_path / "est"
    with pytest.raises(SystemExit) as done:
        main(["estimate", "--model", "gpt2-124m", "--network", "h100x8-100gbe", "--workers", "16",  # two nodes
              "-s", "adamw@bf16-allreduce", "-s", "lion", "--tokens", "1e9", "--from-run", str(measured), "--sweep",
              sweep, "--out", str(out)])
    assert done.value.code == 0
    with pytest.raises(SystemExit) as done:
        main(["report", str(out)])
    assert done.value.code == 0
    lines = (out / "report.md").read_text().splitlines()
    headers = [line for line, under in zip(lines, lines[1:]) if under.startswith("|---")]
    by_value = [h.split("|")[1].strip() for h in headers if "adamw@bf16-allreduce |" in h]
    assert len(by_value) >= 4 and set(by_value) == {heading}  # step time, speedup, time to target and its speedup (bytes)
    assert f"| run | crossover: {heading} | wins | speedup: lowest to highest |" in headers


def test_a_gloo_runs_report_holds_the_comm_measured_against_the_model():
    """report.md of a gloo run left out the booked / measured / model / error table bench prints."""
    import pandas as pd

    from lionsim.reports.markdown import _model_check

    summary = pd.DataFrame({"strategy": ["lion"], "transport": ["fp32-allreduce"], "backend": ["gloo"],
                            "comm_s": [0.51e-3], "comm_measured_s": [0.62e-3], "comm_model_s": [0.61e-3],
                            "comm_model_error": [0.61 / 0.62 - 1], "barrier_wait_s": [0.23e-3]})
    meta = {"config": {"backend": "gloo", "ranks": 2}, "network_given": True, "comm_model": "loop.toml + gloo traits"}
    text = _model_check(summary, meta, {})
    assert "| lion@fp32-allreduce | 0.51 | 0.62 | 0.61 | -2% | 0.23 |" in text, text
    assert "loop.toml + gloo traits" in text
    assert _model_check(summary.assign(backend="sim"), {"config": {"backend": "sim"}}, {}) == ""
