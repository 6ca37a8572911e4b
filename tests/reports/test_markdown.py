"""`lionsim report DIR`: the Markdown report of a run or sweep, checked against numbers worked out
by hand from small frames, and the paper's ordering check against the paper's own table."""

from __future__ import annotations

import json
import math
import re
import shlex
import sys
from pathlib import Path

import pandas as pd
import pytest

import lionsim.reports.plots
from lionsim.cli.app import main
from lionsim.reports import SummaryRule, summarize, write_run
from lionsim.reports.markdown import md_table, spread, write_report
from lionsim.reports.paper import PAPER_ACCURACY, comparability, ordering_breaks, ordering_holds
from tests.helpers.cli import TINY_BENCH, run_cli


def test_the_papers_own_table_follows_its_ordering():
    for workers in (4, 8, 16):
        assert ordering_holds({name: table[workers] for name, table in PAPER_ACCURACY.items()}) is True


def test_ordering_names_each_broken_link():
    acc = {"sgdm": 80.0, "signum-mv": 90.0, "dlion-avg": 85.0, "dlion-mavo": 85.0}
    assert ordering_holds(acc) is False
    assert ordering_breaks(acc) == ["SIGNUM 90.0 >= D-Lion Avg 85.0"]  # Avg == MaVo is allowed
    assert ordering_holds({**acc, "dlion-mavo": math.nan}) is None
    assert ordering_holds({"sgdm": 1.0}) is None


def test_spread_is_mean_and_sample_sd():
    assert spread(pd.Series([0.80, 0.82]), 100.0) == "81.0 ± 1.4"  # sd = 0.02 / sqrt(2) * 100
    assert spread(pd.Series([0.5]), 100.0) == "50.0"
    assert spread(pd.Series([math.nan]), 100.0) == "n/a"


def test_md_table_escapes_pipes():
    assert md_table(["a"], [["x|y"]]).splitlines()[-1] == "| x\\|y |"


def _run_steps(n: int = 10) -> pd.DataFrame:
    """Two runs: A (baseline) loss 10-k at 2 ms/step; B loss 10-2k (floored at 0) at 1 ms/step."""
    rows = []
    for label, slope, step_s in (("adamw", 1.0, 0.002), ("dlion-mavo", 2.0, 0.001)):
        transport = "fp32-allreduce" if label == "adamw" else "int8-allreduce"
        for k in range(1, n + 1):
            rows.append({
                "strategy": label, "transport": transport, "workers": 4, "network": "1gbe", "backend": "sim",
                "workload": "mlp", "seed": 0, "step": k, "loss": max(10.0 - slope * k, 0.0), "compute_s": step_s / 2,
                "encode_s": 0.0, "comm_s": step_s / 2, "decode_s": 0.0, "update_s": 0.0, "step_s": step_s,
                "sim_time_s": step_s * k, "wire_bytes": 100, "bits_per_param_up": 32.0 / slope,
                "bits_per_param_down": 32.0 / slope, "params": 25, "eval_loss": math.nan,
                "eval_acc": 0.5 if k == n else math.nan,
            })
    return pd.DataFrame(rows)


@pytest.mark.slow
def test_run_report_has_every_section_and_the_hand_computed_figures(tmp_path):
    steps = _run_steps()
    meta = {"status": "complete", "config": {"workload": "mlp", "workers": 4, "steps": 10},
            "argv": ["/usr/bin/lionsim", "bench", "--workload", "mlp", "--out", str(tmp_path)],
            "versions": {"torch": "2.13.0"}, "timing": {"comm_s": "modelled: test"}}
    write_run(tmp_path, steps, summarize(steps, SummaryRule(target_loss=5.0)), meta)
    text = write_report(tmp_path).read_text()
    for heading in ("## Configuration", "## How each time was obtained", "## Summary",
                    "## Which strategy reaches the target loss first", "## Plots", "## Environment", "## Reproduce"):
        assert heading in text
    # speedup 2 ms / 1 ms; B reaches loss 5 at step 3 (smoothed window 1: 10 - 2*3 = 4 <= 5 first at k = 3:
    # trailing mean over ceil(10% of 10) = 1 step), at 3 ms; A at step 5, 10 ms.
    assert "| dlion-mavo@int8-allreduce | " in text and "| 2.00x | 3.33x |" in text
    assert "| 4 | 1gbe | 5.0000 | **dlion-mavo@int8-allreduce** | 10.0 ms | 3.00 ms |" in text
    assert "    lionsim bench --workload mlp --out" in text
    for line in text.splitlines():
        if line.startswith("!["):
            assert (tmp_path / line.split("(", 1)[1].rstrip(")")).is_file()


