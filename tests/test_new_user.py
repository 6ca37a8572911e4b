"""What a new user met: a refusal instead of the OOM killer, a BatchNorm model that trains, a
workload's own metric named and ranked in its own direction, the seed spread of a sweep, and
the small things (the devices listed, the estimate's units)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

from lionsim.cli.app import main


def run(capsys, *argv) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(argv))
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def write_plugin(tmp_path: Path, body: str, name: str = "mine.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} in /proc/self/status")


def peak_growth(action) -> int:
    """Bytes the process's peak resident memory rose above its resident memory while `action()`
    ran (Linux: the peak, VmHWM, is reset to the current RSS first through /proc/self/clear_refs)."""
    Path("/proc/self/clear_refs").write_text("5")
    before = _status("VmRSS")
    action()
    return _status("VmHWM") - before


linux_peak = pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux's /proc peak reset")


# --- out of memory: a refusal, in one line, before anything is allocated ---------------------------

SEVEN_B = """
    import torch
    from torch import nn

    def make():
        if torch.get_default_device().type != "meta":
            raise RuntimeError("called for real: it would allocate 28 GB")
        model = nn.Linear(100_000, 70_000)  # 7,000,070,000 parameters
        data = torch.utils.data.TensorDataset(torch.zeros(64, 100_000), torch.zeros(64, dtype=torch.long))
        return model, data, nn.functional.cross_entropy
"""


def test_a_7b_workload_function_is_counted_on_meta_and_refused_before_it_builds_anything(tmp_path, monkeypatch, capsys):
    from lionsim.training import memory, runner

    plugin = write_plugin(tmp_path, SEVEN_B)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(memory, "available_memory", lambda: 16 * 10**9)
    monkeypatch.setattr(runner.Runner, "__init__", lambda *a, **k: pytest.fail("the run started"))
    holder = {}
    grew = peak_growth(lambda: holder.update(result=run(capsys, "bench", "--workload", f"{plugin}:make", "-n", "2",
                                                          "--steps", "2", "-s", "adamw", "--out", "o")))
    code, _, err = holder["result"]
    params = 100_000 * 70_000 + 70_000  # weight and bias of the Linear
    assert code == 2 and err.count("\n") == 1, err
    assert f"needs at least {memory.human_bytes(params * 4 * (memory.GLOBAL_COPIES + 2 * memory.WORKER_COPIES))}" in err
    assert "16 GB is available" in err and "a smaller model" in err
    assert not (tmp_path / "o").exists()
    if Path("/proc/self/clear_refs").exists():
        assert grew < 200 * 10**6  # nothing of the 28 GB was allocated


def test_the_meta_count_is_the_models_parameters_and_a_function_meta_cannot_run_falls_back(tmp_path):
    from lionsim.workloads import canonical_workload
    from lionsim.workloads.plugin import meta_params

    plugin = write_plugin(tmp_path, SEVEN_B)
    assert meta_params(canonical_workload(f"{plugin}:make"), 0) == 100_000 * 70_000 + 70_000
    reads = write_plugin(tmp_path, """
        import torch
        from torch import nn

        def make():
            model = nn.Linear(4, 2)
            scale = float(model.weight.detach().abs().max())  # reads a value: impossible on meta
            data = torch.utils.data.TensorDataset(torch.randn(40, 4) * scale, torch.randint(0, 2, (40,)))
            return model, data, nn.functional.cross_entropy
    """, "reads.py")
    assert meta_params(canonical_workload(f"{reads}:make"), 0) is None


def test_a_huge_eval_set_is_refused_naming_eval_samples_before_anything_is_made(tmp_path, monkeypatch, capsys):
    from lionsim.training import memory, runner

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(memory, "available_memory", lambda: 8 * 10**9)
    monkeypatch.setattr(runner.Runner, "__init__", lambda *a, **k: pytest.fail("the run started"))
    holder = {}
    grew = peak_growth(lambda: holder.update(result=run(capsys, "bench", "-w", "mlp", "--eval-samples", "100000000",
                                                          "--steps", "2", "--out", "o")))
    code, _, err = holder["result"]
    assert code == 2 and err.count("\n") == 1, err
    # 100M samples of 32 float32 features and an int64 label
    assert f"held-out data {memory.human_bytes(10**8 * (32 * 4 + 8))}" in err and "fewer --eval-samples" in err
    assert grew < 200 * 10**6 and not (tmp_path / "o").exists()


@linux_peak
def test_a_generated_eval_set_peaks_at_what_the_guard_counts():
    from lionsim.training.memory import estimate_memory
    from lionsim.workloads import WorkloadConfig, build_workload

    cfg = WorkloadConfig(name="mlp", workers=2, batch_size=8, eval_samples=1_000_000)
    need = estimate_memory(cfg)
    assert need.heldout == 1_000_000 * (32 * 4 + 8)  # 136 MB: float32 features and int64 labels
    holder = {}
    grew = peak_growth(lambda: holder.update(workload=build_workload(cfg)))
    assert len(holder["workload"].heldout) == 1_000_000
    # the generated set is written in place: its peak is the set and one chunk, not the set twice
    assert grew < need.data + need.heldout + 40 * 10**6, (grew, need)


# --- a BatchNorm CNN on 32x32 images trains -----------------------------------------------------------

BATCHNORM_CNN = """
    import torch
    from torch import nn

    def make():
        # strided convolutions down to 1x1, a BatchNorm on each: in training mode one sample
        # gives the last BatchNorm one value per channel (resnet10t on 32x32 images does the same)
        model = nn.Sequential(
            nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8), nn.ReLU(),  # 16x16
            nn.Conv2d(8, 8, 3, stride=4, padding=1), nn.BatchNorm2d(8), nn.ReLU(),  # 4x4
            nn.Conv2d(8, 16, 4), nn.BatchNorm2d(16), nn.ReLU(),                      # 1x1
            nn.Flatten(), nn.Linear(16, 10))
        g = torch.Generator().manual_seed(0)
        images, labels = torch.randn(80, 3, 32, 32, generator=g), torch.randint(0, 10, (80,), generator=g)
        return model, torch.utils.data.TensorDataset(images, labels), nn.functional.cross_entropy
