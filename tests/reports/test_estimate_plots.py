"""The estimate plots drawn for real: hierarchy.png marks the single-node points of its log bytes
panel on the axis floor; to_target.png of a swept run shows every band its legend names, and its
caption says what the whiskers (one estimate) or the shading (a sweep) are."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import lionsim.reports.plots.estimate as estimate_plots
import lionsim.reports.plots.to_target as to_target_plots
from lionsim.cli.app import main

pytestmark = pytest.mark.plots


def test_hierarchy_marks_single_node_points_on_the_floor_of_its_bytes_axis(tmp_path, monkeypatch):
    figures = {}
    monkeypatch.setattr(estimate_plots, "save", lambda fig, path: figures.update({Path(path).stem: fig}) or [])
    with pytest.raises(SystemExit) as done:
        main(["estimate", "--model", "gpt2-124m", "--network", "h100x8-100gbe", "--sweep", "workers=8,16,64",
              "-s", "dlion-mavo@a2a-1bit", "-s", "dlion-mavo@hier-exact", "--out", str(tmp_path / "est")])
    assert done.value.code == 0
    rows = pd.read_csv(tmp_path / "est" / "sweep.csv")
    assert (rows.loc[rows["sweep_value"] == 8, "inter_bytes"] == 0).all()  # one node of 8: nothing across
    top = figures["hierarchy"].axes[0]
    floor = top.get_ylim()[0]
    at_eight = [line for line in top.get_lines()
                if any(x == 8 and np.isfinite(y) for x, y in zip(line.get_xdata(), line.get_ydata()))]
    assert len(at_eight) == 2  # each run's single-node point is drawn
    for line in at_eight:
        y = dict(zip(line.get_xdata(), line.get_ydata()))[8]
        assert y == pytest.approx(floor)
    assert any("0 B across nodes" in t.get_text() for t in top.texts)


MEASURED = Path(__file__).resolve().parents[2] / "reports" / "readme" / "from-run-sweep"  # measured at 4-32 workers


@pytest.mark.parametrize("swept", ["16,64", "64,128"])  # the measured range half inside the swept one, all below it
def test_to_target_keeps_to_the_swept_range_shades_the_measured_part_of_it_and_says_extrapolated(
        swept, tmp_path, monkeypatch):
    """The axis spans the counts swept (a band of counts never swept would squeeze the curves); the
    measured 4-32 workers are shaded where they meet it, the legend names them either way, and the
    caption says which figures are extrapolated beyond them, as the text does."""
    figures, captions = {}, []
    monkeypatch.setattr(to_target_plots, "save", lambda fig, path: figures.update({Path(path).stem: fig}) or [])
    real = to_target_plots.title_with_caption
    monkeypatch.setattr(to_target_plots, "title_with_caption",
                        lambda fig, title, sub, caption: captions.append(caption) or real(fig, title, sub, caption))
    with pytest.raises(SystemExit) as done:
        main(["estimate", "--model", "gpt2-124m", "--network", "h100x8-100gbe", "-s", "adamw@bf16-allreduce",
              "-s", "lion", "--tokens", "1e9", "--from-run", str(MEASURED), "--sweep", f"workers={swept}",
              "--out", str(tmp_path / "est")])
    assert done.value.code == 0
    first, last = (int(v) for v in swept.split(","))
    for ax in figures["to_target"].axes[:2]:
        assert ax.get_xlim() == pytest.approx((first / 1.1, last * 1.1))
        shaded = [p for p in ax.patches if p.get_facecolor()[:3] == pytest.approx((0.85, 0.85, 0.85))]
        if first < 32:  # the measured part of the axis: from its left end to 32 workers
            (span,) = shaded
            xs = span.get_patch_transform().transform(span.get_path().vertices)[:, 0]
            assert (xs.min(), xs.max()) == pytest.approx((first / 1.1, 32))
        else:
            assert shaded == []
    labels = figures["to_target"].axes[0].get_legend_handles_labels()[1]
    assert ("measured: 4-32 workers" if first < 32 else "measured: 4-32 workers (off the axis)") in labels
    beyond = [n for n in (first, last) if n > 32]
    figures_at = "the figures at" if len(beyond) > 1 else "the figure at"
    assert (f"Extrapolated beyond the measured 4-32 workers: {figures_at} {', '.join(map(str, beyond))} workers"
            in captions[-1])


@pytest.mark.parametrize("sweep", ["bandwidth=0.1:100:1000", "bandwidth=1:3:10"])  # 3 decades of step time; less than one
def test_the_sweep_plot_labels_both_ends_of_its_log_axes(sweep, tmp_path, monkeypatch):
    """The step-time axis and the bandwidth axis each carry a label at or past the data's top and
    bottom, within the axis: a reader reads the range off the labels, never extrapolates it."""
    figures = {}
    monkeypatch.setattr(estimate_plots, "save", lambda fig, path: figures.update({Path(path).stem: fig}) or [])
    with pytest.raises(SystemExit) as done:
        main(["estimate", "--model", "gpt2-345m", "--network", "h100x8-10gbe", "--workers", "16", "--sweep", sweep,
              "-s", "lion@fp32-allreduce", "-s", "dlion-mavo@a2a-1bit", "--out", str(tmp_path / "est")])
    assert done.value.code == 0
    fig = figures["sweep"]
    fig.canvas.draw()
    top, bottom = fig.axes
    runs = [line for line in top.get_lines() if line.get_marker() not in (None, "None", "")]  # not the cap's line
    for axis, data in ((top.yaxis, np.concatenate([line.get_ydata() for line in runs])),
                       (bottom.xaxis, np.concatenate([line.get_xdata() for line in runs]))):
        data = data[np.isfinite(data)]
        low, high = sorted(getattr(axis.axes, f"get_{axis.axis_name}lim")())
        labelled = [tick.get_loc() for tick in axis._update_ticks() if tick.label1.get_text()]
        assert all(low <= v <= high for v in labelled)
        assert max(labelled) >= data.max() * (1 - 1e-9) and min(labelled) <= data.min() * (1 + 1e-9), (sweep, labelled)


def test_a_time_to_target_title_keeps_to_two_lines_and_the_caption_holds_the_rest(tmp_path, monkeypatch):
    """A long network and a long measured run's workload: the title two lines within the figure,
    the full names in the caption under the axes, every text inside the figure."""
    from lionsim.reports.plots.redraw import read_table
    from tests.helpers.figures import cut_texts

    with pytest.raises(SystemExit) as done:
        main(["estimate", "--model", "gpt2-124m", "--network", "h100x8-100gbe", "-s", "adamw",
              "-s", "lion", "--tokens", "1e9", "--from-run", str(MEASURED), "--sweep", "workers=16,64",
              "--out", str(tmp_path / "est")])
    assert done.value.code == 0
    network = "a-cluster-profile-with-a-long-name-" * 3
    workload = "/home/someone/experiments/" + "a_very_long_workload_module_name_" * 3 + ".py:make"
    frame = read_table(tmp_path / "est" / "sweep.csv", ["sweep_value", *to_target_plots.NEEDS]).assign(
        network=network, to_target_workload=workload)
    crossings = pd.read_csv(tmp_path / "est" / "to_target_crossover.csv")
    figures = []
    monkeypatch.setattr(to_target_plots, "save", lambda fig, path: figures.append(fig) or [])
    to_target_plots.plot_to_target_sweep(frame, crossings, "workers", tmp_path / "to_target.png")
    to_target_plots.plot_to_target(frame[frame["sweep_value"] == 16], tmp_path / "one.png")
    for fig in figures:
        assert fig._suptitle.get_text().count("\n") <= 1
        assert cut_texts(fig) == []
        assert network in "".join(fig._supxlabel.get_text().split())  # wrapped: compared without the breaks


def _sweep_figure(monkeypatch, tmp_path, module, stem, args):
    figures = {}
    monkeypatch.setattr(module, "save", lambda fig, path: figures.update({Path(path).stem: fig}) or [])
    with pytest.raises(SystemExit) as done:
        main(["estimate", *args, "--out", str(tmp_path / "est")])
    assert done.value.code == 0
    fig = figures[stem]
    fig.canvas.draw()
    return fig


@pytest.mark.parametrize("runs, log", [(["adamw@bf16-allreduce", "powersgd"], True),  # 90x down to 0.9x
                                       (["adamw@bf16-allreduce", "dlion-mavo"], False)])  # 2x down to 0.9x
def test_speedups_spanning_more_than_a_decade_are_on_a_labelled_log_axis(runs, log, tmp_path, monkeypatch):
    """On a linear axis up to 90x, every run within a few x of the baseline sat flat on 1."""
    fig = _sweep_figure(monkeypatch, tmp_path, estimate_plots, "sweep",
                        ["--model", "gpt2-1.3b", "--network", "10gbe", "--workers", "16", "--sweep",
                         "bandwidth=0.1:100:8", *[a for run in runs for a in ("-s", run)]])
    speedups = pd.read_csv(tmp_path / "est" / "sweep.csv")["speedup"]
    bottom = fig.axes[1]
    assert (bottom.get_yscale() == "log") is log
    assert bool(speedups.max() / min(speedups.min(), 1.0) > 10) is log
    if log:
        low, high = bottom.get_ylim()
        labels = [(t.get_loc(), t.label1.get_text()) for t in bottom.yaxis._update_ticks() if t.label1.get_text()]
        assert all(text == f"{value:g}" for value, text in labels)  # plain numbers, as the step-time axis
        assert min(v for v, _ in labels) <= speedups.min() and max(v for v, _ in labels) >= speedups.max()
        assert all(low <= v <= high for v, _ in labels) and 1.0 in [v for v, _ in labels]


def test_a_bandwidth_sweep_marks_the_network_given(tmp_path, monkeypatch):
    fig = _sweep_figure(monkeypatch, tmp_path, estimate_plots, "sweep",
                        ["--model", "gpt2-345m", "--network", "10gbe", "--workers", "16", "--sweep",
                         "bandwidth=0.1:100:8", "-s", "adamw@bf16-allreduce", "-s", "dlion-mavo"])
    for ax in fig.axes:
        (line,) = [line for line in ax.get_lines() if line.get_linestyle() == "-."]
        assert list(line.get_xdata()) == [pytest.approx(1.17)] * 2  # 10gbe's inter link, GB/s
        assert ax.get_xlim()[0] < 1.17 < ax.get_xlim()[1]
    handles, labels = fig.axes[0].get_legend_handles_labels()
    assert any(label.startswith("10gbe") and "1.17 GB/s" in label for label in labels)



def test_curves_apart_on_the_log_axis_are_not_called_overlapping(tmp_path, monkeypatch):
    """A new user's finding: streaming-diloco H=100 was labelled "(overlaps diloco H=500...)" though
    at 0.01 GB/s the two step 0.8 and 0.55 s, within CLOSE of the linear span (AdamW's 120 s) but far
    apart on the log axis they are drawn on. Reference: the curves' own log ratio at the slow end."""
    fig = _sweep_figure(monkeypatch, tmp_path, estimate_plots, "sweep",
                        ["--model", "gpt2-345m", "--tokens-per-worker", "8192", "--workers", "8", "--gpus-per-node",
                         "2", "--network", "1gbe", "-s", "adamw@bf16-allreduce", "-s", "diloco@bf16-allreduce",
                         "-s", "streaming-diloco", "--opt", "diloco.local_steps=500", "--opt",
                         "streaming-diloco.local_steps=100", "--sweep", "bandwidth=0.01:100:9"])
    rows = pd.read_csv(tmp_path / "est" / "sweep.csv")
    slow = rows[rows["sweep_value"] == rows["sweep_value"].min()].set_index("strategy")["step_s"]
    assert slow["streaming-diloco"] / slow["diloco"] > 1.2  # apart where the link is slow
    assert slow["adamw"] * 0.004 > abs(slow["streaming-diloco"] - slow["diloco"])  # within the linear span's share
    labels = [text.get_text() for legend in fig.legends for text in legend.get_texts()]
    labels += fig.axes[0].get_legend_handles_labels()[1]
    assert labels and not any("overlaps" in label for label in labels), labels


def test_a_sockets_bandwidth_sweep_notes_its_cap_and_network_where_they_cross_no_line(tmp_path, monkeypatch):
    """The cap's note ran across the network's dash-dot line, and the network's name stood on a
    curve: both are legend entries now, and no text in the step-time panel crosses a line."""
    from tests.helpers.figures import texts_over_lines

    fig = _sweep_figure(monkeypatch, tmp_path, estimate_plots, "sweep",
                        ["--model", "gpt2-1.3b", "--workers", "64", "--network", "h100x8-100gbe", "--sweep",
                         "bandwidth=0.1:100:9", "-s", "adamw@bf16-allreduce", "-s", "dlion-mavo@a2a-1bit"])
    top = fig.axes[0]
    assert texts_over_lines(top) == []
    labels = top.get_legend_handles_labels()[1]
    assert any(label.startswith("sockets fabric's cap: NCCL moves at most\n1.96 GB/s") for label in labels)
    assert "h100x8-100gbe, the network given: 5.03 GB/s moved (its 11.7 GB/s link x 0.43)" in labels  # 11.7 x 0.43
    assert fig.axes[1].get_xlabel() == ("inter-node bandwidth moved (GB/s a node: the link's own rate x 0.43, log scale)"
                                        "\nmarkers: the priced points; lines: linear in 1 / bandwidth between them")


def test_a_workers_crossover_is_named_alike_in_the_legend_the_table_and_crossover_csv(tmp_path, monkeypatch):
    """On 8-GPU nodes 8 workers lose and 16 win, no count between (whole nodes): the dotted line
    at 16 is in the legend with what it marks, and the table says "8-16" (workers), "from 16"."""
    from typer.testing import CliRunner

    from lionsim.cli.app import app

    args = ["--model", "gpt2-345m", "--tokens-per-worker", "16384", "--network", "h100x8-10gbe", "--sweep",
            "workers=8,16,32,64", "-s", "adamw@bf16-allreduce", "-s", "dlion-mavo@a2a-1bit"]
    fig = _sweep_figure(monkeypatch, tmp_path, estimate_plots, "sweep", args)
    rows = pd.read_csv(tmp_path / "est" / "sweep.csv").set_index(["strategy", "sweep_value"])["speedup"]
    assert rows[("dlion-mavo", 8)] < 1 < rows[("dlion-mavo", 16)]  # the crossing lies between the two
    crossing = pd.read_csv(tmp_path / "est" / "crossover.csv").iloc[0]
    assert (crossing["crossover"], crossing["loses_at"], crossing["wins"]) == (16, 8, "above")
    (dotted,) = [line for line in fig.axes[1].get_lines() if line.get_linestyle() == ":"]
    assert list(dotted.get_xdata()) == [16, 16]
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert "dlion-mavo@a2a-1bit wins from 16 workers\n(8 loses: the speedup crosses 1 between)" in labels
    out = " ".join(CliRunner().invoke(app, ["estimate", *args]).output.split())  # the caption wraps
    assert "8-16" in out and "(workers)" in out and "from 16" in out and "either side of where the speedup crosses" in out


def test_every_run_of_a_to_target_sweep_is_in_its_legend_with_why_it_has_no_line(tmp_path, monkeypatch):
    """A run with no time to target anywhere was left out of the legend without a word."""
    fig = _sweep_figure(monkeypatch, tmp_path, to_target_plots, "to_target",
                        ["--model", "gpt2-124m", "--network", "h100x8-100gbe", "--tokens", "1e9", "--from-run",
                         str(MEASURED), "--sweep", "workers=16,64", "-s", "adamw", "-s", "lion",
                         "-s", "onebit-adam"])
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert "onebit-adam@compressed-allreduce: not trained, no line" in labels
    from lionsim.reports.plots.redraw import read_table

    frame = read_table(tmp_path / "est" / "sweep.csv", ["sweep_value", *to_target_plots.NEEDS])
    lion = frame["strategy"] == "lion"
    frame.loc[lion, ["time_to_target_s", "steps_to_target", "to_target_speedup"]] = np.nan
    frame.loc[lion, "to_target_note"] = "did not reach the target in any of its 8 cells"
    figures = []
    monkeypatch.setattr(to_target_plots, "save", lambda fig, path: figures.append(fig) or [])
    to_target_plots.plot_to_target_sweep(frame, pd.DataFrame(columns=["strategy", "transport", "crossover"]),
                                         "workers", tmp_path / "to_target.png")
    labels = figures[0].axes[0].get_legend_handles_labels()[1]
    assert "lion@fp32-allreduce: not reached, no line" in labels
    runs = set(frame["strategy"] + "@" + frame["transport"])
    assert all(any(label.startswith(run) for label in labels) for run in runs)


def test_a_to_target_bandwidth_sweep_says_why_a_faster_link_slows_nccl_over_sockets(tmp_path, monkeypatch):
    """Past the sockets fabric's cap NCCL still ranks on the link's rate, and at 64 workers on
    h100x8-100gbe a faster link flips AdamW's all-reduce to a choice priced slower: its time to
    target rises. Modelled on purpose (lionsim.network.nccl); the
    step-time plot said so and the time-to-target plot did not."""
    fig = _sweep_figure(monkeypatch, tmp_path, to_target_plots, "to_target",
                        ["--model", "gpt2-1.3b", "--network", "h100x8-100gbe", "--workers", "64", "--tokens", "2.6e10",
                         "--from-run", str(MEASURED), "--sweep", "bandwidth=1:100:12", "-s", "adamw"])
    rows = pd.read_csv(tmp_path / "est" / "sweep.csv").sort_values("sweep_value")
    times = rows["time_to_target_s"].to_numpy()
    assert (np.diff(times) > 0).any()  # the rise the note explains
    top = fig.axes[0]
    (note,) = [label for label in top.get_legend_handles_labels()[1] if "fabric's cap" in label]
    assert "a flip can slow a step" in note
    cap = [line for line in top.get_lines() if line.get_linestyle() == "--"]
    assert cap and list(cap[0].get_xdata()) == [pytest.approx(rows["fabric_cap_GBps"].iloc[0])] * 2


def test_a_workers_line_crosses_1_where_its_crossover_is_marked_not_between_sparse_points(tmp_path, monkeypatch):
    """Swept at 64 and 512 only, dlion-mavo@int8-allreduce wins up to 127 workers (every count between
    priced); a straight segment from 64 to 512 crossed 1 near 250, a second crossing beside the dotted
    line at 127. The line now passes through the counts priced either side (127 and 128, each an
    estimate of its own): where a polyline crosses 1 is closed form (between two vertices on either
    side of it), and it must be once, between those two."""
    from lionsim.estimate import EstimateConfig, estimate

    runs = ["adamw@bf16-allreduce", "dlion-mavo@int8-allreduce"]
    fig = _sweep_figure(monkeypatch, tmp_path, estimate_plots, "sweep",
                        ["--model", "gpt2-124m", "--network", "100gbe", "--sweep", "workers=2,8,64,512",
                         "-s", ",".join(runs)])
    crossing = pd.read_csv(tmp_path / "est" / "crossover.csv").iloc[0]
    assert (crossing["crossover"], crossing["loses_at"], crossing["wins"]) == (127, 128, "below")
    for count, column in ((127, "speedup_at_crossover"), (128, "speedup_at_loses")):
        direct = estimate(EstimateConfig(model="gpt2-124m", network="100gbe", workers=count, strategies=runs))
        assert crossing[column] == pytest.approx(direct["speedup"].iloc[1], rel=1e-12)
    green = [line for line in fig.axes[1].get_lines() if line.get_linestyle() == "-" and len(line.get_xdata()) > 4]
    (line,) = [line for line in green if 127 in list(line.get_xdata())]
    x, y = np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata(), dtype=float)
    sides = np.sign(y - 1.0)
    crossings = [(x[i], x[i + 1]) for i in range(len(x) - 1) if sides[i] != sides[i + 1]]
    assert crossings == [(127, 128)]
    (dotted,) = [line for line in fig.axes[1].get_lines() if line.get_linestyle() == ":"]
    assert list(dotted.get_xdata()) == [127, 127]