def _sweep_summary() -> pd.DataFrame:
    """Two seeds x workers 4, 8 x the paper's four methods on one network; accuracies chosen so the
    paper's ordering holds at 4 workers and SIGNUM beats D-Lion Avg at 8."""
    acc = {4: {"sgdm": (0.50, 0.52), "signum-mv": (0.60, 0.62), "dlion-avg": (0.70, 0.72), "dlion-mavo": (0.71, 0.73)},
           8: {"sgdm": (0.50, 0.50), "signum-mv": (0.75, 0.75), "dlion-avg": (0.70, 0.70), "dlion-mavo": (0.80, 0.80)}}
    rows = []
    for workers, by_method in acc.items():
        for strategy, values in by_method.items():
            for seed, value in enumerate(values):
                rows.append({"cell": f"vit-w{workers}-1gbe-s{seed}-{strategy}", "workload": "vit", "seed": seed,
                             "workers": workers, "network": "1gbe", "strategy": strategy, "transport": "t",
                             "final_loss": 1.0, "final_eval_acc": value, "step_s": 0.001, "speedup": 1.0,
                             "time_to_target_s": 0.01 if strategy == "dlion-mavo" else 0.02, "target_loss": 1.5})
    return pd.DataFrame(rows)


def test_sweep_report_accuracy_table_beside_the_paper(tmp_path, monkeypatch):
    """A sweep of the paper's own setup (vit paper on CIFAR-10 at local batch 32) has the paper's
    figures beside its own, and the ordering checked per worker count."""
    monkeypatch.setattr(lionsim.reports.plots, "plot_dir", lambda d, **_: ("sweep", []), raising=False)
    _sweep_summary().to_csv(tmp_path / "sweep_summary.csv", index=False)
    bench = {"model_size": "paper", "data": "/data/cifar", "batch_size": 32, "steps": 100}
    (tmp_path / "sweep.json").write_text(json.dumps({"grid": {"workers": [4, 8]}, "cells": 16, "bench": bench,
                                                     "argv": ["lionsim", "sweep", "--workers", "4,8"]}))
    text = write_report(tmp_path).read_text()
    assert "Same model, data and local batch as the paper" in text
    assert "| sgdm@t | 51.0 ± 1.4 | 50.0 ± 0.0 | 79.3 | 81.8 |" in text
    assert "- 4 workers: the paper's ordering (SGD-M < SIGNUM < D-Lion Avg <= D-Lion MaVo) holds." in text
    assert "- 8 workers: the paper's ordering" in text and "SIGNUM 75.0 >= D-Lion Avg 70.0" in text
    assert "**dlion-mavo@t**" in text
    assert "    lionsim sweep --workers 4,8" in text


def test_the_paper_is_cited_and_a_run_unlike_it_is_called_not_comparable(tmp_path, monkeypatch):
    monkeypatch.setattr(lionsim.reports.plots, "plot_dir", lambda d, **_: ("sweep", []), raising=False)
    _sweep_summary().to_csv(tmp_path / "sweep_summary.csv", index=False)
    bench = {"model_size": "tiny", "steps": 40, "batch_size": 32, "data": None}
    (tmp_path / "sweep.json").write_text(json.dumps({"grid": {"workers": [4, 8]}, "bench": bench}))
    text = write_report(tmp_path).read_text()
    assert "REFERENCE.md" not in text and "Liu et al., Distributed Lion, NeurIPS 2024" in text
    section = text.split("## Accuracy by worker count\n\n", 1)[1]
    assert section.startswith("Not comparable: this run trains vit tiny on generated pattern images at local "
                              "batch 32 for 40 steps, the paper a ViT of 6 layers and 8 heads")


@pytest.mark.parametrize("bench", [None, {"model_size": "tiny", "steps": 40, "batch_size": 32, "data": None},
                                   {"model_size": "paper", "steps": 40, "batch_size": 32, "data": None},
                                   {"model_size": "paper", "steps": 40, "batch_size": 64, "data": "/data/cifar"}])
