"""An estimate asks a transport each question once a command (lionsim.steptime.asked): a sweep's
points re-probe every run, and asking at each priced point made a 1,000-point sweep of 4 runs
ask about 4,000 times for 4 distinct answers. The key is the question's value, so an equally
built probe hits, and a transport holding configuration (a plug-in's instance state) is asked each time."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

from lionsim.errors import LionsimError
from lionsim.steptime import answers
from lionsim.steptime.asked import check_once
from lionsim.transports import PayloadSpec
from lionsim.transports.allreduce_float import Fp32AllReduce
from tests.helpers.cli import run_cli

RUNS = ["-s", "adamw@bf16-allreduce", "-s", "lion", "-s", "dlion-mavo@int8-allreduce", "-s", "dlion-mavo@a2a-1bit"]


@pytest.fixture
def asks(monkeypatch) -> Counter:
    """Each question check_answers asks, counted (bits_on: it asks it of every question, and only
    the check calls it through answers' own name; pricing reads the bits through base's)."""
    counted: Counter = Counter()
    real = answers.bits_on

    def bits_on(transport, spec, workers, workers_per_node=1):
        counted[(transport.name, spec, workers, workers_per_node)] += 1
        return real(transport, spec, workers, workers_per_node)

    monkeypatch.setattr(answers, "bits_on", bits_on)
    return counted


def swept(points: int, asks: Counter, capsys) -> Counter:
    asks.clear()
    code, _, err = run_cli(["estimate", "--model", "gpt2-124m", *RUNS, "--format", "csv",
                            "--sweep", f"bandwidth=0.1:100:{points}"], capsys)
    assert code == 0, err
    return Counter(asks)


def test_a_sweep_asks_each_question_as_often_as_two_points_do(asks, capsys):
    two, many = swept(2, asks, capsys), swept(200, asks, capsys)
    assert many == two  # it was about 200 x 4 asks, one per run and point
    assert sorted((name, spec.kind) for name, spec, _, _ in many) == [  # the four runs' questions
        ("a2a-1bit", "votes"), ("bf16-allreduce", "dense"), ("fp32-allreduce", "dense"), ("int8-allreduce", "votes")]
    assert max(many.values()) <= 2  # once when the command is planned (issued_by_run), once when priced


class Configured(Fp32AllReduce):
    """fp32-allreduce as a plug-in might configure an instance: its plan wrong where `broken`."""

    def __init__(self, broken: bool = False, weights: torch.Tensor | None = None):
        self.broken, self.weights = broken, weights

    def plan(self, spec, workers):
        return None if self.broken else super().plan(spec, workers)


SPEC = PayloadSpec(kind="dense", numel=1000)


def test_an_equal_question_is_asked_once_another_again(asks):
    asked: set = set()
    check_once(asked, Fp32AllReduce(), SPEC, 4)
    check_once(asked, Fp32AllReduce(), PayloadSpec(kind="dense", numel=1000), 4)  # new objects, equal: not asked
    assert sum(asks.values()) == 1
    check_once(asked, Fp32AllReduce(), SPEC, 8)  # another worker count: asked
    check_once(asked, Fp32AllReduce(), SPEC, 8, workers_per_node=4)  # another node size: asked
    check_once(asked, Fp32AllReduce(), PayloadSpec(kind="dense", numel=1001), 4)  # another payload: asked
    assert sum(asks.values()) == 4
    check_once(None, Fp32AllReduce(), SPEC, 4)  # no set: asked every time
    check_once(None, Fp32AllReduce(), SPEC, 4)
    assert sum(asks.values()) == 6


def test_an_instance_holding_configuration_is_asked_every_time(asks):
    """A plug-in's instance state (a flag, a tensor) is not keyed: each ask is made, so a wrongly
    configured instance is refused even after an equal class answered well."""
    asked: set = set()
    for _ in range(3):
        check_once(asked, Configured(), SPEC, 4)
        check_once(asked, Configured(weights=torch.ones(3)), SPEC, 4)
    assert sum(asks.values()) == 6 and not asked
    check_once(asked, Fp32AllReduce(), SPEC, 4)  # its class, stateless, answered well and keyed
    with pytest.raises(LionsimError, match="its plan returned None"):  # the class alone would have skipped it
        check_once(asked, Configured(broken=True), SPEC, 4)
