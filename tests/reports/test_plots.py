"""lionsim.reports.plots: every plot function on small frames, the palette, and `lionsim plot DIR`
on each kind of directory (run, sweep, estimate sweep, comm) and on bad ones."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgb

from lionsim.cli.app import main
from lionsim.errors import LionsimError
from lionsim.reports import STEP_COLUMNS, summarize
from lionsim.reports.plots import PALETTE, plot_comm, plot_dir, plot_run, plot_sweep, run_colours, run_styles
from lionsim.reports.plots.run import twins
from lionsim.reports.plots.sweep import crossings
from lionsim.reports.summary import split_runs
from tests.helpers.cli import run_cli

pytestmark = pytest.mark.plots  # the plot tests: every figure rendered for real

NAN = math.nan
MIN_RGB_DISTANCE = 75.0  # of 441 (black to white), 0-255 per channel


def _run_cli(args, capsys):
    with pytest.raises(SystemExit) as exc:
        main(args)
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


def _files(directory: Path) -> set[str]:
    return {p.name for p in directory.iterdir() if p.suffix in (".png", ".svg")}


def _step(strategy, k, loss, *, transport="fp32-allreduce", workers=2, network="1gbe", seed=0, eval_acc=NAN,
          eval_loss=NAN, comm=0.02, wire=4000.0):
    return {"strategy": strategy, "transport": transport, "workers": workers, "network": network, "backend": "sim",
            "workload": "toy", "seed": seed, "step": k, "loss": loss, "compute_s": 0.1, "encode_s": 0.0001,
            "comm_s": comm, "decode_s": 0.0, "update_s": 0.001, "step_s": 0.1011 + comm,
            "sim_time_s": (0.1011 + comm) * k, "wire_bytes": wire, "bits_per_param_up": 32.0,
            "bits_per_param_down": 32.0, "params": 1000, "eval_loss": eval_loss, "eval_acc": eval_acc}


# --- palette -------------------------------------------------------------------------------


def test_palette_colours_are_pairwise_distinct():
    labels = [f"s{i}@t" for i in range(len(PALETTE))]
    rgb = [np.array(to_rgb(c)) * 255 for c in run_colours(labels).values()]
    assert len(rgb) >= 20
    worst = min(np.linalg.norm(a - b) for a, b in itertools.combinations(rgb, 2))
    assert worst >= MIN_RGB_DISTANCE
    # past the palette, colour + line style stays unique for 40 runs; the baseline is thicker
    styles = run_styles([f"s{i}@t" for i in range(40)], baseline="s3@t")
    assert len({(s["color"], s["linestyle"]) for s in styles.values()}) == 40
    assert styles["s3@t"]["linewidth"] > styles["s0@t"]["linewidth"]


# --- run plots -----------------------------------------------------------------------------


def test_plot_run_one_step_one_strategy_no_eval(tmp_path):
    steps = pd.DataFrame([_step("lion", 1, 2.3)])[STEP_COLUMNS]
    paths = plot_run(tmp_path, steps, summarize(steps))
    stems = ["loss_vs_time", "loss_vs_step", "time_breakdown", "bytes_per_step", "step_time_distribution"]
    assert [p.name for p in paths] == [f"{s}.{e}" for s in stems for e in ("png", "svg")]
    assert all(p.stat().st_size > 1000 for p in paths)
    assert paths[1].read_bytes().lstrip().startswith(b"<?xml")


@pytest.mark.slow
def test_plot_run_thirteen_strategies_with_eval_and_overlap(tmp_path):
    """13 runs (distinct colours), evals, comm_exposed_s (hidden comm), one run identical to another."""
    rows = []
    for i in range(13):
        name = "twin" if i == 12 else f"s{i}"
        for k in (1, 2, 3):
            loss = 2.0 - 0.1 * k * (1 + (0 if i == 12 else i) / 13)
            rows.append(_step(name, k, loss, comm=0.02 * (i + 1), wire=10.0 ** (i % 6),
                              eval_acc=0.2 + 0.01 * i if k == 3 else NAN, eval_loss=loss if k == 3 else NAN))
    steps = pd.DataFrame(rows)[STEP_COLUMNS].assign(comm_exposed_s=lambda d: d["comm_s"] / 2)
    assert twins(split_runs(steps), ("loss", "eval_loss"), "step") == {"twin@fp32-allreduce": ("s0@fp32-allreduce", True)}
    paths = plot_run(tmp_path, steps, summarize(steps))
    assert {"eval_acc_vs_time.png", "eval_acc_vs_step.svg", "time_breakdown.png"} <= {p.name for p in paths}
    colours = set(run_colours(list(dict.fromkeys(steps["strategy"]))).values())
    assert len(colours) == 13


# --- sweep plots ---------------------------------------------------------------------------

RUNS = ["adamw@fp32-allreduce", "dlion-mavo@a2a-1bit", "lion@fp32-allreduce"]
NETWORKS = {"1gbe": 0.11875, "10gbe": 1.1875, "100gbe": 11.875}  # GB/s after efficiency


def make_sweep(workers=(2, 4, 8), seeds=(0, 1), steps=5, eval_acc=True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """sweep_steps and sweep_summary frames per the sweep's column contract: the compressed run is
    slower on compute but sends 32x less, so it wins below some bandwidth (a crossover)."""
    step_rows, summary_rows = [], []
    for w, (net, bw), seed, run in itertools.product(workers, NETWORKS.items(), seeds, RUNS):
        strategy, transport = run.split("@")
        cell = f"toy-w{w}-{net}-s{seed}-{run}"
        wire = 4e6 / (32 if "1bit" in transport else 1)
        for k in range(1, steps + 1):
            loss = 2.3 - 0.1 * k * (1 + 0.05 * seed + 0.02 * RUNS.index(run)) - 0.01 * w
            comm = wire * math.log2(w) / (bw * 1e9)
            step = _step(strategy, k, loss, transport=transport, workers=w, network=net, seed=seed,
                         comm=comm, wire=wire, eval_acc=(0.5 + 0.02 * RUNS.index(run) - 0.01 * w + 0.01 * seed)
                         if eval_acc and k == steps else NAN)
            step["compute_s"] += 0.01 * ("1bit" in transport)
            step["step_s"] += 0.01 * ("1bit" in transport)
            step_rows.append({**step, "cell": cell})
    steps_frame = pd.DataFrame(step_rows)
    for (w, net, seed), group in steps_frame.groupby(["workers", "network", "seed"], sort=False):
        summary = summarize(group[STEP_COLUMNS])
        for _, row in summary.iterrows():
            cell = f"toy-w{w}-{net}-s{seed}-{row['run']}"
            summary_rows.append({"cell": cell, "workload": "toy", "seed": seed, "workers": w, "network": net,
                                 "bandwidth_GBps": NETWORKS[net], "alpha_us": 50.0,
                                 **row.drop(["workload", "seed", "workers", "network"]).to_dict()})
    return steps_frame, pd.DataFrame(summary_rows)


def test_crossings_are_where_the_models_step_times_meet():
    """The model's form, a + bytes/bandwidth: baseline 1 + 8/b, run 2 + 2/b s meet at b = 6 (closed
    form); log-log interpolation put it at 5.2. The drawn line passes through it at 1.0."""
    from lionsim.reports.between import curve

    x = np.array([2.0, 4.0, 8.0, 16.0])
    run, base = 2 + 2 / x, 1 + 8 / x
    assert [c.at for c in crossings(x, base / run, run)] == pytest.approx([6.0])
    xs, ys = curve(x, base / run, run)
    assert np.interp(np.log(6.0), np.log(xs), ys) == pytest.approx(1.0, abs=2e-4)
    assert np.interp(np.log(3.0), np.log(xs), ys) == pytest.approx((1 + 8 / 3) / (2 + 2 / 3), abs=1e-3)
    assert crossings(np.array([1.0, 10.0]), np.array([2.0, 3.0])) == []


@pytest.mark.slow
def test_plot_dir_sweep(tmp_path):
    steps, summary = make_sweep(workers=(2, 8))
    steps.to_csv(tmp_path / "sweep_steps.csv", index=False)
    summary.to_csv(tmp_path / "sweep_summary.csv", index=False)
    kind, paths = plot_dir(tmp_path)
    stems = ["speedup_vs_bandwidth", "time_to_target_speedup_vs_bandwidth", "speedup_vs_workers",
             "time_to_target_speedup_vs_workers", "loss_vs_step", "eval_acc_vs_step", "accuracy_by_workers"]
    assert kind == "sweep" and [p.name for p in paths] == [f"{s}.{e}" for s in stems for e in ("png", "svg")]


@pytest.mark.parametrize("lines, message", [
    (None, "lacks"),  # whole cells gone: the file cut at a cell boundary
    (-3, "step row"),  # the last cell's last lines gone: every cell there, one short
])
def test_plot_dir_sweep_refuses_steps_cut_short(tmp_path, lines, message):
    steps, summary = make_sweep(workers=(2, 8))
    summary.to_csv(tmp_path / "sweep_summary.csv", index=False)
    steps.sort_values("cell", kind="stable").to_csv(tmp_path / "sweep_steps.csv", index=False)  # cell by cell
    text = (tmp_path / "sweep_steps.csv").read_text().splitlines(keepends=True)
    per_cell = len(steps) // steps["cell"].nunique()
    keep = 1 + per_cell * 2 if lines is None else len(text) + lines  # whole lines only
    (tmp_path / "sweep_steps.csv").write_text("".join(text[:keep]))
    with pytest.raises(LionsimError, match=message) as info:
        plot_dir(tmp_path)
    assert "sweep_steps.csv" in str(info.value) and "\n" not in str(info.value)
    assert not _files(tmp_path) - {"sweep_steps.csv", "sweep_summary.csv"}  # nothing drawn


def test_plot_sweep_one_cell_no_eval(tmp_path):
    steps, summary = make_sweep(workers=(2,), seeds=(0,), steps=1, eval_acc=False)
    one = summary[summary["network"] == "1gbe"].head(1)
    paths = plot_sweep(tmp_path, steps[steps["cell"].isin(one["cell"])], one)
    assert "final_loss_by_workers.png" in {p.name for p in paths} and "eval_acc_vs_step.png" not in _files(tmp_path)


# --- comm and estimate sweep ---------------------------------------------------------------


@pytest.mark.slow
def test_comm_out_plots_and_redraw(tmp_path, capsys):
    code, out, err = _run_cli(["comm", "--sizes", "1KB:1MB:x8", "--workers", "2,8", "--collective", "all_gather",
                               "--out", str(tmp_path)], capsys)
    assert code in (0, None), err
    written = _files(tmp_path)
    assert written == {"comm_all_gather.png", "comm_all_gather.svg"}
    for name in written:
        (tmp_path / name).unlink()
    kind, paths = plot_dir(tmp_path)
    assert kind == "comm" and {p.name for p in paths} == written == _files(tmp_path)


def test_plot_comm_measured_beside_model(tmp_path):
    model = pd.DataFrame({"collective": "all_reduce", "algorithm": "ring", "workers": 2, "bytes": [1e3, 1e6],
                          "time_s": [1e-5, 1e-3], "algbw_GBps": [0.1, 1.0], "busbw_GBps": [0.1, 1.0],
                          "source": "model", "network": "10gbe"})
    measured = model.assign(algorithm="gloo", source="measured", network="gloo", time_s=[2e-5, 2e-3],
                            time_p10_s=[1.8e-5, 1.9e-3], time_p90_s=[2.5e-5, 2.2e-3])
    paths = plot_comm(tmp_path, pd.concat([model, measured], ignore_index=True))
    assert [p.name for p in paths] == ["comm_all_reduce.png", "comm_all_reduce.svg"]


def test_the_fitted_profile_is_dotted_with_or_without_the_prior():
    """backends.md: the prior network dashed, the profile --fit wrote dotted; comm leaves the
    prior out without --network, and the fit's line was then drawn dashed, as a prior's."""
    from lionsim.reports.plots.comm import model_styles

    assert model_styles(["10gbe", "fit"], "fit") == {"10gbe": "--", "fit": ":"}
    assert model_styles(["fit"], "fit") == {"fit": ":"}
    assert model_styles(["10gbe", "1gbe"]) == {"10gbe": "--", "1gbe": "-."}


@pytest.mark.slow
@pytest.mark.parametrize("sweep, baseline_only", [("workers=8,16,32", False), ("bandwidth=0.1,1,10", True)])
def test_plot_dir_estimate_sweep(tmp_path, capsys, sweep, baseline_only):
    args = ["estimate", "-m", "gpt2-124m", "--sweep", sweep, "--out", str(tmp_path)]
    args += ["--strategy", "adamw"] if baseline_only else []
    code, _, err = _run_cli(args, capsys)
    assert code in (0, None), err
    (tmp_path / "sweep.png").unlink()
    (tmp_path / "sweep.svg").unlink()
    kind, paths = plot_dir(tmp_path)
    assert kind == "estimate-sweep" and [p.name for p in paths] == ["sweep.png", "sweep.svg"]
    assert all(p.stat().st_size > 1000 for p in paths)


# --- `lionsim plot DIR` --------------------------------------------------------------------


@pytest.mark.slow
def test_cli_plot_run_dir_redraws_the_runs_files(tmp_path, capsys):
    run = tmp_path / "run"
    code, _, err = _run_cli(["bench", "--workload", "mlp", "--steps", "3", "--workers", "2", "--strategy", "lion",
                             "--strategy", "dlion-mavo", "--out", str(run)], capsys)
    assert code in (0, None), err
    written = _files(run)
    assert {"loss_vs_step.png", "loss_vs_step.svg", "time_breakdown.svg", "bytes_per_step.png"} <= written
    for name in written:
        (run / name).unlink()
    code, out, err = _run_cli(["plot", str(run)], capsys)
    assert code in (0, None), err
    assert _files(run) == written and "run plots written" in out


def _junk(d: Path, name: str, text: str | bytes) -> None:
    d.mkdir()
    (d / name).write_bytes(text if isinstance(text, bytes) else text.encode())


@pytest.mark.parametrize(
    "setup, message",
    [
        (lambda d: d.mkdir(), "holds no plottable CSV; expected sweep: sweep_summary.csv + sweep_steps.csv"),
        (lambda d: _junk(d, "comm.csv", "name,value\na,1\n"), "comm.csv is missing column(s): collective"),
        (lambda d: _junk(d, "comm.csv", b"\x00\xff\xfe garbage \x00"), "malformed CSV"),
        (lambda d: _junk(d, "sweep_summary.csv", "cell\nx\n"), "but not sweep_steps.csv"),
        (lambda d: (_junk(d, "sweep.csv", "a,b\n1,2\n"), (d / "crossover.csv").write_text("x\n")), "missing column"),
        (lambda d: _junk(d, "comm.csv", ",".join(["collective", "algorithm", "workers", "bytes", "time_s",
                                                  "busbw_GBps", "source"]) + "\n"), "has no rows"),
    ],
)
def test_cli_plot_bad_dirs(tmp_path, capsys, setup, message):
    d = tmp_path / "d"
    setup(d)
    code, _, err = _run_cli(["plot", str(d)], capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and message in err and "Traceback" not in err


def test_cli_plot_baseline_only_for_runs(tmp_path, capsys):
    steps, summary = make_sweep(workers=(2,), seeds=(0,), steps=2)
    steps.to_csv(tmp_path / "sweep_steps.csv", index=False)
    summary.to_csv(tmp_path / "sweep_summary.csv", index=False)
    code, _, err = _run_cli(["plot", str(tmp_path), "--baseline", "lion"], capsys)
    assert code == 2 and "--baseline applies to a run directory" in err


def test_a_one_step_run_draws_its_loss_as_a_point(tmp_path, monkeypatch, tiny_run):
    from lionsim.reports import files
    from lionsim.reports.plots import run as run_plots

    steps, summary, _ = files.load_run(tiny_run)
    one = steps[steps.step == 1].reset_index(drop=True)
    figures = _run_figures(monkeypatch)
    from lionsim.reports.summary import summarize

    run_plots.plot_run(tmp_path, one, summarize(one))
    fig = figures["loss_vs_step.png"]
    markers = [line.get_marker() for line in fig.axes[0].get_lines() if len(line.get_xdata()) == 1]
    assert "o" in markers


def test_plot_and_report_of_a_file_say_it_is_a_file(tmp_path, capsys):
    path = tmp_path / "steps.csv"
    path.write_text("x\n")
    for command in ("plot", "report"):
        code, _, err = run_cli([command, str(path)], capsys)
        assert code == 2 and err.startswith(f"error: bad DIR {path}: it is a file; accepted: ") and "exist" not in err


def test_plot_and_report_of_a_missing_directory_say_so_alike(tmp_path, capsys):
    """One check for both commands' DIR: the same line, with what each accepts."""
    from lionsim.reports.outdir import PLOT_DIRS

    path = tmp_path / "absent"
    lines = {}
    for command in ("plot", "report"):
        code, _, err = run_cli([command, str(path)], capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        lines[command] = err.strip()
    assert lines["plot"] == f"error: bad DIR {path}: it does not exist; accepted: a directory holding {PLOT_DIRS}"
    assert lines["report"] == (f"error: bad DIR {path}: it does not exist; accepted: a `lionsim bench`, "
                               "`lionsim sweep` or `lionsim estimate` --out directory")
    assert not path.exists()


# --- titles and markers --------------------------------------------------------------------


def _figures(monkeypatch, *modules, draw: bool = False) -> dict:
    """Every figure the `modules` save, by file name, instead of writing it; `draw`: each drawn as
    a save draws it (so a figure that fails to draw still fails), without rendering PNG and SVG."""
    figures = {}

    def keep(fig, path):
        if draw:
            fig.draw_without_rendering()
        figures[Path(path).name] = fig
        return []

    for module in modules:
        monkeypatch.setattr(module, "save", keep)
    return figures


def _run_figures(monkeypatch) -> dict:
    """Every figure plot_run saves (its own, time_breakdown's and step_time_distribution's), drawn
    but not rendered."""
    from lionsim.reports.plots import breakdown, steptimes
    from lionsim.reports.plots import run as run_plots

    return _figures(monkeypatch, run_plots, breakdown, steptimes, draw=True)


def test_a_plug_in_workload_is_named_by_its_file_in_titles_and_a_long_title_wraps(tmp_path, monkeypatch):
    from lionsim.reports.plots import run as run_plots

    workload = "/home/someone/a/rather/deep/checkout/of/their/project/examples/plugins/cnn_workload.py:make"
    steps = pd.DataFrame([_step("lion", k, 2.0 - 0.01 * k) for k in (1, 2, 3)])[STEP_COLUMNS]
    steps = steps.assign(workload=workload, network="a-network-profile-with-a-very-long-name-" * 3)
    figures = _run_figures(monkeypatch)
    run_plots.plot_run(tmp_path, steps, summarize(steps))
    fig = figures["loss_vs_step.png"]
    title = fig._suptitle.get_text()
    assert "cnn_workload.make" in title and "/home/someone" not in title
    fig.draw_without_rendering()
    box = fig._suptitle.get_window_extent()
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width  # folded onto lines, not cut at the edges


def test_a_line_of_hundreds_of_points_marks_a_few_of_them(tmp_path, monkeypatch):
    from lionsim.reports.plots import run as run_plots
    from lionsim.reports.plots.style import MARKS, MAX_MARKED, mark_every

    assert mark_every(MAX_MARKED) is None and mark_every(1000, 3) == (3, math.ceil(1000 / MARKS))
    n = 300
    steps = pd.DataFrame([_step("lion", k, 2.0 - 0.001 * k, eval_acc=k / n, eval_loss=2.0 - 0.001 * k)
                          for k in range(1, n + 1)])[STEP_COLUMNS]
    figures = _run_figures(monkeypatch)
    run_plots.plot_run(tmp_path, steps, summarize(steps))
    for name in ("loss_vs_step.png", "eval_acc_vs_step.png"):
        for line in figures[name].axes[0].get_lines():
            if len(line.get_xdata()) == n and line.get_marker() not in (None, "None", ""):
                every = line.get_markevery()
                assert every is not None and every[1] >= n / (2 * MARKS), (name, line.get_label())


def _band_drawn(fig) -> bool:
    """Whether any panel shows a filled band: a polygon of some width (fill_between over one x is none)."""
    return any(np.ptp(path.vertices[:, 0]) > 0 for ax in fig.axes for c in ax.collections for path in c.get_paths())


def _legend_text(fig) -> str:
    return " ".join(t.get_text() for legend in [*fig.legends, *(ax.get_legend() for ax in fig.axes)]
                    if legend is not None for t in legend.get_texts())


def test_a_sweep_plot_names_the_seed_band_only_where_one_is_drawn(tmp_path, monkeypatch):
    """One evaluation per run (at the last step) leaves eval_acc_vs_step no band to draw, yet its
    legend said "band: min-max over seeds"; loss_vs_step, a line per run, draws and names one."""
    from lionsim.reports.plots import sweep as sweep_plots

    steps, summary = make_sweep(workers=(2,), seeds=(0, 1), steps=4)
    assert steps.groupby("cell")["eval_acc"].count().max() == 1
    figures = _figures(monkeypatch, sweep_plots)
    plot_sweep(tmp_path, steps, summary)
    for name in ("loss_vs_step.png", "eval_acc_vs_step.png"):
        fig = figures[name]
        assert ("band: min-max over seeds" in _legend_text(fig)) == _band_drawn(fig), name
        assert "mean over 2 seeds" in _legend_text(fig), name
    assert _band_drawn(figures["loss_vs_step.png"]) and not _band_drawn(figures["eval_acc_vs_step.png"])


def test_a_sweeps_speedup_plot_marks_the_crossover_on_its_drawn_line(monkeypatch, tmp_path):
    """`lionsim sweep`'s speedup plot with step_s, speedups 0.5, 1.003, 0.999, 2.0 at 1, 2, 4, 8 GB/s:
    the middle two tie (estimate's rule), so one crossover, on the segment nearest the win, where the
    drawn line reads 1.0 (the plots marked three: 1.003 counted a win)."""
    import lionsim.reports.plots.sweep as sweep_plots
    from lionsim.reports.plots.style import run_styles

    figures = []
    monkeypatch.setattr(sweep_plots, "save", lambda fig, path: figures.append(fig) or [])
    rows = []
    points = zip(("1gbe", "10gbe", "25gbe", "100gbe"), (1.0, 2.0, 4.0, 8.0), (4.0, 2.0, 2.0, 1.5),
                 (0.5, 1.003, 0.999, 2.0))
    for net, b, step, speedup in points:
        for label, s, t in (("adamw@t", 1.0, step * speedup), ("lion@t", speedup, step)):
            strategy, transport = label.split("@")
            rows.append({"cell": f"c{b}", "workload": "toy", "seed": 0, "workers": 4, "network": net,
                         "bandwidth_GBps": b, "strategy": strategy, "transport": transport, "speedup": s,
                         "step_s": t, "time_to_target_speedup": s, "time_to_target_s": t, "final_loss": 1.0,
                         "final_eval_acc": np.nan, "baseline": "adamw@t", "label": label})
    labels = ["adamw@t", "lion@t"]
    sweep_plots._speedup_plot(pd.DataFrame(rows), labels, run_styles(labels, "adamw@t"), "adamw@t",
                              "bandwidth_GBps", "workers", "speedup", "t", tmp_path / "s.png")
    (ax,) = [a for a in figures[0].axes if a.get_visible() and a.lines]
    marks = [line for line in ax.lines if line.get_marker() == "X" and len(line.get_xdata()) == 1]
    # from 4 to 8 GB/s, w along 1/b: baseline 1.998 + 1.002 w meets the run's 2 - 0.5 w at w = 0.002 / 1.502
    assert [float(m.get_xdata()[0]) for m in marks] == pytest.approx([1 / (1 / 4 - 0.002 / 1.502 / 8)])
    drawn = max(ax.lines, key=lambda line: len(line.get_xdata()))  # the run's curve, sampled finely
    at = float(marks[0].get_xdata()[0])
    assert np.interp(np.log(at), np.log(drawn.get_xdata()), drawn.get_ydata()) == pytest.approx(1.0, abs=1e-4)


def test_cli_plot_baseline_on_an_estimate_directory_says_an(tmp_path, capsys):
    (tmp_path / "estimate.csv").write_text("a,b\n")
    code, _, err = _run_cli(["plot", str(tmp_path), "--baseline", "lion"], capsys)
    assert code == 2 and f"{tmp_path} is an estimate directory" in err, err
