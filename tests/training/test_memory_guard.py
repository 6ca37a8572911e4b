"""The memory guard (lionsim.training.memory): a run that cannot fit is refused before anything is
allocated, with what it would need; the estimate grows with workers, batch and eval set, a
workload function is counted on the meta device, and what a run peaks at is what the guard counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from lionsim.errors import LionsimError
from tests.helpers import write_plugin
from tests.helpers.cli import run_cli


@pytest.mark.parametrize("argv", [
    ["bench", "-w", "vit", "-b", "100000", "-n", "2", "--steps", "1", "-s", "adamw"],
    ["bench", "-n", "100000", "-w", "mlp", "--steps", "1"],
    ["sweep", "--workload", "mlp", "--workers", "2,100000", "--steps", "1", "-s", "adamw"],
])
def test_a_run_that_does_not_fit_stops_before_allocating(tmp_path, monkeypatch, capsys, argv, available_memory):
    from lionsim.training import runner

    monkeypatch.chdir(tmp_path)
    available_memory(16 * 10**9)
    monkeypatch.setattr(runner.Runner, "__init__", lambda *a, **k: pytest.fail("the run started"))
    code, _, err = run_cli([*argv, "--out", "o"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert "needs about" in err and "16.0 GB is available" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["bench", "sweep"])
def test_every_remedy_names_options_the_command_takes(command):
    """The training data's remedy named --train-size, which no command has."""
    import re

    import typer

    from lionsim.cli.app import app
    from lionsim.training.memory import REMEDIES

    group = typer.main.get_command(app)
    taken = {opt for p in group.commands[command].params for opt in getattr(p, "opts", [])}
    for part, remedy in REMEDIES.items():
        named = set(re.findall(r"--[a-z][a-z-]*", remedy))
        assert named and named <= taken, (part, named - taken)


def test_memory_estimate_grows_with_workers_and_batch_and_small_runs_fit():
    from lionsim.training.memory import check_memory, estimate_memory
    from lionsim.workloads import WorkloadConfig

    small = estimate_memory(WorkloadConfig(name="mlp", workers=2, batch_size=32))
    assert small.total < 10**8
    assert estimate_memory(WorkloadConfig(name="mlp", workers=200, batch_size=32)).workers == 100 * small.workers
    vit = estimate_memory(WorkloadConfig(name="vit", workers=2, batch_size=1000))
    assert vit.activations == 10 * estimate_memory(WorkloadConfig(name="vit", workers=2, batch_size=100)).activations
    check_memory(WorkloadConfig(name="mlp", workers=2), available=10**9)
    with pytest.raises(LionsimError, match="2 at once"):
        check_memory(WorkloadConfig(name="mlp", workers=2), processes=2, available=small.total)


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


def test_a_7b_workload_function_is_counted_on_meta_and_refused_before_it_builds_anything(tmp_path, monkeypatch, capsys,
                                                                                        available_memory):
    from lionsim.numbers import bytes_text
    from lionsim.training import memory, runner

    plugin = write_plugin(tmp_path, SEVEN_B)
    monkeypatch.chdir(tmp_path)
    available_memory(16 * 10**9)
    monkeypatch.setattr(runner.Runner, "__init__", lambda *a, **k: pytest.fail("the run started"))
    holder = {}
    grew = peak_growth(lambda: holder.update(result=run_cli(["bench", "--workload", f"{plugin}:make", "-n", "2",
                                                          "--steps", "2", "-s", "adamw", "--out", "o"], capsys)))
    code, _, err = holder["result"]
    params = 100_000 * 70_000 + 70_000  # weight and bias of the Linear
    assert code == 2 and err.count("\n") == 1, err
    assert f"needs at least {bytes_text(params * 4 * (memory.GLOBAL_COPIES + 2 * memory.WORKER_COPIES))}" in err
    assert "16.0 GB is available" in err and "a smaller model" in err
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


def test_a_huge_eval_set_is_refused_naming_eval_samples_before_anything_is_made(tmp_path, monkeypatch, capsys,
                                                                               available_memory):
    from lionsim.training import runner

    monkeypatch.chdir(tmp_path)
    available_memory(8 * 10**9)
    monkeypatch.setattr(runner.Runner, "__init__", lambda *a, **k: pytest.fail("the run started"))
    holder = {}
    grew = peak_growth(lambda: holder.update(result=run_cli(["bench", "-w", "mlp", "--eval-samples", "100000000",
                                                          "--steps", "2", "--out", "o"], capsys)))
    code, _, err = holder["result"]
    assert code == 2 and err.count("\n") == 1, err
    # refused by what mlp's generated data holds out (as many as its 8192 training samples) before
    # the guard adds up 100M held-out samples (13.6 GB)
    assert "bad --eval-samples 100000000: mlp's generated data holds out 8192 samples" in err
    assert grew < 200 * 10**6 and not (tmp_path / "o").exists()


@linux_peak
def test_a_generated_eval_set_peaks_at_what_the_guard_counts():
    from lionsim.training.memory import estimate_memory
    from lionsim.workloads import WorkloadConfig, build_workload

    # a generated set holds out as many samples as it trains on: train_size lets it grow
    cfg = WorkloadConfig(name="mlp", workers=2, batch_size=8, eval_samples=1_000_000, train_size=1_000_000)
    need = estimate_memory(cfg)
    assert need.heldout == 1_000_000 * (32 * 4 + 8)  # 136 MB: float32 features and int64 labels
    holder = {}
    grew = peak_growth(lambda: holder.update(workload=build_workload(cfg)))
    assert len(holder["workload"].heldout) == 1_000_000
    # the generated set is written in place: its peak is the set and one chunk, not the set twice
    assert grew < need.data + need.heldout + 40 * 10**6, (grew, need)


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
