"""The band where a reader looks for it: to_target.png's caption says why there is none and which run
its steps are counted against, its "no figure" reasons stay inside the plot, and report.md's time-to-target
tables carry the band and the speedup's band that the command's table prints."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import lionsim.reports.plots.to_target as to_target_plots
from lionsim.cli import app
from lionsim.estimate import EstimateConfig, estimate
from lionsim.numbers import run_duration
from tests.estimate.test_from_run import BASE, CELLS, RUNS, bench_dir, sweep_dir
from tests.helpers.figures import cut_texts, drawn_texts


def drawn(frame: pd.DataFrame, monkeypatch, tmp_path: Path):
    got = {}
    monkeypatch.setattr(to_target_plots, "save", lambda fig, path: got.update(fig=fig) or [])
    to_target_plots.plot_to_target(frame, tmp_path / "to_target.png")
    return got["fig"]


def caption(fig) -> str:
    return " ".join(fig._supxlabel.get_text().split())


def test_the_caption_says_why_there_is_no_band(tmp_path, monkeypatch):
    frame = estimate(EstimateConfig(**BASE, strategies=RUNS[:2], from_run=str(bench_dir(tmp_path))))
    said = caption(drawn(frame, monkeypatch, tmp_path))
    assert "No band: one bench run, no spread to measure (a sweep over seeds gives one)." in said
    assert "Whiskers" not in said


def test_the_caption_names_the_trained_runs_reference_apart_from_the_baseline(tmp_path, monkeypatch):
    """--baseline dlion-mavo: the bars mark dlion-mavo (baseline); the steps are adamw's, the run's own."""
    frame = estimate(EstimateConfig(**BASE, strategies=RUNS[:2], baseline="dlion-mavo", steps=1000,
                                    from_run=str(bench_dir(tmp_path))))
    fig = drawn(frame, monkeypatch, tmp_path)
    said = caption(fig)
    assert ("Steps: adamw@fp32-allreduce's (the trained runs' reference) from --steps 1000, not from the target, "
            "x each run's steps-to-target ratio to it; speedup against dlion-mavo@int8-allreduce.") in said
    assert "(the baseline)" not in said
    assert "dlion-mavo@int8-allreduce (baseline)" in [t.get_text() for t in fig.axes[0].get_yticklabels()]


def test_a_long_no_figure_reason_is_wrapped_inside_and_keeps_the_plot_area(tmp_path, monkeypatch):
    frame = estimate(EstimateConfig(**BASE, strategies=["adamw", "adamw@bf16-allreduce"],
                                    from_run=str(bench_dir(tmp_path))))
    long = frame.set_index("transport").loc["bf16-allreduce", "to_target_note"]
    assert len(long) > 150  # the reason the plot cut at its edge
    fig = drawn(frame, monkeypatch, tmp_path)
    texts = [t.get_text() for t in drawn_texts(fig)]
    note = next(t for t in texts if t.startswith("no figure"))
    assert note.replace("\n", " ") == "no figure: never trained over bf16-allreduce, which rounds the values it carries"
    assert max(len(line) for line in note.splitlines()) <= to_target_plots.NO_FIGURE_WIDTH
    assert not cut_texts(fig)
    # the bars' area as wide as with a reason of one word
    short = frame.assign(to_target_note=["" if t == "fp32-allreduce" else "x" for t in frame["transport"]])
    width = lambda f: f.axes[0].get_position().width  # noqa: E731
    assert abs(width(fig) - width(drawn(short, monkeypatch, tmp_path / "short"))) < 0.01


def test_the_speedups_band_is_in_brackets_beside_its_bar(tmp_path, monkeypatch):
    frame = estimate(EstimateConfig(**(BASE | {"workers": 256, "network": "h100x8-100gbe"}), strategies=RUNS[:2],
                                    from_run=str(sweep_dir(tmp_path, CELLS))))
    dlion = frame.set_index("strategy").loc["dlion-mavo"]
    texts = [t.get_text() for t in drawn_texts(drawn(frame, monkeypatch, tmp_path))]
    assert any(t.endswith(f"x ({dlion.to_target_speedup_lo:.2f}-{dlion.to_target_speedup_hi:.2f}x)") for t in texts)


def test_report_of_an_estimate_sweep_carries_both_bands(tmp_path):
    out = tmp_path / "est"
    args = ["estimate", "--params", "2e8", "--tokens-per-worker", "1024", "--network", "h100x8-100gbe",
            "-s", "adamw", "-s", "dlion-mavo", "--from-run", str(sweep_dir(tmp_path, CELLS)),
            "--sweep", "workers=64,128", "--out", str(out)]
    assert CliRunner().invoke(app, args).exit_code == 0
    assert CliRunner().invoke(app, ["report", str(out)]).exit_code == 0
    report = (out / "report.md").read_text()
    sweep = pd.read_csv(out / "sweep.csv")
    for row in sweep[sweep["strategy"] == "dlion-mavo"].itertuples(index=False):
        assert row.time_to_target_hi_s < 86400  # h:mm:ss at both ends: no unit to share
        assert (f"{run_duration(row.time_to_target_s)} ({run_duration(row.time_to_target_lo_s)}-"
                f"{run_duration(row.time_to_target_hi_s)})") in report
        assert (f"{row.to_target_speedup:.2f}x ({row.to_target_speedup_lo:.2f}-{row.to_target_speedup_hi:.2f}x)"
                in report)
    assert "In brackets: the band, the fits' residual spread." in report
    assert ("In brackets: the speedup band: the baseline's time over this run's at both bands' low ends and at both "
            "high ends, each pair at the same baseline's steps, so their spread counts once.") in report


def test_report_of_one_estimate_has_the_speedups_band_column(tmp_path):
    out = tmp_path / "est"
    args = ["estimate", "--params", "2e8", "--tokens-per-worker", "1024", "--workers", "256", "--network",
            "h100x8-100gbe", "-s", "adamw", "-s", "dlion-mavo", "--from-run", str(sweep_dir(tmp_path, CELLS)),
            "--out", str(out)]
    assert CliRunner().invoke(app, args).exit_code == 0
    assert CliRunner().invoke(app, ["report", str(out)]).exit_code == 0
    report = (out / "report.md").read_text()
    row = pd.read_csv(out / "estimate.csv").set_index("strategy").loc["dlion-mavo"]
    assert "| run | convergence of | steps | time | band | speedup | speedup band | phases | note |" in report
    lo, hi = row.to_target_speedup_lo, row.to_target_speedup_hi
    assert f"| {row.to_target_speedup:.2f}x | {lo:.2f}-{hi:.2f}x |" in report


def test_the_report_of_a_sweep_without_a_band_says_why(tmp_path):
    out = tmp_path / "est"
    args = ["estimate", "--params", "2e8", "--tokens-per-worker", "1024", "--network", "h100x8-100gbe",
            "-s", "adamw", "-s", "dlion-mavo", "--from-run", str(bench_dir(tmp_path)),
            "--sweep", "workers=64,128", "--out", str(out)]
    assert CliRunner().invoke(app, args).exit_code == 0
    assert CliRunner().invoke(app, ["report", str(out)]).exit_code == 0
    report = (out / "report.md").read_text()
    assert "No band: one bench run, no spread to measure (a sweep over seeds gives one)." in report


def test_an_estimate_sweeps_plot_shades_the_speedups_band(tmp_path, monkeypatch):
    from matplotlib.collections import PolyCollection

    from lionsim.cli.app import main

    got = {}
    monkeypatch.setattr(to_target_plots, "save", lambda fig, path: got.update({Path(path).stem: fig}) or [])
    out = tmp_path / "est"
    try:
        main(["estimate", "--params", "2e8", "--tokens-per-worker", "1024", "--network", "h100x8-100gbe",
              "-s", "adamw", "-s", "dlion-mavo", "--from-run", str(sweep_dir(tmp_path, CELLS)),
              "--sweep", "workers=64,128", "--out", str(out)])
    except SystemExit as done:
        assert done.code == 0
    dlion = pd.read_csv(out / "sweep.csv").query("strategy == 'dlion-mavo'")
    bottom = got["to_target"].axes[1]
    shades = [c for c in bottom.collections if isinstance(c, PolyCollection)]
    assert len(shades) == 1  # dlion's: the baseline's speedup against itself has no band
    ys = shades[0].get_paths()[0].vertices[:, 1]
    assert min(ys) == pytest.approx(dlion["to_target_speedup_lo"].min())
    assert max(ys) == pytest.approx(dlion["to_target_speedup_hi"].max())
    assert "Shaded below: the speedup's band" in caption(got["to_target"])


def test_the_caption_of_a_line_through_two_counts_says_why_once(tmp_path, monkeypatch):
    root = sweep_dir(tmp_path, {(4, 0): {RUNS[0]: 90, RUNS[1]: 72}, (8, 0): {RUNS[0]: 90, RUNS[1]: 83}})
    frame = estimate(EstimateConfig(**BASE, strategies=RUNS[:2], from_run=str(root)))
    assert "fitted on 2 counts: no band" in frame["to_target_note"].iloc[1]
    said = caption(drawn(frame, monkeypatch, tmp_path))
    assert "No band: fitted through 2 worker counts, no spread to measure." in said and said.count("no band") == 0
