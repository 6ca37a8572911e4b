"""--hyper is shown in `bench --help` and `sweep --help` with its JSON shape (docs/commands.md lists
it among the common options; it was hidden, its shape said nowhere), and the example the help
gives resolves as the help says: a run's own values win over --lr and the other flags, a key
naming the run over one naming its strategy."""

from __future__ import annotations

import json
import re

import pytest

from lionsim.cli.bench_cmd import parse_hyper
from lionsim.config.bench import BenchConfig
from tests.helpers.cli import run_cli


def _help(command: str, capsys) -> str:
    code, out, _ = run_cli([command, "--help"], capsys)
    assert code == 0
    return " ".join(out.split())


@pytest.mark.parametrize("command", ["bench", "sweep"])
def test_the_help_shows_hyper_and_its_shape(command, capsys):
    text = _help(command, capsys)
    assert "--hyper JSON Per-run hyperparameters, a JSON object" in text
    for words in ("a run (NAME@TRANSPORT) or a strategy's name", "lr, weight_decay and betas ([b1, b2])",
                  "win over --lr, --weight-decay and --betas", '[hyper."lion@fp32-allreduce"]'):
        assert words in text, words


def test_the_helps_example_trains_as_the_help_says(capsys):
    example = re.search(r"e\.g\. '(\{.*?\}\})'", _help("bench", capsys)).group(1)
    given = json.loads(example)  # the reference: the example's own values
    runs = ["lion", "adamw@bf16-allreduce", "adamw"]
    cfg = BenchConfig(workload="mlp", model_size="tiny", workers=2, strategies=runs, lr=0.5, weight_decay=0.3,
                      hyper=parse_hyper(example, runs))
    resolved = {run.label: cfg.strategy_config(run) for run in cfg.validate()}
    lion, bf16, fp32 = resolved["lion@fp32-allreduce"], resolved["adamw@bf16-allreduce"], resolved["adamw@fp32-allreduce"]
    assert lion.lr == given["lion"]["lr"] and lion.weight_decay == 0.3  # its own lr; the flag's weight decay
    assert bf16.weight_decay == given["adamw@bf16-allreduce"]["weight_decay"] and bf16.lr == 0.5
    assert (fp32.lr, fp32.weight_decay) == (0.5, 0.3)  # a table under another run's label is not its
    both = BenchConfig(workload="mlp", model_size="tiny", workers=2, strategies=["adamw"],
                       hyper={"adamw": {"lr": 0.1}, "adamw@fp32-allreduce": {"lr": 0.2}})
    assert both.strategy_config(both.validate()[0]).lr == 0.2  # the run's label over its strategy's name
