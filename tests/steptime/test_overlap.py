"""When a step's exchange runs (lionsim.steptime.overlap): the transport's declaration, the
strategy's reference schedule and the run's --overlap, against a table written out by hand; the
docs' table of each strategy's schedule against the code; and Streaming DiLoCo's window (a
fragment's all-reduce hides from its last backward until the forward tau + 1 steps later)
against a hand count."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch

from lionsim.backends import SimComm
from lionsim.engine import train_step
from lionsim.network import Link, Network
from lionsim.steptime.lanes import modelled_lanes, step_end
from lionsim.steptime.overlap import OverlapConfig
from lionsim.steptime.stragglers import step_seconds
from lionsim.steptime.timeline import Priced, PricedStep, StepWork, price_step
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig
from lionsim.timing import Clock
from lionsim.transports import AFTER_BACKWARD, PER_BUCKET, SCHEDULES, TRANSPORTS, PayloadSpec

DOCS = Path(__file__).resolve().parents[2] / "docs" / "time-model.md"
BOTH, AFTER = frozenset(SCHEDULES), frozenset({AFTER_BACKWARD})


class Strategy:
    """A stand-in strategy class: only what the schedule reads."""

    def __init__(self, schedule: str, after_step: bool = False) -> None:
        self.schedule, self.after_step = schedule, after_step


class Transport:
    def __init__(self, overlap: frozenset) -> None:
        self.overlap = overlap


# (mode, strategy's reference schedule, its payload only after its step, what the transport can) -> what runs
BY_HAND = [
    ("auto", "buckets", False, BOTH, "buckets"),  # DDP: its buckets
    ("auto", "after", False, BOTH, "after"),  # D-Lion's code: in the optimizer step, though a2a-1bit could bucket
    ("auto", "buckets", False, AFTER, "after"),  # a hook schedule the transport cannot run (1-bit Adam's all-reduce)
    ("auto", "after", True, BOTH, "after"),  # DiLoCo's pseudo-gradient
    ("buckets", "after", False, BOTH, "buckets"),  # per bucket wherever the transport can
    ("buckets", "buckets", False, AFTER, "after"),  # ... and only there
    ("buckets", "after", True, BOTH, "after"),  # no bucket of a payload that does not exist yet
    ("none", "buckets", False, BOTH, "after"),  # a framework without overlap
    ("none", "after", False, AFTER, "after"),
]


@pytest.mark.parametrize("mode,reference,after_step,can,runs", BY_HAND)
def test_the_schedule_follows_the_table_written_by_hand(mode, reference, after_step, can, runs):
    assert OverlapConfig(mode=mode).schedule(Transport(can), Strategy(reference, after_step)) == runs


@pytest.mark.parametrize("run,mode,runs", [
    ("adamw@fp32-allreduce", "auto", "buckets"), ("dlion-mavo@int8-allreduce", "auto", "after"),
    ("dlion-mavo@int8-allreduce", "buckets", "buckets"), ("onebit-adam@compressed-allreduce", "buckets", "after"),
    ("powersgd@lowrank-allreduce", "auto", "buckets"), ("diloco@fp32-allreduce", "buckets", "after"),
    ("adamw@fp32-allreduce", "none", "after"), ("lioncub-l1@int8-allreduce", "auto", "after"),
])
def test_the_built_ins_run_as_their_reference_implementations(run, mode, runs):
    strategy, transport = run.split("@")
    assert OverlapConfig(mode=mode).schedule(TRANSPORTS.get(transport), STRATEGIES.get(strategy)) == runs


def test_every_built_in_declares_a_schedule_it_can_run():
    for name, t in TRANSPORTS.items():
        assert AFTER_BACKWARD in t.overlap and t.overlap <= set(SCHEDULES), name
    for name, s in STRATEGIES.items():
        assert s.schedule in SCHEDULES and (s.schedule == AFTER_BACKWARD or not s.after_step), name


def docs_table() -> dict[str, str]:
    """docs/time-model.md's table of each strategy's schedule: strategy -> the schedule its row names."""
    section = DOCS.read_text(encoding="utf-8").split("## Overlap with backward", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| ((?:`[a-z0-9-]+`(?:, )?)+) \| (buckets|after) \|", section, re.M)
    table = {}
    for cell, schedule in rows:
        for name in re.findall(r"`([a-z0-9-]+)`", cell):
            assert name not in table, f"{name} has two rows"
            table[name] = schedule
    return table


def test_the_docs_table_says_what_each_strategy_runs():
    table = docs_table()
    assert table == {name: cls.schedule for name, cls in STRATEGIES.items()}


# -- Streaming DiLoCo's window ----------------------------------------------------------------------

F, B, E = 1.0, 2.0, 0.5


def streamed(comm_s: float, tau: int, shares: tuple[float, ...]) -> PricedStep:
    return PricedStep(comm=Priced(comm_s), extra=Priced(), buckets=None, count=1, hidden_steps=tau, hidden_shares=shares)


def test_a_send_waits_for_what_its_window_does_not_hide_counted_by_hand():
    """F = 1, B = 2, E = 0.5 s, tau = 1, two fragments [0, P/2) and [P/2, P), an all-reduce of 5 s:

    [0, P/2): backward reaches its first parameter last, at 1 + 2.5 = 3.5; the all-reduce runs to
    8.5. Step t + 1 (forward + backward: 3) ends at 6.5 and step t + 2's forward reads the fragment
    at once: it waits 2.0.
    [P/2, P): ready half way through backward + encode, at 1 + 1.25 = 2.25, done at 7.25; step t + 2's
    forward reaches it at 6.5 + 0.5 = 7.0: it waits 0.25.

    A send is one fragment or the other: the mean, 1.125 s (tau (F + B) alone hides 3 s: 2.0 each)."""
    work = StepWork(forward_s=F, backward_s=B, encode_s=E)
    times = streamed(5.0, 1, (0.0, 0.5)).times(work)
    assert times.comm_exposed_s == pytest.approx(1.125)
    assert streamed(5.0, 1, (0.0,)).times(work).comm_exposed_s == pytest.approx(2.0)
    assert streamed(5.0, 1, (0.5,)).times(work).comm_exposed_s == pytest.approx(0.25)
    assert streamed(5.0, 1, ()).times(work).comm_exposed_s == pytest.approx(2.0)  # no fragment: tau steps alone
    assert streamed(5.0, 0, (0.5,)).times(work).comm_exposed_s == pytest.approx(5.0 - 0.5 * 3.5)  # tau 0: same step
    assert times.step_s == pytest.approx(F + B + E + 1.125)


def reference_wait(comm_s: float, tau: int, share: float, factor: float = 1.0) -> float:
    """The same schedule laid out step by step: the compute stream's intervals in order."""
    forward, backward = F * factor, B * factor
    ready = forward + (backward + E) * (1 - share)  # backward (and encode) pass the fragment's first parameter
    clock = forward + backward + E  # step t's compute ends
    for _ in range(tau):  # the steps in between: forward, backward
        clock += forward + backward
    needed = clock + forward * share  # the next forward reaches the fragment
    return max(0.0, ready + comm_s - needed)


