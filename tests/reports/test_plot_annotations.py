"""Plots that say what they show: the time-to-target line on the loss plots, bytes
on a linear axis with ratios to the baseline, titles naming the data split, the momentum sync
and (gloo/nccl) the link the collectives were measured on; no single-point sweep plot."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import lionsim.reports.plots.run as run_plots
import lionsim.reports.plots.steptimes as steptimes
from lionsim.reports import STEP_COLUMNS, SummaryRule, summarize
from lionsim.reports.plots.sweep_axes import skipped_plots
from lionsim.reports.plots.titles import subtitle
from lionsim.reports.titles import measured_link
from lionsim.reports.summary import split_runs
from tests.helpers.frames import frame, rows

pytestmark = pytest.mark.plots  # the plot tests: every figure rendered for real

NAN = math.nan


def steps_of(runs: dict[str, tuple[float, int]], backend: str = "sim") -> pd.DataFrame:
    """Runs `name@transport` -> (loss drop per step, wire bytes), 10 steps of 0.1 s."""
    rows = []
    for label, (drop, wire) in runs.items():
        strategy, transport = label.split("@")
        for k in range(1, 11):
            rows.append({"strategy": strategy, "transport": transport, "workers": 4, "network": "1gbe",
                         "backend": backend, "workload": "mlp", "seed": 0, "step": k, "loss": 3.0 - drop * k,
                         "compute_s": 0.05, "encode_s": 0.0, "comm_s": 0.05, "decode_s": 0.0, "update_s": 0.0,
                         "step_s": 0.1, "sim_time_s": 0.1 * k, "wire_bytes": wire, "bits_per_param_up": 32,
                         "bits_per_param_down": 32, "params": 1000, "eval_loss": NAN, "eval_acc": NAN})
    return pd.DataFrame(rows)[STEP_COLUMNS]


@pytest.fixture
def figures(monkeypatch):
    """Every figure a plot function saves, by file stem."""
    return drawn_figures(monkeypatch, run_plots)


@pytest.mark.slow
def test_the_loss_plots_draw_the_target_and_where_each_run_reaches_it(tmp_path, figures):
    # baseline A drops 0.1 a step: smoothed (1 step) loss at step 9 = 2.1, the target; B drops
    # 0.2 and reaches 2.1 at step 5 (0.5 s); C drops 0.05 and never does
    steps = steps_of({"a@fp32-allreduce": (0.1, 4000), "b@int8-allreduce": (0.2, 1000),
                      "c@a2a-1bit": (0.05, 125)})
    summary = summarize(steps)
    assert summary.target_loss.iloc[0] == pytest.approx(2.1)
    run_plots.plot_run(tmp_path, steps, summary, {"config": {"data_split": "dirichlet:0.3", "momentum_sync": "every:10"}})
    for stem, x_b in (("loss_vs_step", 5.0), ("loss_vs_time", 0.5)):  # the time axis is in s
        ax = figures[stem].axes[0]
        target = [line for line in ax.get_lines() if line.get_linestyle() == ":"]
        assert len(target) == 1 and list(target[0].get_ydata()) == pytest.approx([2.1, 2.1])
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert "target 2.1\n(a@fp32-allreduce's loss at step 9 of 10)" in labels
        # each reach point a triangle ("v") at the loss it marks: A's 2.1 at step 9, B's 2.0 at step 5
        marks = [line for line in ax.get_lines() if line.get_marker() == "v" and len(line.get_xdata())]
        assert [float(m.get_ydata()[0]) for m in marks] == pytest.approx([2.1, 2.0])
        assert sorted(float(m.get_xdata()[0]) for m in marks) == pytest.approx(sorted([x_b, x_b * 9 / 5]))
        assert "data dirichlet:0.3 · momentum sync every:10" in figures[stem]._suptitle.get_text()


@pytest.mark.slow
def test_bytes_are_bars_on_a_linear_axis_from_zero_with_ratios(tmp_path, figures):
    steps = steps_of({"a@fp32-allreduce": (0.1, 5000), "b@int8-allreduce": (0.1, 1000), "c@a2a-1bit": (0.1, 5000)})
    run_plots.plot_run(tmp_path, steps, summarize(steps))
    ax = figures["bytes_per_step"].axes[0]
    assert ax.get_xscale() == "linear" and ax.get_xlim()[0] == 0
    widths = sorted(p.get_width() for p in ax.patches)
    assert widths == [1000, 5000, 5000]  # a 5x ratio is a 5x longer bar
    texts = [t.get_text() for t in ax.texts]
    assert any("(the baseline)" in t for t in texts) and any("(1/5 of baseline)" in t for t in texts)
    assert any("(= baseline)" in t for t in texts)


def test_a_gloo_run_names_the_link_it_was_measured_on():
    steps = steps_of({"a@fp32-allreduce": (0.1, 4000)}, backend="gloo")
    assert subtitle(steps, {"ranks_on_one_host": True}) == "mlp · 4 workers · loopback, measured (model: 1gbe)"
    assert subtitle(steps, None) == "mlp · 4 workers · loopback, measured (model: 1gbe)"
    assert measured_link({"ranks_on_one_host": False}) == "between hosts, measured"
    assert measured_link({"link": {"name": "eth0 10 Gb/s"}}) == "eth0 10 Gb/s, measured"  # what run.json may name
    assert subtitle(steps_of({"a@fp32-allreduce": (0.1, 4000)}), {"config": {"data_split": "iid"}}) == \
        "mlp · 4 workers · 1gbe · data iid"
    # the tie rule changes a vote's bytes down: named where it is not the default
    assert subtitle(steps_of({"a@fp32-allreduce": (0.1, 4000)}), {"config": {"tie": "random"}}).endswith("· tie random")
    assert "tie" not in subtitle(steps_of({"a@fp32-allreduce": (0.1, 4000)}), {"config": {"tie": "zero"}})


def test_a_sweep_with_one_value_on_an_axis_skips_those_plots_and_says_why():
    summary = pd.DataFrame({"workload": ["mlp"] * 4, "network": ["1gbe"] * 4, "workers": [4, 4, 8, 8]})
    assert skipped_plots(summary) == [
        ("speedup_vs_bandwidth", "one network (1gbe) in the sweep: a line needs at least two bandwidths"),
        ("time_to_target_speedup_vs_bandwidth", "one network (1gbe) in the sweep: a line needs at least two bandwidths")]
    two = summary.assign(network=["1gbe", "10gbe"] * 2)
    assert skipped_plots(two) == []
    one_n = two.assign(workers=8)
    assert [name for name, _ in skipped_plots(one_n)] == ["speedup_vs_workers", "time_to_target_speedup_vs_workers"]


def captured_subtitle(monkeypatch, steps: pd.DataFrame, meta: dict | None, tmp_path) -> str:
    seen = []
    real = steptimes.figure

    def spy(title, subtitle="", *a, **k):
        seen.append(subtitle)
        return real(title, subtitle, *a, **k)

    monkeypatch.setattr(steptimes, "figure", spy)
    runs = split_runs(steps)
    styles = {label: {"color": "C0", "linewidth": 1.5, "linestyle": "-"} for label, _ in runs}
    from lionsim.reports.plots.titles import subtitle

    steptimes.step_time_plot(runs, styles, None, steps, tmp_path / "st.png", meta, subtitle(steps, meta))
    return seen[-1]


def drawn_figures(monkeypatch, module) -> dict:
    """Every figure a plot module saves, by file stem."""
    figures = {}
    real = module.save

    def keep(fig, path):
        figures[path.stem] = fig
        return real(fig, path)

    monkeypatch.setattr(module, "save", keep)
    return figures


def test_step_time_plot_of_a_gloo_run_without_a_spread(monkeypatch, tmp_path):
    """No --compute-spread: not "uneven workers", the measured link as the other plots name it,
    and every step alike said in words when p50 = p99."""
    steps = frame(rows("adamw", 6, backend="gloo", measured=0.001))
    meta = {"config": {"data_split": "iid", "momentum_sync": "never", "compute_spread": []}, "ranks_on_one_host": True}
    line = captured_subtitle(monkeypatch, steps, meta, tmp_path)
    assert "uneven" not in line
    assert "loopback, measured (model: 1gbe)" in line and "data iid" in line
    assert "every step alike" in line


def test_step_time_plot_with_a_spread_says_so(monkeypatch, tmp_path):
    steps = frame(rows("adamw", 6, step_s=[0.01, 0.012, 0.01, 0.02, 0.011, 0.01]))
    meta = {"config": {"compute_spread": ["lognormal:0.3"]}}
    line = captured_subtitle(monkeypatch, steps, meta, tmp_path)
    assert "uneven workers (--compute-spread)" in line and "alike" not in line


def test_run_plots_mark_every_target_and_end_the_bytes_axis_near_the_data(monkeypatch, tmp_path):
    import lionsim.reports.plots.breakdown as breakdown
    import lionsim.reports.plots.run as run_plots

    figures = drawn_figures(monkeypatch, run_plots)
    parts = drawn_figures(monkeypatch, breakdown)
    # two runs reaching the target at the same time and step (their curves on each other), one later
    steps = frame(rows("a", 10), rows("b", 10), rows("c", 10, step_s=[0.02] * 10))
    steps["wire_bytes"] = [525_000] * 10 + [131_000] * 10 + [24_600] * 10
    steps["comm_exposed_s"] = steps["comm_s"] / 2
    summary = summarize(steps, SummaryRule(target_loss=1.95))
    run_plots.plot_run(tmp_path, steps, summary)
    ax = figures["loss_vs_time"].axes[0]
    marks = [line for line in ax.lines if line.get_marker() == "v" and len(line.get_xdata()) == 1]
    assert len(marks) == 3
    shown = [(*m.get_transform().transform((m.get_xdata()[0], m.get_ydata()[0])).round(1), m.get_markersize())
             for m in marks]
    assert len(set(shown)) == 3  # none hides another: a coinciding one rings it, larger and open
    ticks = figures["bytes_per_step"].axes[0].get_xticks()
    assert ticks[-1] >= 525_000 and ticks[-2] < 525_000  # the axis ends at the first tick past the largest bar
    log = parts["time_breakdown"].axes[2]
    faces = [tuple(c.get_facecolor()[0]) for c in log.collections if len(c.get_offsets())]
    assert (1.0, 1.0, 1.0, 1.0) in faces  # total comm: open, unlike the filled exposed comm beside it


def test_the_bytes_plot_keeps_the_longest_run_names_and_their_texts_inside_the_figure(tmp_path, figures):
    """The longest names lionsim makes (a hierarchical transport, the baseline marked) and a bar
    50,000x the baseline's: every label, the bars' texts and the axis label within the figure,
    at the tick font matplotlib gives (no shrinking to fit)."""
    from matplotlib import rcParams
    from matplotlib.font_manager import FontProperties

    from tests.helpers.figures import cut_texts

    steps = steps_of({"streaming-diloco@hier:fp8-e5m2-allreduce": (0.1, 1_170),
                      "muon-dist@hier:fp8-e5m2-allreduce": (0.1, 52_100_000),
                      "sparseloco@sparseloco-allgather": (0.1, 282), "onebit-adam@compressed-allreduce": (0.1, 4_680)})
    run_plots.plot_run(tmp_path, steps, summarize(steps))
    fig = figures["bytes_per_step"]
    assert cut_texts(fig) == []
    labels = fig.axes[0].get_yticklabels()
    assert labels[0].get_text() == "streaming-diloco (baseline)\n@hier:fp8-e5m2-allreduce"
    readable = FontProperties(size=rcParams["ytick.labelsize"]).get_size_in_points()
    assert all(label.get_fontsize() == readable for label in labels)


@pytest.mark.parametrize("backend, sender", [("gloo", "rank"), ("sim", "worker")])
def test_the_bytes_plot_says_whose_bytes_it_draws(backend, sender, tmp_path, figures):
    """wire_bytes is what one rank sends on gloo/nccl (all its workers' together: the table's
    "per rank on gloo/nccl"), one worker's on the simulator: the title and axis say which."""
    from lionsim.reports.plots.style import run_styles

    steps = steps_of({"a@fp32-allreduce": (0.1, 4000)}, backend=backend)
    run_plots._bytes_plot(split_runs(steps), run_styles(["a@fp32-allreduce"], None), None, steps,
                          tmp_path / "bytes_per_step.png", {"network_given": False})
    fig = figures["bytes_per_step"]
    assert fig._suptitle.get_text().splitlines()[0] == f"Bytes sent per {sender} per step"
    assert fig.axes[0].get_xlabel().startswith(f"bytes per {sender} per step (linear axis from 0)")