def test_a_proxy_workloads_report_leaves_the_papers_figures_out(tmp_path, monkeypatch, bench):
    """The paper's 90.9% for dlion-mavo stood beside a proxy workload's accuracy under "Not
    comparable". Its figures stand beside a run's only on the paper's model, CIFAR-10 and local
    batch 32; elsewhere the section says where they are, and still checks the paper's ordering."""
    from lionsim.reports.paper import PAPER_ACCURACY

    monkeypatch.setattr(lionsim.reports.plots, "plot_dir", lambda d, **_: ("sweep", []), raising=False)
    _sweep_summary().to_csv(tmp_path / "sweep_summary.csv", index=False)
    (tmp_path / "sweep.json").write_text(json.dumps({"grid": {"workers": [4, 8]}, **({"bench": bench} if bench else {})}))
    section = write_report(tmp_path).read_text().split("## Accuracy by worker count\n\n", 1)[1].split("\n## ")[0]
    assert section.startswith("Not comparable: ")
    assert "The paper's figures are left out here; they are in lionsim/reports/paper.py" in section
    assert "paper, 4" not in section and "| run | 4 workers | 8 workers |\n" in section
    figures = {f"{v:.1f}" for by_n in PAPER_ACCURACY.values() for v in by_n.values()}
    assert not any(f"| {v} |" in section for v in figures)  # none of the paper's figures in the table
    assert "- 8 workers: the paper's ordering" in section  # the ordering, checked on the run's own


def test_a_run_of_the_papers_model_data_and_batch_says_only_the_length_differs():
    assert comparability("paper", "/data/cifar", 100, 32).startswith("Same model, data and local batch as the paper")
    assert comparability("paper", "/data/cifar", 100, 64).startswith("Not comparable")
    assert comparability("paper", None, 100, 32).startswith("Not comparable")


@pytest.mark.parametrize("setup, expected", [
    (lambda d: None, "holds neither steps.csv"),
    (lambda d: (d / "sweep_summary.csv").write_text("not,a\ncsv\n"), "is missing column(s)"),
    (lambda d: (d / "steps.csv").write_bytes(b"\xff\xfe\x00garbage"), "malformed CSV"),
])
def test_bad_directories_are_one_line_exit_2(tmp_path, capsys, setup, expected):
    setup(tmp_path)
    with pytest.raises(SystemExit) as done:
        main(["report", str(tmp_path)])
    err = capsys.readouterr().err
    assert done.value.code == 2 and expected in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "report.md").exists()


def test_a_missing_directory_is_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        main(["report", str(tmp_path / "absent")])
    err = capsys.readouterr().err
    assert done.value.code == 2 and "does not exist" in err and len(err.strip().splitlines()) == 1


def test_only_a_vit_sweep_is_set_beside_the_paper(tmp_path, monkeypatch):
    monkeypatch.setattr(lionsim.reports.plots, "plot_dir", lambda d, **_: ("sweep", []), raising=False)
    _sweep_summary().assign(workload="mlp").to_csv(tmp_path / "sweep_summary.csv", index=False)
    text = write_report(tmp_path).read_text()
    assert "| sgdm@t | 51.0 ± 1.4 | 50.0 ± 0.0 |\n" in text
    assert "paper," not in text and "ordering" not in text


def test_a_sweep_json_that_is_not_an_object_is_one_line(tmp_path, capsys):
    _sweep_summary().to_csv(tmp_path / "sweep_summary.csv", index=False)
    (tmp_path / "sweep.json").write_text("[1, 2]\n")
    with pytest.raises(SystemExit) as done:
        main(["report", str(tmp_path)])
    err = capsys.readouterr().err
    assert done.value.code == 2 and "holds a JSON array; expected an object" in err and len(err.strip().splitlines()) == 1


