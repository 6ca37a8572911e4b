"""Tests of the plug-in randomk_ef.py beside this file, as a plug-in's own project would hold them:
they need lionsim installed and nothing else (no lionsim checkout), and run from any directory
(`python -m pytest test_randomk_ef.py`). Copy this file next to your plug-in and change the parts
that are random-k's own:

1. its rule against a plain reference written here from the paper's equations (Python floats,
   loops), through lionsim.engine.train_step on SimComm(N), for N = 1 and N > 1;
2. its bytes against their closed form (steps.csv's wire_bytes);
3. end to end through the command line, as a shell runs it: bench, report, estimate, strategies.
"""

from __future__ import annotations

import io
import json
import math
import sys
from pathlib import Path

import pandas as pd
import pytest
import torch

from lionsim.backends import SimComm
from lionsim.cli import main
from lionsim.engine import train_step
from lionsim.plugins import load_plugin
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig
from lionsim.timing import Clock
from lionsim.transports import TRANSPORTS

PLUGIN = Path(__file__).resolve().with_name("randomk_ef.py")
SHAPES = [(4, 5), (7,), (2, 3)]  # P = 33, in 3 tensors


def lionsim(*argv) -> int:
    """`lionsim ARGV` in this process, its output left to pytest (capsys reads it): the exit code
    (the command ends with SystemExit, as it does in a shell)."""
    with pytest.raises(SystemExit) as done:
        main([str(a) for a in argv])
    return done.value.code


@pytest.fixture(scope="module")
def plugin():
    """The plug-in's module, loaded as --plugin loads it (the commands below name it again)."""
    load_plugin(PLUGIN)
    return sys.modules[STRATEGIES.get("randomk-ef").__module__]


def reference(x, grads, lr, wd, ratio, seed, positions):
    """Memory-SGD with rand-k (Stich et al., Algorithm 1, one memory per worker), plain floats:
    v = m + lr g; s = v on the k drawn positions; m = v - s; x = x (1 - lr wd) - mean s."""
    workers, numel = len(grads[0]), len(x)
    k = max(1, math.ceil(ratio * numel))
    memory = [[0.0] * numel for _ in range(workers)]
    for t, g in enumerate(grads, 1):
        sent = []
        for i in range(workers):
            v = [memory[i][j] + lr * g[i][j] for j in range(numel)]
            picked = set(positions(numel, k, seed, t, i).tolist())
            s = [v[j] if j in picked else 0.0 for j in range(numel)]
            memory[i] = [v[j] - s[j] for j in range(numel)]
            sent.append(s)
        x = [x[j] * (1 - lr * wd) - sum(s[j] for s in sent) / workers for j in range(numel)]
    return x


@pytest.mark.parametrize("workers", [1, 3])
def test_randomk_ef_equals_the_papers_rule(plugin, workers):
    layout = ParamLayout.of([(f"t{i}", torch.zeros(s)) for i, s in enumerate(SHAPES)])
    gen = torch.Generator().manual_seed(workers)
    grads = [torch.randn(workers, layout.numel, generator=gen) for _ in range(5)]
    x0 = torch.randn(layout.numel, generator=gen)
    expected = reference(x0.double().tolist(), [g.double().tolist() for g in grads], 0.05, 0.1, 0.2, 7,
                         plugin.random_positions)
    comm = SimComm(workers)
    cfg = StrategyConfig(lr=0.05, weight_decay=0.1, seed=7, options={"randomk-ef.ratio": 0.2})
    strategy = STRATEGIES.get("randomk-ef")(cfg, layout, comm)
    x = x0.clone()
    for step, g in enumerate(grads, 1):
        train_step(strategy, TRANSPORTS.get("sparse-allgather")(), comm, g.clone(), x, step, Clock())
    assert x.tolist() == pytest.approx(expected, abs=1e-6)


def test_each_worker_draws_its_own_positions_without_repeats(plugin):
    drawn = [set(plugin.random_positions(1000, 50, 0, 3, w).tolist()) for w in range(4)]
    assert all(len(d) == 50 and max(d) < 1000 for d in drawn) and len(set.union(*drawn)) > 150


def test_bench_books_k_pairs_all_gathered_every_step(plugin, tmp_path):
    """Two all-gathers (int32 indices, fp32 values) of N x k x 4 bytes: each worker sends (N-1)/N of
    each; then `lionsim report` reads the run."""
    out, workers = tmp_path / "rk", 3
    assert lionsim("bench", "--plugin", PLUGIN, "-w", "mlp", "-n", workers, "--steps", 3, "-b", 8, "--eval-every", 3,
                   "-s", "randomk-ef", "--randomk-ef-ratio", 0.01, "--out", out) == 0
    steps = pd.read_csv(out / "steps.csv")
    k = max(1, math.ceil(0.01 * int(steps["params"].iloc[0])))
    assert steps.wire_bytes.tolist() == [2 * (workers - 1) * k * 4] * 3
    record = json.loads((out / "run.json").read_text())
    assert record["config"]["plugin"] == [str(PLUGIN)] and record["runs"][0]["options"] == {"ratio": 0.01}
    assert lionsim("report", out) == 0
    assert "randomk-ef" in (out / "report.md").read_text()


def test_estimate_prices_it_from_its_ratio(plugin, capsys):
    capsys.readouterr()
    assert lionsim("estimate", "--plugin", PLUGIN, "-s", "randomk-ef", "--params", "1e8", "--tokens-per-worker", 1000,
                   "--workers", 4, "--randomk-ef-ratio", 0.01, "--format", "csv") == 0
    row = pd.read_csv(io.StringIO(capsys.readouterr().out)).iloc[0]
    assert row.strategy == "randomk-ef" and row.transport == "sparse-allgather"
    assert row.wire_bytes == 2 * 3 * math.ceil(0.01 * 1e8) * 4  # (N-1) x k x 4 bytes, twice


def test_listed_and_in_the_matrix(plugin, capsys):
    capsys.readouterr()
    assert lionsim("strategies", "--plugin", PLUGIN, "-w", "mlp", "-n", 4, "--format", "csv") == 0
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out))
    # its own k of mlp's 11,018 parameters (ratio 0.05), as bench books it: k (int32, fp32) pairs up, 3 k down
    k = math.ceil(0.05 * 11_018)
    row = frame.set_index(["strategy", "transport"]).loc[("randomk-ef", "sparse-allgather")]
    assert (row.bits_per_param_up, row.bits_per_param_down) == pytest.approx((64 * k / 11_018, 3 * 64 * k / 11_018))
    assert lionsim("strategies", "--plugin", PLUGIN, "--matrix", "--format", "csv") == 0
    matrix = pd.read_csv(io.StringIO(capsys.readouterr().out)).set_index("strategy")
    assert matrix.loc["randomk-ef", "options"] == "--randomk-ef-ratio (0.05)"
    assert matrix.loc["randomk-ef", "estimate"] == "yes"
