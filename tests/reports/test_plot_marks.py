"""The run and sweep plots' marks, read from the figures' artists: the step axis labels the last
step, the bytes notes keep off the image's edge, "reaches the target" triangles sit at the loss they mark, a
legend says "identical" only of identical curves, the step-time p50 is summary.csv's, and a
sweep over networks of different shapes draws no line across them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.container import ErrorbarContainer

from lionsim.reports.plots import run as run_plots
from lionsim.reports.plots import steptimes, sweep
from lionsim.reports.plots.style import run_styles
from lionsim.reports.summary import final_window, split_runs
from tests.helpers.figures import drawn_texts

BENCH = Path(__file__).resolve().parents[2] / "reports" / "readme" / "default-bench"  # a 100-step default bench


@pytest.fixture
def figures(monkeypatch):
    """The figures the plot functions would save, in order (nothing written)."""
    drawn = []
    for module in (run_plots, steptimes, sweep):
        monkeypatch.setattr(module, "save", lambda fig, path: drawn.append(fig) or [])
    return drawn


def _bench():
    steps, summary = pd.read_csv(BENCH / "steps.csv"), pd.read_csv(BENCH / "summary.csv")
    runs = split_runs(steps)
    baseline = summary["baseline"].iloc[0]
    return runs, run_styles([label for label, _ in runs], baseline), baseline, steps, summary


def test_step_axes_label_the_last_step(figures):
    runs, styles, baseline, steps, summary = _bench()
    run_plots._loss_plot(runs, styles, baseline, steps, "step", Path("x.png"), summary)
    run_plots._eval_acc_plot(runs, styles, baseline, steps, "step", Path("y.png"))
    for fig in figures:
        ax = fig.axes[0]
        shown = [t for t in drawn_texts(fig) if t in ax.xaxis.get_ticklabels()]
        # the axis ends at the last step, a little past it where a target triangle sits there
        assert shown[-1].get_text() == "100" and 100 <= ax.get_xlim()[1] <= 100 * (1 + run_plots.END_MARGIN)
        assert [t.get_text() for t in shown][:2] == ["0", "20"]


def test_bytes_notes_keep_off_the_edge(figures):
    runs, styles, baseline, steps, _summary = _bench()
    run_plots._bytes_plot(runs, styles, baseline, steps, Path("b.png"))
    fig = figures[0]
    drawn_texts(fig)  # lays it out
    renderer = fig.canvas.get_renderer()
    margin = 0.1 * fig.dpi
    notes = fig.axes[0].texts
    assert len(notes) == len(runs)
    assert max(t.get_window_extent(renderer).x1 for t in notes) <= fig.bbox.width - margin


def test_a_diverged_runs_bytes_are_the_steps_before_and_its_note_says_so(figures):
    """A run that diverged at step 3 sent 4000 B on steps 1 and 2, and nothing at step 3 (booked
    with no times and 0 bytes, as lionsim.training.booking books it): its bar is 4000 B, equal to
    the baseline's, with no whisker down to the diverged step's 0."""
    from tests.helpers.frames import frame, rows

    diverged = rows("sgdm", 3, diverged_at=3)
    diverged[-1].update(wire_bytes=0, compute_s=np.nan, comm_s=np.nan, step_s=np.nan, bits_per_param_up=np.nan,
                        bits_per_param_down=np.nan)
    steps = frame(rows("adamw", 3), diverged)
    runs = split_runs(steps)
    run_plots._bytes_plot(runs, run_styles([label for label, _ in runs], "adamw@fp32-allreduce"),
                          "adamw@fp32-allreduce", steps, Path("b.png"))
    ax = figures[0].axes[0]
    assert [bar.get_width() for bar in ax.patches] == [4000, 4000]
    assert not [c for c in ax.containers if isinstance(c, ErrorbarContainer)]  # one value a step: no whisker
    note = ax.texts[1].get_text()
    assert note.startswith("4.00 kB  (= baseline)") and "diverged at step 3: the mean of the 2 steps before" in note


def test_each_target_triangle_sits_at_the_loss_it_marks(figures):
    """A triangle is drawn at its run's trailing mean (summarize's window, as the table) at the
    step summary.csv says it reaches the target: at or below the target line, no lift in points.
    Lifted and stacked above the line, they sat at 0.76-0.95 for a target of 0.722."""
    runs, styles, baseline, steps, summary = _bench()
    run_plots._loss_plot(runs, styles, baseline, steps, "step", Path("x.png"), summary)
    ax = figures[0].axes[0]
    marks = [line for line in ax.lines if line.get_marker() == "v" and not line.get_clip_on()]
    target = float(summary["target_loss"].iloc[0])
    window = final_window(max(len(rows) for _, rows in runs))
    expected = []
    for (label, rows), row in zip(runs, summary.itertuples(index=False)):
        if row.steps_to_target == row.steps_to_target:  # a plain loop over the steps: the first at or below
            mean = [rows["loss"].iloc[max(0, i - window + 1):i + 1].mean() for i in range(len(rows))]
            first = next(i for i, m in enumerate(mean) if m <= target)
            assert rows["step"].iloc[first] == row.steps_to_target
            expected.append((row.steps_to_target, mean[first], styles[label]["color"]))
    assert len(marks) == len(expected) >= 2
    for line, (step, loss, colour) in zip(marks, expected):
        assert (line.get_xdata()[0], line.get_ydata()[0]) == pytest.approx((step, loss))
        assert line.get_ydata()[0] <= target and line.get_color() == colour
        assert line.get_transform() == ax.transData  # drawn where its data says, not lifted in points
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(label.startswith("reaches the target: the trailing") and "at or below the target" in label
               for label in labels)


def test_identical_only_when_every_drawn_curve_is(figures):
    _runs, _styles, _baseline, bench, _summary = _bench()
    a = bench[bench["strategy"] == "adamw"]
    b = a.assign(strategy="lion", transport="fp32-allreduce", eval_loss=a["eval_loss"] + 0.1)  # same training loss
    styles = run_styles(["adamw@fp32-allreduce", "lion@fp32-allreduce"], "adamw@fp32-allreduce")
    for k, steps in enumerate((pd.concat([a, b]), pd.concat([a, b.assign(eval_loss=a["eval_loss"])]))):
        run_plots._loss_plot(split_runs(steps), styles, "adamw@fp32-allreduce", steps, "step", Path("x.png"))
        names = [t.get_text() for t in figures[k].axes[0].get_legend().get_texts()]
        twinned = [name for name in names if "identical" in name]
        assert twinned == ([] if k == 0 else ["lion@fp32-allreduce (identical to adamw@fp32-allreduce)"])


def test_step_time_p50_is_the_summarys(figures):
    runs, styles, baseline, steps, summary = _bench()
    label = "sparseloco@sparseloco-allgather"  # two step times, 50 steps each
    assert sorted(set(dict(runs)[label]["step_s"].round(6))) == [0.00124, 0.012904]
    lower = summary.copy()  # a summary whose p50 is the lower median: the plot follows the table
    lower.loc[lower["run"] == label, "step_p50_s"] = 0.00124
    for table in (summary, lower):
        steptimes.step_time_plot(runs, styles, baseline, steps, Path("s.png"), summary=table)
        cdf = figures[-1].axes[0]
        colour = styles[label]["color"]
        p50 = [line.get_xdata()[0] for line in cdf.lines if line.get_marker() == "o" and line.get_color() == colour]
        expected = float(table.loc[table["run"] == label, "step_p50_s"].iloc[0]) * 1e3  # ms
        assert p50 == [pytest.approx(expected)]


def test_sweep_over_network_shapes_draws_points(figures):
    rows = []
    for network, bandwidth, speedup in (("1gbe", 0.117, 2.0), ("h100x8-10gbe", 1.17, 0.8)):
        for strategy, s in (("adamw", 1.0), ("dlion-mavo", speedup)):
            rows.append({"cell": 0, "workload": "mlp", "seed": 0, "workers": 8, "network": network,
                         "bandwidth_GBps": bandwidth, "strategy": strategy, "transport": "t", "speedup": s,
                         "time_to_target_speedup": s, "baseline": "adamw@t"})
    summary = sweep._labelled(pd.DataFrame(rows), {})
    labels = ["adamw@t", "dlion-mavo@t"]
    sweep._speedup_plot(summary, labels, run_styles(labels, "adamw@t"), "adamw@t", "bandwidth_GBps", "workers",
                        "speedup", "t", Path("s.png"))
    ax = figures[0].axes[0]
    runs = [line for line in ax.lines if line.get_marker() not in ("None", "X")]
    assert len(runs) == 2 and all(line.get_linestyle() == "None" for line in runs)
    assert not [line for line in ax.lines if line.get_marker() == "X"]  # no crossover
    assert "differ in more than the inter-node rate" in figures[0]._suptitle.get_text().replace("\n", " ")
    same = summary.replace({"h100x8-10gbe": "10gbe"})  # flat networks: bandwidth alone changes
    sweep._speedup_plot(same, labels, run_styles(labels, "adamw@t"), "adamw@t", "bandwidth_GBps", "workers",
                        "speedup", "t", Path("s.png"))
    assert [line for line in figures[1].axes[0].lines if line.get_marker() == "X"]


def test_a_target_triangle_at_the_last_step_lies_inside_the_axes(figures):
    """The default bench: lioncub-l0 reaches the target at step 100, the last; its triangle was
    centred on the axes' right edge, half outside."""
    runs, styles, baseline, steps, summary = _bench()
    assert summary["steps_to_target"].max() == steps["step"].max()
    run_plots._loss_plot(runs, styles, baseline, steps, "step", Path("x.png"), summary)
    fig = figures[0]
    drawn_texts(fig)
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    marks = [line for line in ax.lines if line.get_marker() == "v" and not line.get_clip_on()]
    assert len(marks) == summary["steps_to_target"].notna().sum()
    box = ax.get_window_extent(renderer)
    for line in marks:
        mark = line.get_window_extent(renderer)
        assert box.x0 <= mark.x0 and mark.x1 <= box.x1, (line.get_xdata(), ax.get_xlim())
    assert ax.get_xlim()[1] > steps["step"].max()
    assert ax.get_xticklabels()[-1].get_text() == "100"  # the last step still labelled