def test_run_report_says_what_each_column_holds_and_where_the_target_came_from(tmp_path, monkeypatch):
    """final loss names its window, comm says total (and exposed beside it), to target and the
    target's origin are explained, and every loss has one format (2.5 and 2.4567 would mix)."""
    monkeypatch.setattr(lionsim.reports.plots, "plot_dir", lambda d, **_: ("run", []), raising=False)
    steps = _run_steps().assign(comm_exposed_s=lambda f: f["comm_s"] / 2)
    steps["loss"] = steps["loss"] / 4 + 0.0001 * steps["step"]  # losses of 4 decimals
    write_run(tmp_path, steps, summarize(steps), {"config": {"backend": "sim", "steps": 10}})
    text = write_report(tmp_path).read_text()
    assert "| final loss (mean of last 10% of steps) |" in text
    assert "| comm (total) | comm (exposed) |" in text and "| 1.00 ms | 0.500 ms |" in text
    assert "to target: adamw@fp32-allreduce's time to reach the target loss / this run's" in text
    # The default target: the baseline's smoothed loss at step 9 of 10 (window 1): (10 - 9) / 4 + 0.0009.
    assert "Target loss 0.2509: the baseline's smoothed training loss at 90% of its steps" in text
    assert "adamw@fp32-allreduce's loss at step 9 of 10" in text
    final = {row.split(" | ")[1] for row in text.splitlines() if row.startswith("| adamw@") or row.startswith("| dlion")}
    assert final == {"0.0010"}  # (10 - 10) / 4 + 0.001 for A; B floored at 0, + 0.001 (.4g printed 0.001)
    assert "| 0.2509 |" in text  # the target in the first-to-target table, in the same format
    assert "modelled wall clock" in text and "or measured" not in text


def test_sweep_report_says_how_its_times_were_obtained(tmp_path, monkeypatch):
    monkeypatch.setattr(lionsim.reports.plots, "plot_dir", lambda d, **_: ("sweep", []), raising=False)
    _sweep_summary().assign(backend="gloo").to_csv(tmp_path / "sweep_summary.csv", index=False)
    for cell, net in (("c1", "1gbe"), ("c2", "10gbe"), ("c3", "1gbe")):
        (tmp_path / "cells" / cell).mkdir(parents=True)
        (tmp_path / "cells" / cell / "run.json").write_text(json.dumps(
            {"timing": {"comm_s": f"measured on {net}", "compute_s": "measured: median"}}))
    text = write_report(tmp_path).read_text()
    section = text.split("## How each time was obtained\n\n", 1)[1].split("\n\n##", 1)[0]
    assert section.splitlines() == ["- `comm_s`: measured on 1gbe", "- `comm_s`: measured on 10gbe",
                                    "- `compute_s`: measured: median"]
    assert "step: measured (on gloo) ms per step" in text
    assert "Time to target: measured (on gloo) wall clock" in text and "or measured" not in text
    assert "\n\nlionsim:" not in text and "Final eval accuracy % on the workload's held-out set" in text


def test_a_sweeps_time_notes_are_one_entry_per_claim_in_the_sweeps_order(tmp_path):
    """Four cells over 1gbe, 10gbe and 2, 4 workers listed comm_s four times (10gbe first)."""
    from lionsim.reports.markdown import _cells_records, _cells_timing

    grid = {"workers": [2, 4], "network": ["1gbe", "10gbe"]}
    cells = []
    for workers in grid["workers"]:
        for network in grid["network"]:
            cell = f"mlp-w{workers}-{network}-s0-adamw@fp32-allreduce"
            cells.append(cell)
            (tmp_path / "cells" / cell).mkdir(parents=True)
            timing = {"compute_s": "modelled: FLOPs at peak",
                      "comm_s": f"modelled: the collectives priced on {network} for {workers} workers, per bucket",
                      "comm_model_s": "equal to comm_s"}
            record = {"config": {"workers": workers, "network": network}, "network": {"name": network},
                      "timing": timing}
            (tmp_path / "cells" / cell / "run.json").write_text(json.dumps(record))
    lines = _cells_timing(_cells_records(tmp_path, cells), grid).splitlines()
    assert [line.split("`")[1] for line in lines[:-1]] == ["compute_s", "comm_s", "comm_model_s"]
    assert lines[-1].startswith("- library: comm priced by alpha-beta")  # one line for the cells alike
    assert lines[1] == ("- `comm_s`: modelled: the collectives priced on each cell's network (1gbe, 10gbe) for its "
                        "worker count (2, 4), per bucket")
    alone = _cells_timing(_cells_records(tmp_path, cells[:1]), grid).splitlines()  # the others' folders still read
    assert alone == lines