def _one_estimate(hi: float) -> pd.DataFrame:
    """Two runs' time to target at 64 workers, as estimate.csv writes it (hi NaN: no band)."""
    rows = []
    for strategy, transport, steps, time in (("adamw", "fp32-allreduce", 96, 81.4), ("dlion-mavo", "int8-allreduce", 58, 12.6)):
        rows.append({"strategy": strategy, "transport": transport, "workers": 64, "network": "10gbe",
                     "params": 124439808, "model": "gpt2-124m", "device": "h100", "baseline": "adamw@fp32-allreduce",
                     "steps_to_target": steps, "time_to_target_s": time, "to_target_speedup": 81.4 / time,
                     "time_to_target_lo_s": time * (2 - hi) if hi == hi else np.nan, "time_to_target_hi_s": time * hi,
                     **{col: "" for col in to_target_plots.TEXT}, "to_target_workload": "mlp",
                     "to_target_workers": "4 8"})
    return pd.DataFrame(rows)


def test_to_target_says_what_its_whiskers_are(tmp_path, monkeypatch):
    """The whiskers are the band (the fits' residual spread): the caption says so where any is drawn."""
    from matplotlib.container import ErrorbarContainer

    figures = []
    monkeypatch.setattr(to_target_plots, "save", lambda fig, path: figures.append(fig) or [])
    for hi in (1.05, np.nan):
        to_target_plots.plot_to_target(_one_estimate(hi), tmp_path / "t.png")
    banded, bare = figures
    whiskers = [c for c in banded.axes[0].containers if isinstance(c, ErrorbarContainer)]
    assert len(whiskers) == 2 and not [c for c in bare.axes[0].containers if isinstance(c, ErrorbarContainer)]
    caption = " ".join(banded._supxlabel.get_text().split())
    assert "Whiskers: the band, steps to target with each fit one residual standard deviation" in caption
    assert "Whiskers" not in bare._supxlabel.get_text()


