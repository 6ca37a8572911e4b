"""`--workload FILE.py:FUNC`: a user's (model, dataset, loss_fn) trains like a built-in workload.

References: the batches lionsim trains on are rows of the user's dataset read by a plain loop;
evaluation equals a per-sample loop over the held-out rows; a resumed run equals an
uninterrupted one; every bad plugin is one line, exit 2, nothing written.
"""

from __future__ import annotations

import copy
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import torch
from torch import nn

from lionsim.bench import BenchConfig, plan, run_bench
from lionsim.errors import LionsimError
from lionsim.reports.files import write_run
from lionsim.training.checkpoint import save_checkpoint
from lionsim.training.loop import RunStopped
from lionsim.training.results import Results
from lionsim.training.resume import load_resume
from lionsim.training.runner import Runner
from lionsim.training.stop import StopRequest
from lionsim.workloads import WorkloadConfig, build_workload, canonical_workload
from tests.helpers import REPO, write_plugin
from tests.helpers.cli import run_cli

EXAMPLE = REPO / "examples" / "plugins" / "cnn_workload.py"
MAKE = f"{EXAMPLE}:make"
SMALL = ["-n", "2", "-b", "8", "--steps", "4", "--eval-every", "2", "-s", "adamw,dlion-mavo"]


@pytest.fixture(autouse=True)
def example_data(tmp_path_factory, monkeypatch):
    """The example writes its image file here (once per test session)."""
    monkeypatch.setenv("CNN_WORKLOAD_DATA", str(tmp_path_factory.getbasetemp() / "cnn" / "images.pt"))