def _reproduce(report: Path) -> list[str]:
    """The first command of a report's Reproduce section, as argv (its `cd FOLDER &&` left out)."""
    return reproduced(report)[1]


def reproduced(report: Path) -> tuple[str | None, list[str]]:
    """The first command of a report's Reproduce section: the folder it says to run it from (`cd
    FOLDER && `, None where it says none) and the command as argv."""
    words = shlex.split(report.read_text().split("## Reproduce\n\n")[1].splitlines()[0])
    return (words[1], words[3:]) if words[0] == "cd" and words[2] == "&&" else (None, words)


@pytest.mark.parametrize("made", [
    [*TINY_BENCH, "-s", "adamw", "--out", "run", "--overwrite"],  # the README's set-up types --overwrite
    [*TINY_BENCH, "-s", "adamw", "--out", "run"],  # a first run into a new folder needs none
    ["estimate", "-m", "gpt2-124m", "-s", "adamw", "--out", "run"],
])
def test_the_reproduce_command_runs_where_the_run_is(made, tmp_path, capsys, monkeypatch):
    """The report's command, run where the run was made, makes its folder again: it printed
    `lionsim bench ...` without --overwrite, which that folder (holding the finished run) refused.
    Its --out is relative: the report says to run it from that folder (`cd FOLDER && `), and so,
    from any other, it makes the same folder again."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["lionsim", *made])  # bench records the process's own command line
    code, _, err = run_cli(made, capsys)
    assert code == 0, err
    assert run_cli(["report", "run"], capsys)[0] == 0
    there, again = reproduced(tmp_path / "run" / "report.md")
    assert again[:len(made) + 1] == ["lionsim", *made] and again.count("--overwrite") == 1
    assert there == str(tmp_path.resolve())  # the working directory, as the system names it
    monkeypatch.chdir(there)
    monkeypatch.setattr(sys, "argv", again)
    code, _, err = run_cli(again[1:], capsys)
    assert code == 0, err
    assert (tmp_path / "run" / ("run.json" if made[0] == "bench" else "estimate.json")).is_file()


def test_a_measured_run_reported_names_the_link_as_its_table_does_and_reproduces_in_a_fresh_directory(tmp_path):
    """A gloo run left at the default --network (run.json's network_given false), resumed: the
    report's title, configuration and time-to-target tables name the link measured ("loopback,
    measured", as the bench table and plots do), never the default preset that priced nothing
    measured; its Reproduce command is the one that made it without --resume (which fails in a
    fresh directory), with --overwrite once (its --out holds the run)."""
    from lionsim.reports.summary import run_summary
    from tests.helpers.frames import frame, rows

    steps = frame(rows("adamw", 8, backend="gloo", comm=0.0003, measured=0.0015))
    argv = ["/usr/bin/lionsim", "bench", "--backend", "gloo", "--ranks", "2", "-w", "mlp", "--out", "gres",
            "--resume", "--overwrite"]
    meta = {"status": "complete", "command": "bench", "argv": argv, "ranks_on_one_host": True,
            "network_given": False, "network": {"name": "1gbe"},
            "config": {"workload": "mlp", "workers": 4, "steps": 8, "network": "1gbe", "backend": "gloo"}}
    write_run(tmp_path, steps, run_summary(steps, meta), meta)
    text = write_report(tmp_path).read_text()
    lines = text.splitlines()
    assert lines[0] == "# lionsim report: mlp, 4 workers, loopback, measured"
    assert "| network | loopback, measured |" in lines
    assert any(line.startswith("| 4 | loopback, measured | ") for line in lines)
    assert "1gbe" not in text.split("## Plots")[0].split("## How each time was obtained")[0]
    assert "    lionsim bench --backend gloo --ranks 2 -w mlp --out gres --overwrite" in lines
    assert "--resume" not in text and text.count("--overwrite") == 1
    given = {**meta, "network_given": True}  # a --network given prices the link: named beside it
    write_run(tmp_path, steps, run_summary(steps, given), given)
    assert write_report(tmp_path).read_text().splitlines()[0] == \
        "# lionsim report: mlp, 4 workers, loopback, measured (model: 1gbe)"


def test_an_estimate_sized_by_params_is_named_by_its_count_not_params(tmp_path, capsys):
    """`estimate --params 1e9` records model "params"; report.md said "estimate of params" and the
    to-target plot "Modelled time to target: params, 32 workers"."""
    from lionsim.reports.columns import model_name

    assert model_name({"model": "params", "params": 1e9}) == "1,000,000,000 params"
    assert model_name({"model": "gpt2-124m", "params": 124439808}) == "gpt2-124m"
    out = tmp_path / "est"
    code, _, err = run_cli(["estimate", "--params", "1e9", "--tokens-per-worker", "1024", "--workers", "8",
                            "-s", "adamw", "--out", str(out)], capsys)
    assert code == 0, err
    code, _, err = run_cli(["report", str(out)], capsys)
    text = (out / "report.md").read_text()
    assert code == 0 and text.startswith("# lionsim report: estimate of 1,000,000,000 params, 8 workers"), text[:200]
    assert "| model | 1,000,000,000 params |" in text and "of params" not in text


def test_report_says_plots_were_redrawn_only_where_it_drew_some(tmp_path, capsys):
    """An estimate without --from-run has no plot, and `lionsim report` said "plots redrawn beside it"."""
    out = tmp_path / "est"
    code, _, err = run_cli(["estimate", "--model", "gpt2-124m", "--workers", "4", "--network", "10gbe", "-s", "adamw",
                            "--out", str(out)], capsys)
    assert code == 0, err
    code, said, err = run_cli(["report", str(out)], capsys)
    assert code == 0 and "".join(said.split()) == f"wrote{out / 'report.md'}(noplots)", (said, err)  # path may fold
    assert not list(out.glob("*.png"))


def test_a_diverged_run_is_marked_in_the_run_reports_summary():
    """report.md showed a run that diverged at step 5 as loss n/a beside a speedup, with no word
    of the divergence (bench's table says "diverged at 5")."""
    from lionsim.reports.markdown import _summary_rows

    steps = _run_steps()
    b = steps["strategy"] == "dlion-mavo"
    steps["diverged_at_step"] = math.nan
    steps.loc[b, "diverged_at_step"] = 5
    steps.loc[b & (steps["step"] >= 5), "loss"] = math.nan
    text = _summary_rows(summarize(steps, SummaryRule(target_loss=5.0)), "modelled")
    assert "| dlion-mavo@int8-allreduce | diverged at step 5 |" in text, text
    assert "| adamw@fp32-allreduce (baseline) | 0.0000 |" in text  # its last step's loss (window 1): 10 - 10
    assert "- diverged at step N: at step N a loss or gradient went non-finite, or the loss passed 100x its first step's" in text


def test_a_sweep_reports_summary_counts_the_seeds_that_diverged(tmp_path, monkeypatch):
    """Of three seeds one diverged: the summary printed the other two's mean loss beside
    'seeds 3', and a run whose every seed diverged as n/a, with no word of divergence."""
    monkeypatch.setattr(lionsim.reports.plots, "plot_dir", lambda d, **_: ("sweep", []), raising=False)
    rows = [{"cell": f"mlp-w4-1gbe-s{seed}-{s}", "workload": "mlp", "seed": seed, "workers": 4, "network": "1gbe",
             "strategy": s, "transport": "t", "final_loss": loss, "final_eval_acc": 0.5, "step_s": 0.001,
             "speedup": (1.0, 2.0, 9.0)[seed], "time_to_target_s": math.nan, "target_loss": 1.5, "diverged_at_step": at}
            for seed, (a, b) in enumerate([(1.0, math.nan), (3.0, math.nan), (math.nan, math.nan)])
            for s, loss, at in (("adamw", a, 7 if seed == 2 else math.nan), ("sgdm", b, 2))]
    pd.DataFrame(rows).to_csv(tmp_path / "sweep_summary.csv", index=False)
    (tmp_path / "sweep.json").write_text(json.dumps({"grid": {"workers": [4]}, "cells": 6, "argv": ["lionsim"]}))
    text = write_report(tmp_path).read_text()
    assert "| adamw@t | 4 | 1gbe | 3 | 2.0000 ± 1.4142 (diverged in 1 of 3 seeds) |" in text  # mean, sd of 1 and 3
    assert "| sgdm@t | 4 | 1gbe | 3 | diverged in 3 of 3 seeds |" in text
    # the speedup too is the seeds' that did not diverge: 1.0 and 2.0 (not 9.0); none for sgdm
    assert re.search(r"\| adamw@t \|[^\n]*\| 1\.50 ± 0\.71 \|\n", text), text
    assert re.search(r"\| sgdm@t \|[^\n]*\| - \|\n", text), text
    assert "diverged in K of M seeds: K cells diverged (a loss or gradient went non-finite, or the loss passed 100x" in text


def test_a_report_says_a_sim_run_with_measured_compute_is_part_measured():
    from lionsim.reports.markdown import _clock

    assert _clock("sim") == _clock(None) == "modelled"
    assert _clock("sim", "measured") == "part measured (compute), part modelled (network)"
    assert _clock("sim", "h100") == "modelled" and _clock("gloo", "measured") == "measured (on gloo)"


def test_an_estimate_reports_counts_grouped_as_the_tables_print_them(capsys, tmp_path):
    """report.md showed params as `354823168` where every table groups digits (`354,823,168`)."""
    out = tmp_path / "e"
    assert run_cli(["estimate", "--model", "gpt2-345m", "-s", "adamw", "--workers", "1024", "--out", out], capsys)[0] == 0
    assert run_cli(["report", out], capsys)[0] == 0
    text = (out / "report.md").read_text()
    assert "| params | 354,823,168 |" in text and "| workers | 1,024 |" in text


def test_a_sweeps_target_loss_is_each_cells_own_with_its_range():
    """Each cell's baseline sets its own target (the default rule): the report gives each group's range
    and the sweep's as `estimate --from-run` words it, not one mean figure per group."""
    from lionsim.reports.markdown import _first_to_target
    from lionsim.reports.summary import target_words

    targets = {(4, 0): 0.848737, (4, 1): 0.760348, (8, 0): 0.756562, (8, 1): 0.717891}
    rows = [{"workload": "mlp", "workers": w, "network": "1gbe", "seed": seed, "strategy": strategy,
             "transport": "fp32-allreduce", "time_to_target_s": 0.05, "target_loss": target,
             "target_rule": "adamw@fp32-allreduce's loss at step 90 of 100", "baseline": "adamw@fp32-allreduce"}
            for (w, seed), target in targets.items() for strategy in ("adamw", "lion")]
    text = _first_to_target(pd.DataFrame(rows), "modelled")
    lines = {line.split("|")[1].strip(): line.split("|")[3].strip() for line in text.splitlines() if line.startswith("| 4")
             or line.startswith("| 8")}
    assert lines == {"4": "0.7603 to 0.8487", "8": "0.7179 to 0.7566"}
    words = "each cell's own (adamw@fp32-allreduce's loss late in its run: 0.7179 to 0.8487)"
    assert target_words(targets.values(), "adamw@fp32-allreduce") == words
    assert f"Target loss {words}:" in text
    assert target_words([0.8, 0.8], "adamw@fp32-allreduce") == "0.8 in every cell"


def test_a_run_reports_summary_of_one_run_has_no_speedup_and_a_diverged_run_no_win():
    """As bench's table: one run alone is its own baseline (1.00x said nothing), and a run that
    diverged showed its step-time ratio over the steps before (2.00x) as a speedup."""
    from lionsim.reports.markdown import _summary_rows

    steps = _run_steps()
    one = _summary_rows(summarize(steps[steps["strategy"] == "adamw"], SummaryRule(target_loss=5.0)), "modelled")
    header = one.splitlines()[0]
    assert "speedup" not in header and "to target" not in header and "(baseline)" not in one
    assert "- No speedup columns: one run, nothing to compare it with" in one
    b = steps["strategy"] == "dlion-mavo"
    steps["diverged_at_step"] = math.nan
    steps.loc[b, "diverged_at_step"] = 5
    steps.loc[b & (steps["step"] >= 5), "loss"] = math.nan
    summary = summarize(steps, SummaryRule(target_loss=5.0))
    assert summary.set_index("strategy").speedup["dlion-mavo"] == pytest.approx(2.0)  # 2 ms / 1 ms, in the CSV
    row = next(line for line in _summary_rows(summary, "modelled").splitlines() if line.startswith("| dlion-mavo"))
    assert "2.00x" not in row and row.split(" | ")[-2] == "-", row