@pytest.mark.parametrize("swept, between", [("8,16,64,256", True), ("8,16,64", False)])
def test_a_workers_sweep_says_its_speedup_line_runs_through_a_crossovers_counts(swept, between, tmp_path,
                                                                                 monkeypatch):
    """int8-allreduce sends int32 from 128 workers: the speedup's line drops between 64 and 256 where the
    step-time line, through the swept counts alone, does not; the axis says why the two differ."""
    figures = {}
    monkeypatch.setattr(estimate_plots, "save", lambda fig, path: figures.update({Path(path).stem: fig}) or [])
    with pytest.raises(SystemExit) as done:
        main(["estimate", "--model", "gpt2-1.3b", "--tokens-per-worker", "8192", "--network", "h100x8-100gbe",
              "--sweep", f"workers={swept}", "-s", "adamw@bf16-allreduce", "-s", "dlion-mavo",
              "--out", str(tmp_path / "est")])
    assert done.value.code == 0
    bottom = figures["sweep"].axes[1]
    crossings = pd.read_csv(tmp_path / "est" / "crossover.csv")
    assert crossings["crossover"].notna().any() == between
    says = "the speedup's line also runs through the counts priced either side of a crossover"
    assert (says in bottom.get_xlabel()) == between
    line = next(l for l in bottom.get_lines() if l.get_linestyle() == "-" and len(l.get_xdata()) > len(swept.split(",")))\
        if between else None
    assert line is None or {120, 128} <= set(line.get_xdata())  # the counts either side of the crossover
