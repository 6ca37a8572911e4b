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
    from lionsim import bench
    from lionsim.training import memory

    plugin = write_plugin(tmp_path, SEVEN_B)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(memory, "available_memory", lambda: 16 * 10**9)
    monkeypatch.setattr(bench.Bench, "__init__", lambda *a, **k: pytest.fail("the run started"))
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
    from lionsim import bench
    from lionsim.training import memory

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(memory, "available_memory", lambda: 8 * 10**9)
    monkeypatch.setattr(bench.Bench, "__init__", lambda *a, **k: pytest.fail("the run started"))
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