def test_the_time_to_target_legend_accounts_for_every_run(figures):
    """A run that missed the target had no line and no word in the legend, while the table and the
    report say "not reached"."""
    rows = []
    for workers in (4, 8):
        for strategy, step, speedup in (("adamw", 1.0, 1.0), ("dlion-mavo", 1.5, 2.0 if workers == 4 else np.nan),
                                        ("signsgd", 1.2, np.nan)):
            rows.append({"cell": f"{workers}-{strategy}", "workload": "mlp", "seed": 0, "workers": workers,
                         "network": "1gbe", "bandwidth_GBps": 0.117, "strategy": strategy, "transport": "t",
                         "speedup": step, "time_to_target_speedup": speedup, "target_loss": 0.5,
                         "baseline": "adamw@t"})
    summary = sweep._labelled(pd.DataFrame(rows), {})
    labels = ["adamw@t", "dlion-mavo@t", "signsgd@t"]
    for column in ("time_to_target_speedup", "speedup"):
        sweep._speedup_plot(summary, labels, run_styles(labels, "adamw@t"), "adamw@t", "workers", "network",
                            column, "t", Path("s.png"))
    legend = figures[0].axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == [
        "adamw@t (baseline)", "dlion-mavo@t (not reached in 1 of 2 cells)", "signsgd@t: not reached, no line"]
    assert [h.get_linestyle() for h in legend.legend_handles][2] == "None"  # a hollow marker, no line
    assert [t.get_text() for t in figures[1].axes[0].get_legend().get_texts()] == [
        "adamw@t (baseline)", "dlion-mavo@t", "signsgd@t"]  # the step time: every run has its points