"""


def test_a_batchnorm_cnn_on_32x32_images_trains(tmp_path, monkeypatch, capsys):
    import pandas as pd

    plugin = write_plugin(tmp_path, BATCHNORM_CNN, "bn_cnn.py")
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "bench", "--workload", f"{plugin}:make", "-n", "2", "-b", "4", "--steps", "2",
                       "--eval-every", "2", "-s", "adamw", "--out", "o")
    assert code == 0, err
    steps = pd.read_csv(tmp_path / "o" / "steps.csv")
    assert len(steps) == 2 and steps["loss"].notna().all() and steps["eval_acc"].notna().any()


def test_the_activation_probe_counts_per_sample_what_autograd_saves_not_the_dataset(tmp_path):
    """Reference: Linear-ReLU-Linear under cross-entropy saves, per sample, the input (the first
    weight's gradient), ReLU's output (its own and the second weight's gradient), the
    log-softmax and the int64 target: 4 x (12 + 40 + 5) + 8 = 236 bytes, plus a 4-byte scalar
    per batch. A probe sample sliced from the user's dataset shares its storage: counting that
    storage priced the whole dataset as one sample's activations."""
    from lionsim.training.memory import _probe
    from lionsim.workloads import canonical_workload

    plugin = write_plugin(tmp_path, """
        import torch
        from torch import nn

        def make():
            model = nn.Sequential(nn.Linear(12, 40), nn.ReLU(), nn.Linear(40, 5))
            data = torch.utils.data.TensorDataset(torch.randn(300, 12), torch.randint(0, 5, (300,)))
            return model, data, nn.functional.cross_entropy
    """, "small.py")
    params, activation, per_unit, _ = _probe(canonical_workload(f"{plugin}:make"), "small")
    assert params == 12 * 40 + 40 + 40 * 5 + 5 and per_unit == 12 * 4 + 8
    per_sample = 4 * (12 + 40 + 5) + 8
    assert per_sample <= activation <= per_sample + 4, activation


# --- small things: the devices, the help, the estimate's units ----------------------------------------

REPO = Path(__file__).resolve().parents[1]


def test_every_command_is_in_the_commands_page():
    import typer

    from lionsim.cli.app import app

    page = (REPO / "docs" / "commands.md").read_text()
    names = [name for name, command in typer.main.get_command(app).commands.items() if not command.hidden]
    assert "devices" in names
    assert [name for name in names if f"`lionsim {name}" not in page and f"/ `{name}`" not in page] == []


def test_bench_compute_help_names_every_device_the_option_accepts(capsys):
    from lionsim.compute import DEVICES

    code, out, _ = run(capsys, "bench", "--help")
    assert code == 0
    text = " ".join(out.split())
    assert all(name in text for name in DEVICES.names()), text


def test_the_top_level_help_is_the_packages_description_and_names_more_than_lion(capsys):
    import tomllib

    description = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["description"]
    code, out, _ = run(capsys, "--help")
    text = " ".join(out.split())
    assert code == 0 and description in text
    assert all(method in description for method in ("Distributed Lion", "PowerSGD", "DiLoCo", "Muon"))


def test_a_counted_image_models_estimate_counts_samples_in_their_own_column(tmp_path, capsys):
    import pandas as pd

    code, out, err = run(capsys, "estimate", "-m", "resnet18", "-n", "4", "-s", "adamw", "--tokens-per-worker", "1",
                         "--out", str(tmp_path / "e"))
    assert code == 0, err
    assert "1 sample/worker" in " ".join(out.split())
    row = pd.read_csv(tmp_path / "e" / "estimate.csv").iloc[0]
    assert row["unit"] == "samples" and row["samples_per_worker"] == 1 and pd.isna(row["tokens_per_worker"])
    code, out, _ = run(capsys, "estimate", "-m", "gpt2-124m", "-n", "4", "-s", "adamw", "--out", str(tmp_path / "g"))
    row = pd.read_csv(tmp_path / "g" / "estimate.csv").iloc[0]
    assert code == 0 and "1,024 tokens/worker" in " ".join(out.split())
    assert row["unit"] == "tokens" and row["tokens_per_worker"] == 1024 and pd.isna(row["samples_per_worker"])


# --- a workload's own metric: named, and ranked in its own direction ------------------------------------

EXAMPLE = REPO / "examples" / "plugins" / "cnn_workload.py"


@pytest.fixture()
def example_data(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("CNN_WORKLOAD_DATA", str(tmp_path_factory.getbasetemp() / "cnn" / "images.pt"))


def test_an_error_rate_is_named_and_its_best_is_its_smallest_in_summary_table_and_plots(tmp_path, capsys, monkeypatch,
                                                                                         example_data):
    import pandas as pd
    from matplotlib.axes import Axes

    labels = []
    real = Axes.set_ylabel
    def set_ylabel(self, text, *args, **kwargs):
        labels.append(text)
        return real(self, text, *args, **kwargs)

    monkeypatch.setattr(Axes, "set_ylabel", set_ylabel)
    out = tmp_path / "e"
    code, table, err = run(capsys, "bench", "-w", f"{EXAMPLE}:make_with_eval", "-n", "2", "-b", "8", "--steps", "6",
                           "--eval-every", "1", "-s", "adamw", "--out", str(out))
    assert code == 0, err
    steps, summary = pd.read_csv(out / "steps.csv"), pd.read_csv(out / "summary.csv")
    assert set(steps["eval_metric"]) == {"error rate"} and set(steps["eval_higher_is_better"]) == {0}
    row = summary.iloc[0]
    assert row["eval_metric"] == "error rate" and row["eval_higher_is_better"] == 0
    scored = steps["eval_acc"].dropna()
    assert scored.nunique() > 1  # the reference below can tell the smallest from the largest
    assert row["best_eval_acc"] == pytest.approx(scored.min())  # an error rate's best is its smallest
    assert row["final_eval_acc"] == pytest.approx(scored.iloc[-1])
    words = " ".join(table.split())
    assert "error rate" in words and "lower is better" in words and f"{scored.iloc[-1]:.4g}" in words
    assert "eval error rate (lower is better)" in labels and "eval accuracy (%)" not in labels


def test_summaries_take_the_metric_and_direction_from_the_steps_and_default_to_accuracy():
    import pandas as pd

    from lionsim.reports import summarize
    from lionsim.reports.columns import STEP_COLUMNS

    base = {c: 0.0 for c in STEP_COLUMNS} | {"strategy": "adamw", "transport": "fp32-allreduce", "workers": 2,
                                              "network": "1gbe", "backend": "sim", "workload": "w", "seed": 0,
                                              "params": 10, "step_s": 1.0, "sim_time_s": 1.0}
    rows = [base | {"step": i + 1, "loss": 1.0 / (i + 1), "eval_acc": acc} for i, acc in enumerate([0.4, 0.1, 0.3])]
    old = pd.DataFrame(rows)
    assert summarize(old).iloc[0]["best_eval_acc"] == 0.4 and summarize(old).iloc[0]["eval_metric"] == "accuracy"
    own = old.assign(eval_metric="error rate", eval_higher_is_better=0)
    got = summarize(own).iloc[0]
    assert got["best_eval_acc"] == 0.1 and got["eval_metric"] == "error rate" and got["eval_higher_is_better"] == 0


def test_regress_keeps_a_lower_is_better_metric_apart_and_worse_when_it_rises():
    import pandas as pd

    from lionsim.regress.metrics import LOWER_EVAL, is_worse, run_metrics

    rows = pd.DataFrame({"step": [1, 2], "loss": [1.0, 0.9], "eval_loss": [1.0, 0.8], "eval_acc": [0.3, 0.2],
                         "eval_metric": "error rate", "eval_higher_is_better": 0})
    metrics = run_metrics(rows)
    assert metrics[LOWER_EVAL] == 0.2 and "eval_acc" not in metrics
    assert is_worse(LOWER_EVAL, 0.2, 0.3, 0.05) and not is_worse(LOWER_EVAL, 0.2, 0.1, 0.05)
    assert run_metrics(rows.drop(columns=["eval_metric", "eval_higher_is_better"]))["eval_acc"] == 0.2


@pytest.mark.parametrize("extra, message", [
    ('"metric_name": "top-1"', "metric_name and higher_is_better describe a metric of your own"),
    ('"metric": lambda o, t: 0.5, "metric_name": "x" * 41', "metric_name 'xxxx"),
    ('"metric": lambda o, t: 0.5, "higher_is_better": "no"', "higher_is_better is 'no'; accepted: True or False"),
])
def test_a_bad_metric_naming_is_one_line(tmp_path, monkeypatch, capsys, extra, message):
    plugin = write_plugin(tmp_path, f"""
        import torch
        from torch import nn

        def make():
            data = torch.utils.data.TensorDataset(torch.randn(40, 4), torch.randint(0, 2, (40,)))
            return {{"model": nn.Linear(4, 2), "train": data, "loss": nn.functional.cross_entropy, {extra}}}
    """)
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "bench", "--workload", f"{plugin}:make", "-n", "2", "--steps", "1", "--out", "o")
    assert code == 2 and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "o").exists()


def test_a_sweep_table_and_report_name_the_metric(tmp_path):
    import pandas as pd
    from rich.console import Console

    from lionsim.cli.sweep_view import sweep_table
    from lionsim.reports.markdown import _summary_rows

    summary = pd.DataFrame({"run": ["adamw@fp32-allreduce"], "strategy": ["adamw"], "transport": ["fp32-allreduce"],
                            "workload": ["w"], "workers": [2], "network": ["1gbe"], "seed": [0], "final_loss": [0.5],
                            "final_eval_acc": [0.125], "step_s": [0.01], "speedup": [1.0], "comm_s": [0.001],
                            "bits_per_param_up": [32.0], "bits_per_param_down": [32.0],
                            "time_to_target_speedup": [1.0], "eval_metric": ["error rate"],
                            "eval_higher_is_better": [0]})
    console = Console(width=200, record=True)
    console.print(sweep_table(summary))
    text = console.export_text()
    assert "error rate" in text and "0.125" in text and "12.5%" not in text
    report = _summary_rows(summary)
    assert "eval error rate (lower is better)" in report and "0.125" in report


# --- accuracy noise: the seed spread of a sweep ------------------------------------------------------------


def test_a_sweep_over_two_seeds_shows_each_runs_spread_in_its_table_and_summary(tmp_path, capsys):
    import pandas as pd

    out = tmp_path / "s"
    code, table, err = run(capsys, "sweep", "--workload", "mlp", "--model-size", "tiny", "--workers", "2",
                           "--seed", "0,1", "--steps", "3", "--eval-every", "1", "-s", "adamw,lion", "--out", str(out))
    assert code == 0, err
    summary = pd.read_csv(out / "sweep_summary.csv")
    assert len(summary) == 4 and (summary["seed_count"] == 2).all()
    for _, rows in summary.groupby("run"):
        loss, acc = rows["final_loss"].tolist(), rows["final_eval_acc"].tolist()
        # the sample standard deviation of two values: |a - b| / sqrt(2)
        assert rows["final_loss_seed_sd"].tolist() == pytest.approx([abs(loss[0] - loss[1]) / 2**0.5] * 2)
        assert rows["final_eval_acc_seed_sd"].tolist() == pytest.approx([abs(acc[0] - acc[1]) / 2**0.5] * 2)
    assert summary["final_loss_seed_sd"].gt(0).all()  # two seeds train differently
    words = " ".join(table.split())
    assert "across seeds: mean ± sd" in words and "does not rank strategies" in words
    adamw = summary[summary["run"] == "adamw@fp32-allreduce"]
    mean, sd = adamw["final_eval_acc"].mean(), adamw["final_eval_acc"].std(ddof=1)
    assert f"{mean * 100:.1f}% ± {sd * 100:.1f}%" in words


def test_one_seed_has_no_spread_and_no_seed_table():
    import pandas as pd

    from lionsim.cli.sweep_view import seed_table
    from lionsim.sweep.tables import seed_spread

    summary = pd.DataFrame({"workload": "mlp", "workers": 2, "network": "1gbe", "seed": 0,
                            "run": ["adamw@fp32-allreduce", "lion@fp32-allreduce"],
                            "final_loss": [1.0, 2.0], "final_eval_acc": [0.5, 0.6]})
    spread = seed_spread(summary)
    assert (spread["seed_count"] == 1).all() and spread["final_eval_acc_seed_sd"].isna().all()
    assert seed_table(spread) is None


def test_the_seed_spread_the_time_model_quotes_is_the_regress_baselines():
    import json
    import re

    cases = json.loads((REPO / "reports" / "baselines" / "regress.json").read_text())["cases"]
    page = (REPO / "docs" / "time-model.md").read_text()
    section = page.split("### What one seed shows", 1)[1].split("\n## ", 1)[0]
    vit = cases["vit-n4-iid"]["runs"]
    for run, label in (("adamw@fp32-allreduce", "adamw"), ("lion@fp32-allreduce", "lion"),
                       ("dlion-mavo@a2a-1bit", "dlion-mavo@a2a-1bit")):
        m = vit[run]["metrics"]["eval_acc"]
        row = f"| {label} | {m['value'] * 100:.1f}% | {m['sd'] * 100:.1f} points | {m['noise_rms'] * 100:.1f} points |"
        assert row in section, row
    for case in ("mlp-n4-iid", "gpt-n4-iid"):
        runs = ("adamw", "lion", "dlion-mavo")
        metrics = cases[case]["runs"]
        values = [metrics[next(r for r in metrics if r.split("@")[0] == name)]["metrics"]["eval_acc"]["value"]
                  for name in runs]
        assert " / ".join(f"{v * 100:.1f}" for v in values) + "%" in section
    assert re.search(r"one seed's accuracy does not rank strategies", section, re.I)