def example_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("cnn_example_reference", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_batches_are_rows_of_the_users_dataset_and_the_held_out_tenth_is_never_trained_on():
    wl = build_workload(WorkloadConfig(name=MAKE, workers=3, batch_size=8, seed=0))
    _, dataset, _ = example_module().make()
    rows = torch.stack([dataset[i][0] for i in range(len(dataset))])  # a plain loop over the user's items
    labels = torch.stack([dataset[i][1] for i in range(len(dataset))])
    held = len(dataset) // 10
    assert len(wl.train) == len(dataset) - held and wl.eval_size == min(1024, held)
    train_rows = {tuple(r.flatten().tolist()) for r in wl.train.inputs}
    for x, y in wl.batches(5):
        for xi, yi in zip(x, y):
            i = next(j for j in range(len(rows)) if torch.equal(rows[j], xi))
            assert labels[i] == yi
    held_rows = [tuple(r.flatten().tolist()) for r in wl.heldout.inputs]
    assert not train_rows & set(held_rows)  # disjoint (the synthetic images are all distinct)
    assert sorted(torch.cat(wl.shards).tolist()) == list(range(len(wl.train)))


def test_initial_weights_depend_on_the_seed_only():
    first = build_workload(WorkloadConfig(name=MAKE, workers=2, seed=3)).model.state_dict()
    again = build_workload(WorkloadConfig(name=MAKE, workers=4, seed=3)).model.state_dict()
    other = build_workload(WorkloadConfig(name=MAKE, workers=2, seed=4)).model.state_dict()
    assert all(torch.equal(first[k], again[k]) for k in first)
    assert not all(torch.equal(first[k], other[k]) for k in first)


def test_evaluate_equals_a_per_sample_loop():
    wl = build_workload(WorkloadConfig(name=MAKE, workers=2, seed=0, eval_samples=100))
    model = copy.deepcopy(wl.model).eval()
    losses, hits = [], []
    with torch.no_grad():
        for i in range(100):
            logits = model(wl.heldout.inputs[i:i + 1])
            losses.append(nn.functional.cross_entropy(logits, wl.heldout.targets[i:i + 1]).item())
            hits.append(int(logits.argmax() == wl.heldout.targets[i]))
    got = wl.evaluate(wl.model)
    assert got["eval_loss"] == pytest.approx(sum(losses) / 100, rel=1e-5)
    assert got["eval_acc"] == pytest.approx(sum(hits) / 100)


def test_bench_runs_the_example_and_records_the_absolute_spec(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    out = tmp_path / "run"
    code, _, err = run_cli(["bench", "-w", "examples/plugins/cnn_workload.py:make", *SMALL, "--out", str(out)], capsys)
    assert code == 0, err
    steps = pd.read_csv(out / "steps.csv")
    assert set(steps["workload"]) == {MAKE} and len(steps) == 8
    assert steps["loss"].notna().all() and steps["eval_loss"].notna().sum() == 4
    meta = json.loads((out / "run.json").read_text())
    assert meta["config"]["workload"] == MAKE  # argv (sys.argv) keeps what was typed
    code, _, err = run_cli(["report", str(out)], capsys)
    assert code == 0 and (out / "report.md").exists(), err
    options = config_options(out / "report.md")
    assert options["workload"] == MAKE and "model_size" not in options  # a file builds its own model


def config_options(report: Path) -> dict[str, str]:
    """The option -> value rows of a report.md's Configuration table."""
    text = report.read_text().split("## Configuration", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines() if line.startswith("|")]
    return {row[0]: row[1] for row in rows[2:]}


@pytest.mark.slow
def test_dirichlet_split_and_the_richer_form(tmp_path, capsys):
    code, _, err = run_cli(["bench", "-w", MAKE, *SMALL, "--data-split", "dirichlet:0.3", "--out",
                            str(tmp_path / "d")], capsys)
    assert code == 0, err
    code, _, err = run_cli(["bench", "-w", f"{EXAMPLE}:make_with_eval", *SMALL, "--eval-samples", "all",
                            "--out", str(tmp_path / "e")], capsys)
    assert code == 0, err
    meta = json.loads((tmp_path / "e" / "run.json").read_text())
    assert meta["evaluation"]["samples"] == 2048 - 1792  # its own eval set, every sample
    steps = pd.read_csv(tmp_path / "e" / "steps.csv")
    scored = steps.dropna(subset=["eval_acc"])
    assert len(scored) and scored["eval_acc"].between(0, 1).all()


def test_dirichlet_shards_follow_the_users_labels():
    wl = build_workload(WorkloadConfig(name=MAKE, workers=4, batch_size=8, data_split="dirichlet:0.1"))
    for i in range(4):
        assert torch.equal(wl.shard_labels(i), wl.train.targets[wl.shards[i]])
    spread = [torch.bincount(wl.shard_labels(i), minlength=4).float() for i in range(4)]
    assert max(float(s.max() / s.sum()) for s in spread) > 0.5  # a skewed split, as alpha 0.1 gives


def test_a_sweep_of_two_cells_and_its_report(tmp_path, capsys):
    out = tmp_path / "sweep"
    code, _, err = run_cli(["sweep", "-w", MAKE, "--workers", "2,4", "-b", "8", "--steps", "3", "-s", "adamw",
                            "--network", "10gbe", "--out", str(out)], capsys)
    assert code == 0, err
    cells = sorted(p.name for p in (out / "cells").iterdir())
    assert cells == ["cnn_workload.make-w2-10gbe-s0-adamw@fp32-allreduce",
                     "cnn_workload.make-w4-10gbe-s0-adamw@fp32-allreduce"]
    assert set(pd.read_csv(out / "sweep_summary.csv")["workload"]) == {MAKE}
    code, _, err = run_cli(["report", str(out)], capsys)
    assert code == 0, err
    assert "model_size" not in config_options(out / "report.md")  # no workload of the grid takes one


def test_a_stopped_run_resumes_exactly(tmp_path):
    cfg = BenchConfig(workload=MAKE, workers=2, batch_size=8, steps=6, eval_every=2, compute="h100",
                      strategies=["adamw", "dlion-mavo"])
    made = plan(cfg)
    whole = run_bench(cfg).steps
    request = StopRequest()
    bench = Runner(made)
    with pytest.raises(RunStopped):
        bench.run(lambda run, step, loss: request.ask() if run.label.startswith("dlion") and step == 3 else None,
                  stop=request)
    save_checkpoint(tmp_path, 0, bench.checkpoint)
    partial = Results(bench).result(status="interrupted")
    write_run(tmp_path, partial.steps, partial.summary, partial.meta)
    again_runner = Runner(made, resume=load_resume(tmp_path, made))
    again_runner.run()
    again = Results(again_runner).result().steps
    pd.testing.assert_frame_equal(again.reset_index(drop=True), whole.reset_index(drop=True))


@pytest.mark.slow
def test_module_form_and_an_installed_entry_point(tmp_path):
    """`module:FUNC` from the path, and an entry point of lionsim.workloads (a dist-info on the path)."""
    dist = tmp_path / "cnnplugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: cnnplugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[lionsim.workloads]\ncnn-shapes = cnn_workload:make\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(EXAMPLE.parent), str(tmp_path)])}
    listing = subprocess.run([sys.executable, "-m", "lionsim", "workloads", "--format", "csv"], env=env,
                             capture_output=True, text=True, timeout=120)
    assert listing.returncode == 0, listing.stderr
    assert "cnn-shapes,\"Small CNN on 12x12 images of 4 shapes" in listing.stdout
    for name in ("cnn-shapes", "cnn_workload:make"):
        done = subprocess.run([sys.executable, "-m", "lionsim", "bench", "-w", name, *SMALL[:-2], "-s", "adamw",
                               "--out", str(tmp_path / name.replace(":", "_"))], env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert set(pd.read_csv(tmp_path / name.replace(":", "_") / "steps.csv")["workload"]) == {name}


PREAMBLE = """
import torch
from torch import nn
from torch.utils.data import TensorDataset
X, Y = torch.randn(64, 4), torch.randint(0, 3, (64,))
"""

BAD = {
    "no-function": ("def other():\n    pass\n", "make", "no function 'make' in it; it defines: other"),
    "import-raises": ("raise RuntimeError('boom at import')\n", "make", "importing it failed: RuntimeError: boom at import"),
    "import-exits": ("import sys\nsys.exit('bye')\n", "make", "importing it failed: SystemExit: bye; lionsim "
                     "imports the file and calls what it names itself, so a script's own argument parsing"),
    "call-exits": ("def make():\n    raise SystemExit(2)\n", "make", "calling it raised SystemExit: 2; lionsim imports"),
    "call-raises": ("def make():\n    raise KeyError('cfg')\n", "make", "calling it raised KeyError"),
    "returns-int": ("def make():\n    return 42\n", "make", "it returned an int; accepted: (model, dataset, loss_fn)"),
    "returns-pair": ("def make():\n    return nn.Linear(4, 3), TensorDataset(X, Y)\n", "make", "it returned a tuple of 2"),
    "not-a-module": ("def make():\n    return 'net', TensorDataset(X, Y), nn.functional.cross_entropy\n", "make",
                     "the model is a str, not a torch.nn.Module"),
    "no-parameters": ("def make():\n    return nn.ReLU(), TensorDataset(X, Y), nn.functional.cross_entropy\n", "make",
                      "the model has no trainable parameters"),
    "loss-not-scalar": ("def make():\n    return nn.Linear(4, 3), TensorDataset(X, Y), nn.CrossEntropyLoss(reduction='none')\n",
                        "make", "loss_fn returned a tensor of shape (2,), not a scalar"),
    "loss-a-float": ("def make():\n    return nn.Linear(4, 3), TensorDataset(X, Y), lambda o, t: 1.0\n", "make",
                     "loss_fn returned a float; accepted: a scalar tensor"),
    "loss-nan": ("def make():\n    return nn.Linear(4, 3), TensorDataset(X, Y), lambda o, t: o.sum() * float('nan')\n",
                 "make", "accepted: a finite float"),
    "not-a-dataset": ("def make():\n    return nn.Linear(4, 3), 64, nn.functional.cross_entropy\n", "make",
                      "its dataset is an int, not a Dataset"),
    "items-not-pairs": ("def make():\n    return nn.Linear(4, 3), list(X), nn.functional.cross_entropy\n", "make",
                        "item 0 of its dataset is a Tensor, not an (input, target) pair"),
    "shapes-differ": ("def make():\n    d = [(X[i, : 4 - i % 2], Y[i]) for i in range(64)]\n"
                      "    return nn.Linear(4, 3), d, nn.functional.cross_entropy\n", "make",
                      "the inputs of its dataset differ in shape: item 0 (4,), item 1 (3,)"),
    "strings": ("def make():\n    return nn.Linear(4, 3), [('a', 1)] * 20, nn.functional.cross_entropy\n", "make",
                "an input of its dataset is a str"),
    "forward-fails": ("def make():\n    return nn.Linear(5, 3), TensorDataset(X, Y), nn.functional.cross_entropy\n", "make",
                      "the model's forward on 2 dataset inputs of shape (4,) raised RuntimeError"),
    "too-few": ("def make():\n    return nn.Linear(4, 3), TensorDataset(X[:5], Y[:5]), nn.functional.cross_entropy\n",
                "make", "its dataset holds 5 samples; without an eval set"),
    "dict-unknown-key": ("def make():\n    return {'model': nn.Linear(4, 3), 'train': TensorDataset(X, Y), "
                         "'loss': nn.functional.cross_entropy, 'optimizer': 1}\n", "make",
                         "it returned a dict with unknown keys optimizer"),
}


def bad_file(tmp_path: Path, key: str) -> str:
    body, func, _ = BAD[key]
    path = tmp_path / f"bad_{key.replace('-', '_')}.py"
    path.write_text(PREAMBLE + body)
    return f"{path}:{func}"


def one_line_exit_2(args: list[str], capsys, message: str, out: Path) -> None:
    code, stdout, err = run_cli(args + ["--out", str(out)], capsys)
    assert code == 2, (stdout, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert message in err, err
    assert not out.exists()


@pytest.mark.parametrize("key", list(BAD))
def test_a_bad_plugin_is_one_line_exit_2_and_nothing_written(key, tmp_path, capsys):
    spec = bad_file(tmp_path, key)
    one_line_exit_2(["bench", "-w", spec, *SMALL], capsys, BAD[key][2], tmp_path / "out")


@pytest.mark.parametrize("spec, message", [
    ("/no/such/dir/model.py:make", "no file /no/such/dir/model.py"),
    ("model.py:", "accepted: FILE.py:FUNC or package.module:FUNC"),
    ("no_such_module_xyz.sub:make", "no module 'no_such_module_xyz'"),
    ("no-such-workload", "unknown workload 'no-such-workload'; choose from: gpt, mlp, vit"),
])
def test_bad_specs(spec, message, tmp_path, capsys):
    one_line_exit_2(["bench", "-w", spec, *SMALL], capsys, message, tmp_path / "out")
    one_line_exit_2(["sweep", "-w", spec, "--workers", "2", "--steps", "2"], capsys, message, tmp_path / "sweep")


@pytest.mark.parametrize("extra, message", [
    (["--data-split", "dirichlet:0.5"], "needs class labels"),
    (["--data", "x.txt"], "bad --data x.txt: the workload "),
    (["--eval-samples", "5000"], "bad --eval-samples 5000"),
])
def test_options_a_plugin_cannot_take(extra, message, tmp_path, capsys):
    path = tmp_path / "regression.py"
    path.write_text(PREAMBLE + "def make():\n    return nn.Linear(4, 1), TensorDataset(X, X[:, :1]), "
                               "nn.functional.mse_loss\n")
    one_line_exit_2(["bench", "-w", f"{path}:make", *SMALL, *extra], capsys, message, tmp_path / "out")


def test_a_regression_plugin_has_no_accuracy_but_trains(tmp_path, capsys):
    path = tmp_path / "regression.py"
    path.write_text(PREAMBLE + "def make(seed):\n    return nn.Linear(4, 1), TensorDataset(X, X[:, :1]), "
                               "nn.functional.mse_loss\n")
    code, _, err = run_cli(["bench", "-w", f"{path}:make", *SMALL, "--out", str(tmp_path / "o")], capsys)
    assert code == 0, err
    steps = pd.read_csv(tmp_path / "o" / "steps.csv")
    assert steps["eval_loss"].notna().any() and steps["eval_acc"].isna().all()


def test_canonical_name_is_the_absolute_path(monkeypatch):
    monkeypatch.chdir(REPO / "examples")
    assert canonical_workload("plugins/cnn_workload.py:make") == MAKE
    with pytest.raises(LionsimError, match="no function 'nope'"):
        canonical_workload("plugins/cnn_workload.py:nope")


@pytest.mark.slow
def test_gloo_two_ranks_train_the_example_as_the_simulator_does(tmp_path, capsys):
    args = ["bench", "-w", MAKE, "-n", "2", "-b", "8", "--steps", "3", "--eval-every", "3", "-s", "dlion-mavo"]
    assert run_cli(args + ["--out", str(tmp_path / "sim")], capsys)[0] == 0
    code, _, err = run_cli(args + ["--backend", "gloo", "--ranks", "2", "--out", str(tmp_path / "gloo")], capsys)
    assert code == 0, err
    sim, gloo = (pd.read_csv(tmp_path / d / "steps.csv") for d in ("sim", "gloo"))
    assert gloo["loss"].tolist() == pytest.approx(sim["loss"].tolist(), rel=1e-5)


def test_a_regress_case_can_name_a_file_workload():
    from lionsim.regress.cases import Case
    from lionsim.regress.runner import run_case

    case = Case(name="cnn-n2", workload=MAKE, workers=2, steps=4, batch_size=8, strategies=("adamw", "dlion-mavo"),
                hyper=None)
    done = run_case(case, seed=0)
    assert not done.errors and set(done.metrics) == {"adamw@fp32-allreduce", "dlion-mavo@int8-allreduce"}
    assert math.isfinite(done.untrained_eval_loss)


def test_given_labels_split_a_regression_by_class_and_bring_no_accuracy(tmp_path):
    path = tmp_path / "labelled.py"
    path.write_text(PREAMBLE + "from lionsim.workloads import WorkloadParts\n"
                    "def make():\n    return WorkloadParts(model=nn.Linear(4, 1), train=TensorDataset(X, X[:, :1]), "
                    "loss=nn.functional.mse_loss, labels=(X[:, 0] > 0).long())\n")
    wl = build_workload(WorkloadConfig(name=f"{path}:make", workers=2, batch_size=4, data_split="dirichlet:0.5"))
    assert torch.equal(wl.train.labels, (wl.train.inputs[:, 0] > 0).long())  # each sample keeps its own label
    assert sorted(torch.cat(wl.shards).tolist()) == list(range(len(wl.train)))
    got = wl.evaluate(wl.model)
    assert got["eval_acc"] != got["eval_acc"] and got["eval_loss"] > 0  # NaN: no metric for real-valued targets


def test_two_workload_files_of_one_stem_are_refused_by_a_sweep(tmp_path, capsys):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "cnn.py").write_text(EXAMPLE.read_text())
    one_line_exit_2(["sweep", "-w", f"{tmp_path}/a/cnn.py:make,{tmp_path}/b/cnn.py:make", "--workers", "2",
                     "--steps", "2"], capsys, "give the same cell id cnn.make-w2-", tmp_path / "sweep")


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
    code, _, err = run_cli(["bench", "--workload", f"{plugin}:make", "-n", "2", "-b", "4", "--steps", "2",
                       "--eval-every", "2", "-s", "adamw", "--out", "o"], capsys)
    assert code == 0, err
    steps = pd.read_csv(tmp_path / "o" / "steps.csv")
    assert len(steps) == 2 and steps["loss"].notna().all() and steps["eval_acc"].notna().any()