def test_marks_at_the_last_step_show_whole_on_the_step_axes(figures):
    """An eval at the last step drew its diamond (loss) or dot (accuracy) on the axes' right edge,
    half cut off: the step axes now run a little past the last step, which stays labelled."""
    from tests.helpers.frames import frame, rows
    from lionsim.reports import summarize

    run = rows("adamw", 20)
    for r in run:
        if r["step"] % 10 == 0:
            r.update(eval_loss=2.0 - 0.01 * r["step"], eval_acc=0.4 + 0.01 * r["step"])
    steps = frame(run)
    summary = summarize(steps)
    runs = split_runs(steps)
    styles = run_styles([label for label, _ in runs], "adamw@fp32-allreduce")
    run_plots._loss_plot(runs, styles, "adamw@fp32-allreduce", steps, "step", Path("x.png"), summary)
    run_plots._eval_acc_plot(runs, styles, "adamw@fp32-allreduce", steps, "step", Path("y.png"))
    for fig in figures:
        drawn_texts(fig)
        renderer, ax = fig.canvas.get_renderer(), fig.axes[0]
        box = ax.get_window_extent(renderer)
        marked = [line for line in ax.lines if line.get_marker() not in ("None", "", None)
                  and 20 in np.asarray(line.get_xdata())]
        assert marked, [line.get_marker() for line in ax.lines]
        for line in marked:
            assert line.get_window_extent(renderer).x1 <= box.x1, (line.get_marker(), ax.get_xlim())
        assert ax.get_xticklabels()[-1].get_text() == "20"