@pytest.mark.parametrize("tau", [0, 1, 3])
@pytest.mark.parametrize("comm_s", [0.2, 4.0, 15.0])
def test_the_window_equals_the_schedule_laid_out_step_by_step(tau, comm_s):
    shares = (0.0, 0.25, 0.5, 0.75)
    priced = streamed(comm_s, tau, shares)
    work = StepWork(forward_s=F, backward_s=B, encode_s=E)
    expected = np.mean([reference_wait(comm_s, tau, s) for s in shares])
    assert priced.times(work).comm_exposed_s == pytest.approx(expected)
    for factor in (1.0, 1.7):  # uneven workers: the slowest's compute (stragglers.py)
        slow = np.mean([reference_wait(comm_s, tau, s, factor) for s in shares])
        assert float(step_seconds(priced, work, factor)) == pytest.approx((F + B) * factor + E + slow)


def test_the_trace_waits_as_the_step_does_and_the_exchange_runs_on():
    network = Network(name="slow", inter=Link(alpha_s=0.0, bandwidth_Bps=1e6))
    spec = PayloadSpec(kind="dense", numel=10**6, hidden_steps=1, hidden_shares=(0.5,))
    transport, strategy = TRANSPORTS.get("fp32-allreduce")(), STRATEGIES.get("streaming-diloco")
    work = StepWork(forward_s=F, backward_s=B, encode_s=E)
    kw = dict(transport=transport, spec=spec, network=network, overlap=OverlapConfig(), strategy=strategy)
    priced = price_step(workers=2, **kw)
    lanes = modelled_lanes(work=work, factors=[1.0, 1.0], **kw)[0]
    assert step_end(lanes) == pytest.approx(priced.times(work).step_s)
    assert max(s.end_s for s in lanes) > step_end(lanes)  # the all-reduce runs on into the next steps