@pytest.mark.parametrize("backend, compute, axis", [
    ("sim", "h100", "modelled wall clock (s)"),
    ("sim", "measured", "wall clock (compute measured, network modelled, s)"),
    ("gloo", "measured", "measured wall clock (s)"),
])
def test_the_time_axis_says_how_its_clock_was_obtained(backend, compute, axis, tmp_path, figures):
    """On sim with --compute measured the clock is the compute timed here plus the network
    modelled: neither "modelled" nor "measured" alone (the gloo clock is measured throughout)."""
    from lionsim.reports.plots.style import run_styles

    steps = steps_of({"a@fp32-allreduce": (0.1, 4000)}, backend=backend)
    run_plots._loss_plot(split_runs(steps), run_styles(["a@fp32-allreduce"], None), None, steps, "sim_time_s",
                         tmp_path / "loss_vs_time.png", None, {"config": {"backend": backend, "compute": compute}})
    assert figures["loss_vs_time"].axes[0].get_xlabel() == axis


@pytest.mark.slow  # a gloo process (8 s); the titles' rule is checked below without one
def test_a_gloo_run_of_one_rank_is_titled_modelled_not_measured(tmp_path, capsys):
    """One gloo rank holds every worker: no collective crossed a process, comm was priced on the
    network (run.json's comm_s note says so). Its title said "loopback, measured"."""
    from tests.helpers.cli import run_cli

    code, out, err = run_cli(["bench", "--backend", "gloo", "--ranks", "1", "-w", "mlp", "--model-size", "tiny",
                              "-n", "2", "-b", "4", "--steps", "2", "-s", "adamw", "--out", tmp_path / "o"], capsys)
    assert code == 0, err
    title = next(line.strip() for line in out.splitlines() if line.strip().startswith("lionsim: mlp"))
    assert title == "lionsim: mlp, 2 workers, 1gbe (1 gloo rank: comm modelled), 2 steps", title


def test_one_gloo_rank_names_no_measured_link():
    from lionsim.reports.titles import measured_on, named_network

    meta = {"config": {"backend": "gloo", "ranks": 1}, "network_given": False, "ranks_on_one_host": True}
    assert measured_on(meta) is None  # no link was measured: the captions name none
    two = {"config": {"backend": "gloo", "ranks": 2}, "network_given": True, "ranks_on_one_host": True}
    assert named_network("1gbe", two, True) == "loopback, measured (model: 1gbe)" and measured_on(two) == "loopback"