def test_an_accuracy_axis_says_how_many_samples_it_is_of(figures):
    """60 held-out samples: a move of one is 1.7 pp, which a zoomed axis of two evaluations drew as a
    cliff; the axis now says it (run.json's evaluation.samples), and nothing where the run says none."""
    from tests.helpers.frames import frame, rows

    run = rows("adamw", 20)
    for r in run:
        if r["step"] % 10 == 0:
            r.update(eval_loss=2.0, eval_acc=0.6 + 0.001 * r["step"])
    steps = frame(run)
    runs = split_runs(steps)
    styles = run_styles([label for label, _ in runs], "adamw@fp32-allreduce")
    run_plots._eval_acc_plot(runs, styles, "adamw@fp32-allreduce", steps, "step", Path("y.png"),
                             {"evaluation": {"samples": 60}})
    run_plots._eval_acc_plot(runs, styles, "adamw@fp32-allreduce", steps, "step", Path("z.png"))
    said, plain = (fig.axes[0].get_ylabel() for fig in figures)
    assert said == f"eval accuracy (%)\non 60 held-out samples (one: {100 / 60:.2g} pp)" and "1.7 pp" in said
    assert plain == "eval accuracy (%)"


def test_a_sweep_speedup_plot_says_whose_steps_it_draws(figures):
    """A new user read speedup_vs_workers.png's 2x as his cluster's: its steps are the sweep's own model's
    (summary's params), which the subtitle now says, with what prices a real model."""
    rows = [{"cell": 0, "workload": "gpt", "seed": 0, "workers": w, "network": "1gbe", "bandwidth_GBps": 0.117,
             "strategy": strategy, "transport": "t", "speedup": s * w / 2, "time_to_target_speedup": s,
             "baseline": "adamw@t", "params": 16067} for w in (2, 4) for strategy, s in (("adamw", 1.0), ("lion", 1.5))]
    summary = sweep._labelled(pd.DataFrame(rows), {})
    labels = ["adamw@t", "lion@t"]
    sweep._speedup_plot(summary, labels, run_styles(labels, "adamw@t"), "adamw@t", "workers", "network", "speedup",
                        "t", Path("s.png"))
    said = " ".join(figures[0]._suptitle.get_text().split())
    assert "steps of this workload's own model (16,067 params), not a real model's: lionsim estimate --from-run" in said


def test_a_p99_of_fewer_than_100_steps_says_it_is_the_slowest(figures):
    """Over 27 steps the nearest rank of 0.99 is the 27th: the plot's "p99" is the slowest step, which
    its subtitle now says (a new user's finding); the bench's runs here have fewer than 100 steps."""
    runs, styles, baseline, steps, summary = _bench()
    short = [(label, rows[rows["step"] <= 30]) for label, rows in runs]
    steptimes.step_time_plot(short, styles, baseline, steps[steps["step"] <= 30], Path("s.png"))
    steptimes.step_time_plot(runs, styles, baseline, steps, Path("s.png"), summary=summary)  # 100 steps each
    said, whole = (" ".join(fig._suptitle.get_text().split()) for fig in figures)
    assert "p99 of fewer than 100 steps (30 here) is the slowest step" in said and "p99 of fewer" not in whole
