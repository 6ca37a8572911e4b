"""The first-run rough edges (the default bench, a gloo run, a diverged run): titles that name the wrong link or step count, a
diverged run without its mark, a comm figure with nothing linking it to the model check, a
step-time plot claiming uneven workers, resume messages that hid the change."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from rich.console import Console

import lionsim.reports.plots.steptimes as steptimes
from lionsim.reports import STEP_COLUMNS, SummaryRule, summarize
from lionsim.reports.summary import split_runs
from lionsim.reports.tables import model_check_table, summary_table
from lionsim.training.resume import config_differences

NAN = math.nan


def rows(strategy: str, n: int, *, backend: str = "sim", diverged_at: int | None = None, comm: float = 0.002,
         measured: float = NAN, step_s: list[float] | None = None) -> list[dict]:
    out = []
    for k in range(1, n + 1):
        step = (step_s or [0.01] * n)[k - 1]
        loss = NAN if diverged_at is not None and k == n else 2.0 - 0.01 * k
        out.append({"strategy": strategy, "transport": "fp32-allreduce", "workers": 4, "network": "1gbe",
                    "backend": backend, "workload": "mlp", "seed": 0, "step": k, "loss": loss, "compute_s": 0.005,
                    "encode_s": 0.0, "comm_s": comm, "decode_s": 0.0, "update_s": 0.001, "step_s": step,
                    "sim_time_s": step * k, "wire_bytes": 4000, "bits_per_param_up": 32.0, "bits_per_param_down": 32.0,
                    "params": 1000, "eval_loss": NAN, "eval_acc": NAN, "comm_model_s": 0.003,
                    "comm_measured_s": measured, "barrier_wait_s": 0.0 if backend != "sim" else NAN,
                    "wait_s": 0.0004 if backend != "sim" else 0.0,
                    "diverged_at_step": NAN if diverged_at is None else diverged_at})
    return out


def text(table) -> str:
    console = Console(width=80, record=True, file=open("/dev/null", "w"))
    console.print(table)
    return console.export_text()


def frame(*runs: list[dict]) -> pd.DataFrame:
    steps = pd.DataFrame([r for run in runs for r in run])
    return steps[STEP_COLUMNS + [c for c in steps.columns if c not in STEP_COLUMNS]]


def test_a_diverged_run_is_marked_and_the_title_counts_the_steps_asked_for():
    steps = frame(rows("adamw", 5, diverged_at=5), rows("lion", 5, diverged_at=5))
    shown = text(summary_table(summarize(steps), {"config": {"steps": 20}}))
    assert "20 steps" in shown and "5 steps" not in shown
    assert shown.count("diverged at 5") == 2 and "went non-finite at step N" in " ".join(shown.split())  # each run; the caption says what
    shown_one = text(summary_table(summarize(frame(rows("adamw", 1))), {"config": {"steps": 1}}))
    assert "1 step" in shown_one and "1 steps" not in shown_one


def test_a_gloo_table_names_the_link_measured_on_and_links_comm_to_the_model_check():
    steps = frame(rows("adamw", 8, backend="gloo", comm=0.0003, measured=0.0015))
    summary = summarize(steps)
    meta = {"config": {"steps": 8}, "ranks_on_one_host": True}
    title = text(summary_table(summary, meta)).splitlines()[0]
    assert "loopback, measured (model: 1gbe)" in title
    check = text(model_check_table(summary, "1gbe + gloo traits"))
    header = next(line for line in check.splitlines() if "measured" in line and "booked" in line).split()
    values = next(line for line in check.splitlines() if line.strip().startswith("adamw")).split()
    assert header[:4] == ["run", "booked", "measured", "model"]
    assert values[1:3] == ["0.30", "1.5"]  # booked: the main table's comm (0.3 ms); measured: the mean
    assert "the comm column above" in check


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


def test_resume_differences_name_what_changed():
    old = {"lr": None, "hyper": {"adamw@fp32-allreduce": {"lr": 0.001, "weight_decay": 0.1, "betas": [0.9, 0.999]}}}
    new = {"lr": 0.01, "hyper": {"adamw@fp32-allreduce": {"lr": 0.01, "weight_decay": 0.1, "betas": [0.9, 0.999]}}}
    assert config_differences(old, new) == ["--lr (not given) -> 0.01", "--hyper adamw@fp32-allreduce.lr 0.001 -> 0.01"]
    assert config_differences({"trace": False, "out": "a"}, {"trace": True, "out": "b"}) == []


@pytest.mark.parametrize("text,expected", [
    ("workerz = 4\n", "unknown key 'workerz' in {path} for `lionsim bench`; did you mean 'workers'? accepted: "),
    ('workers = "four"\n', 'bad workers = "four" in {path}: '),
    ("steps = 2.5\n", "bad steps = 2.5 in {path}: "),
])
def test_a_bad_config_file_names_itself_and_the_key(tmp_path, capsys, text, expected):
    from lionsim.cli.app import main

    path = tmp_path / "run.toml"
    path.write_text(text)
    with pytest.raises(SystemExit) as done:
        main(["bench", "--config", str(path), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.startswith("error: " + expected.format(path=path)), err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_a_held_run_is_described_in_words(tmp_path):
    from lionsim.reports.outdir import Held

    held = Held(kind="bench", meta={"status": "interrupted", "config": {"workload": "mlp", "steps": 1}, "runs": [{}]})
    assert held.describe(tmp_path).endswith("holds an interrupted bench run (mlp, 1 run, 1 step)")
    held = Held(kind="bench", meta={"status": "failed", "config": {"workload": "mlp", "steps": 20}, "runs": [{}, {}]})
    assert held.describe(tmp_path).endswith("holds a failed bench run (mlp, 2 runs, 20 steps)")


def rendered(renderable, width: int = 80) -> list[str]:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))
    console.print(renderable)
    return console.export_text().splitlines()


def test_networks_traits_prints_sizes_in_words_and_a_whole_footer():
    from lionsim.cli.network_cmds import _traits_table

    lines = rendered(_traits_table())
    body = " ".join(" ".join(lines).split())
    assert "MiB" not in body and "<= 23 KiB: 1" in body and "larger: 0.76" in body  # gloo's all_reduce: 23552 B
    assert body.endswith("or write your own as a profile's [traits] table.")


def test_the_matrix_keeps_each_option_whole_on_80_columns():
    from lionsim.cli.matrix import matrix_table

    lines = rendered(matrix_table())
    assert max(len(line) for line in lines) <= 80
    assert any('DistributedLion(vote="mavo")' in line for line in lines)
    assert all(line.count("(") == line.count(")") for line in lines if "DistributedLion" in line)


def test_the_regress_table_fits_80_columns():
    from types import SimpleNamespace

    from lionsim.cli.regress_view import check_table
    from lionsim.regress.rows import Row

    rows = [Row("mlp-n4-iid", run, metric, "pass", 0.7644, 0.7644, 0.001226)
            for run, metric in (("dlion-mavo@int8-allreduce", "gap_to_lion"), ("lioncub-l1@int8-allreduce", "loss@50"))]
    rows.append(Row("mlp-n8-iid", "dlion-mavo@a2a-1bit", "best_loss", "FAIL", 0.6118, 0.7, 0.001, excess=88.0))
    result = SimpleNamespace(baseline="reports/baselines/regress.json", mode="float", rows=rows)
    lines = rendered(check_table(result, everything=True))
    assert max(len(line) for line in lines) <= 80
    assert [line.split()[0] for line in lines if "iid" in line or "@" in line] == \
        ["mlp-n4-iid", "dlion-mavo@int8-allreduce", "lioncub-l1@int8-allreduce", "mlp-n8-iid", "dlion-mavo@a2a-1bit"]


def test_comm_default_sweep_doubles_from_1_kib_to_1_gib(capsys):
    from lionsim.cli.app import main

    with pytest.raises(SystemExit) as done:
        main(["comm", "--format", "csv"])
    assert done.value.code == 0
    from io import StringIO

    sizes = pd.read_csv(StringIO(capsys.readouterr().out))["bytes"].tolist()
    assert sizes == [2**k for k in range(10, 31)]  # nccl-tests -b 1K -e 1G -f 2
    from lionsim.cli.comm_view import human_bytes

    assert [human_bytes(n) for n in (1024, 2**20, 2**30, 1000, 524_288_000)] == \
        ["1 KiB", "1 MiB", "1 GiB", "1 KB", "524 MB"]


def drawn_figures(monkeypatch, module) -> dict:
    """Every figure a plot module saves, by file stem."""
    figures = {}
    real = module.save

    def keep(fig, path):
        figures[path.stem] = fig
        return real(fig, path)

    monkeypatch.setattr(module, "save", keep)
    return figures


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
    shown = [m.get_transform().transform((m.get_xdata()[0], m.get_ydata()[0])) for m in marks]
    assert len({tuple(round(v, 1) for v in xy) for xy in shown}) == 3  # none hides another
    ticks = figures["bytes_per_step"].axes[0].get_xticks()
    assert ticks[-1] >= 525_000 and ticks[-2] < 525_000  # the axis ends at the first tick past the largest bar
    log = parts["time_breakdown"].axes[2]
    faces = [tuple(c.get_facecolor()[0]) for c in log.collections if len(c.get_offsets())]
    assert (1.0, 1.0, 1.0, 1.0) in faces  # total comm: open, unlike the filled exposed comm beside it


def test_a_misspelt_compute_device_gets_the_near_one():
    from lionsim.bench import BenchConfig
    from lionsim.errors import LionsimError

    with pytest.raises(LionsimError, match=r"did you mean 'h100'\?$"):
        BenchConfig(workload="mlp", compute="h10").validate()