def test_each_send_carries_its_fragments_place():
    shapes = [(4, 5), (6,), (3, 3), (8,)]
    layout = ParamLayout.of([(f"t{i}", torch.zeros(s)) for i, s in enumerate(shapes)])
    options = {"streaming-diloco.local_steps": 4, "streaming-diloco.fragments": 2, "streaming-diloco.delay": 1}
    comm = SimComm(2)
    strategy = STRATEGIES.get("streaming-diloco")(StrategyConfig(options=options), layout, comm)
    params = torch.zeros(layout.numel)
    strategy.start(params)
    gen = torch.Generator().manual_seed(0)
    sent = [train_step(strategy, TRANSPORTS.get("fp32-allreduce")(), comm, torch.randn(2, layout.numel, generator=gen),
                       params, step, Clock()).spec for step in range(1, 9)]
    shares = [spec.hidden_shares for spec in sent if spec is not None]
    assert shares == [(a / layout.numel,) for a, _ in strategy.fragments] * 2
    assert strategy.spec_scaled(10**9, 100).hidden_shares == (0.0, 0.5)  # estimate: P equal fragments


# -- --overlap on bench and sweep ---------------------------------------------------------------------

def run_cli(argv: list[str]) -> int:
    from lionsim.cli.app import main

    with pytest.raises(SystemExit) as done:
        main(argv)
    return done.value.code


def test_bench_books_what_overlap_asks(tmp_path, monkeypatch):
    """adamw in buckets of 0.01 MB (several per step): auto hides part of the all-reduce behind
    backward, none hides nothing and costs one exchange's latency instead of one per bucket;
    run.json records the mode."""
    import json

    import pandas as pd

    monkeypatch.setattr("lionsim.reports.writing.plot_run", lambda *args, **kwargs: [])
    booked = {}
    for mode in ("auto", "none"):
        out = tmp_path / mode
        assert run_cli(["bench", "-w", "mlp", "-n", "4", "--steps", "2", "-b", "8", "--eval-every", "2", "-s", "adamw",
                        "--bucket-mb", "0.01", "--overlap", mode, "--out", str(out)]) == 0
        booked[mode] = pd.read_csv(out / "steps.csv")
        assert json.loads((out / "run.json").read_text())["config"]["overlap"] == mode
    auto, none = booked["auto"], booked["none"]
    assert (auto.comm_exposed_s < auto.comm_s).all()
    assert (none.comm_exposed_s == none.comm_s).all()
    assert auto.loss.tolist() == none.loss.tolist()  # the schedule moves time, never training


@pytest.mark.parametrize("argv,message", [
    (["--overlap", "sometimes"], "bad overlap mode 'sometimes'; accepted: auto, buckets, none"),
    (["--overlap", "buckets", "--backend", "gloo"], "--overlap buckets needs --backend sim"),
])
def test_a_bad_overlap_is_one_line(argv, message, tmp_path, capsys):
    assert run_cli(["bench", "-w", "mlp", "--steps", "1", *argv, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert not (tmp_path / "out").exists()


def test_a_sweep_cell_runs_under_the_sweeps_overlap(tmp_path, monkeypatch):
    import json

    monkeypatch.setattr("lionsim.cli.sweep_cmd.draw_plots", lambda out, summary: [])
    monkeypatch.setattr("lionsim.reports.writing.plot_run", lambda *args, **kwargs: [])
    out = tmp_path / "sweep"
    assert run_cli(["sweep", "-w", "mlp", "-n", "2", "--steps", "2", "-b", "8", "-s", "adamw", "--overlap", "none",
                    "--out", str(out)]) == 0
    assert json.loads((out / "sweep.json").read_text())["bench"]["overlap"] == "none"
    cells = list((out / "cells").iterdir())
    assert [json.loads((c / "run.json").read_text())["config"]["overlap"] for c in cells] == ["none"]
