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
from lionsim.transports import AFTER_BACKWARD, SCHEDULES, TRANSPORTS, PayloadSpec

DOCS = Path(__file__).resolve().parents[2] / "docs" / "time-model.md"
BOTH, AFTER = frozenset(SCHEDULES), frozenset({AFTER_BACKWARD})


class Strategy:
    """A stand-in strategy class: only what the schedule reads."""

    def __init__(self, schedule: str, after_step: bool = False, step_in_backward: bool = False) -> None:
        self.schedule, self.after_step, self.step_in_backward = schedule, after_step, step_in_backward


class Transport:
    def __init__(self, overlap: frozenset) -> None:
        self.overlap = overlap


# (mode, strategy's reference schedule, its payload only after its step, that step elementwise per bucket,
# what the transport can) -> what runs
BY_HAND = [
    ("auto", "buckets", False, False, BOTH, "buckets"),  # DDP: its buckets
    ("auto", "after", False, False, BOTH, "after"),  # D-Lion's code: in the optimizer step, though a2a-1bit could bucket
    ("auto", "buckets", False, False, AFTER, "after"),  # a hook schedule the transport cannot run (1-bit Adam's)
    ("auto", "after", True, True, BOTH, "after"),  # DiLoCo's pseudo-gradient, as its code runs it
    ("buckets", "after", False, False, BOTH, "buckets"),  # per bucket wherever the transport can
    ("buckets", "buckets", False, False, AFTER, "after"),  # ... and only there
    ("buckets", "after", True, False, BOTH, "after"),  # no bucket of a payload that does not exist yet
    ("buckets", "after", True, True, BOTH, "buckets"),  # DiLoCo's inner step run in backward, bucket by bucket
    ("buckets", "after", True, True, AFTER, "after"),  # ... where the transport can bucket
    ("none", "buckets", False, False, BOTH, "after"),  # a framework without overlap
    ("none", "after", True, True, BOTH, "after"),
    ("none", "after", False, False, AFTER, "after"),
]


@pytest.mark.parametrize("mode,reference,after_step,in_backward,can,runs", BY_HAND)
def test_the_schedule_follows_the_table_written_by_hand(mode, reference, after_step, in_backward, can, runs):
    assert OverlapConfig(mode=mode).schedule(Transport(can), Strategy(reference, after_step, in_backward)) == runs


@pytest.mark.parametrize("run,mode,runs", [
    ("adamw@fp32-allreduce", "auto", "buckets"), ("dlion-mavo@int8-allreduce", "auto", "after"),
    ("dlion-mavo@int8-allreduce", "buckets", "buckets"), ("onebit-adam@compressed-allreduce", "buckets", "after"),
    ("powersgd@lowrank-allreduce", "auto", "buckets"), ("diloco@fp32-allreduce", "auto", "after"),
    ("diloco@fp32-allreduce", "buckets", "buckets"), ("streaming-diloco@fp4-allreduce", "buckets", "after"),
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
    """Fragments of one part each, starting at `shares` (a run's end does not move its window)."""
    pieces = tuple(((s, 1.0),) for s in shares)
    return PricedStep(comm=Priced(comm_s), extra=Priced(), buckets=None, count=1, hidden_steps=tau, hidden_pieces=pieces)


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
    spec = PayloadSpec(kind="dense", numel=10**6, hidden_steps=1, hidden_pieces=(((0.5, 1.0),),))
    transport, strategy = TRANSPORTS.get("fp32-allreduce")(), STRATEGIES.get("streaming-diloco")
    work = StepWork(forward_s=F, backward_s=B, encode_s=E)
    kw = dict(transport=transport, spec=spec, network=network, overlap=OverlapConfig(), strategy=strategy)
    priced = price_step(workers=2, **kw)
    lanes = modelled_lanes(work=work, factors=[1.0, 1.0], **kw)[0]
    assert step_end(lanes) == pytest.approx(priced.times(work).step_s)
    assert max(s.end_s for s in lanes) > step_end(lanes)  # the all-reduce runs on into the next steps


def _equal(tensors: int) -> ParamLayout:
    """estimate's stand-in layout: one parameter a tensor."""
    return ParamLayout(names=[f"t{i}" for i in range(tensors)], numels=[1] * tensors,
                       segment_ids=torch.arange(tensors))


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
    pieces = [spec.hidden_pieces for spec in sent if spec is not None]
    assert pieces == [(((a / layout.numel, b / layout.numel),),) for ((a, b),) in strategy.fragments] * 2
    stand_in = STRATEGIES.get("streaming-diloco")(StrategyConfig(options=options), _equal(100), comm)
    assert stand_in.spec_scaled(10**9, 100).hidden_pieces == (((0.0, 0.5),), ((0.5, 1.0),))  # estimate: P fragments


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
    for mode, bucket in (("auto", ["--bucket-mb", "0.01"]), ("none", [])):  # none forms no bucket to size
        out = tmp_path / mode
        assert run_cli(["bench", "-w", "mlp", "-n", "4", "--steps", "2", "-b", "8", "--eval-every", "2", "-s", "adamw",
                        *bucket, "--overlap", mode, "--out", str(out)]) == 0
        booked[mode] = pd.read_csv(out / "steps.csv")
        assert json.loads((out / "run.json").read_text())["config"]["overlap"] == mode
    auto, none = booked["auto"], booked["none"]
    assert (auto.comm_exposed_s < auto.comm_s).all()
    assert (none.comm_exposed_s == none.comm_s).all()
    assert auto.loss.tolist() == none.loss.tolist()  # the schedule moves time, never training


@pytest.mark.parametrize("argv,message", [
    (["--overlap", "sometimes"], "bad --overlap sometimes; accepted: auto, buckets, tensors, none"),
    (["--overlap", "buckets", "--backend", "gloo"], "--overlap buckets needs --backend sim"),
])
def test_a_bad_overlap_is_one_line(argv, message, tmp_path, capsys):
    assert run_cli(["bench", "-w", "mlp", "--steps", "1", *argv, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert not (tmp_path / "out").exists()


def test_a_sweep_cell_runs_under_the_sweeps_overlap(tmp_path, monkeypatch):
    import json

    monkeypatch.setattr("lionsim.cli.sweep_cmd.draw_plots", lambda out, summary, rounds: [])
    monkeypatch.setattr("lionsim.reports.writing.plot_run", lambda *args, **kwargs: [])
    out = tmp_path / "sweep"
    assert run_cli(["sweep", "-w", "mlp", "-n", "2", "--steps", "2", "-b", "8", "-s", "adamw", "--overlap", "none",
                    "--out", str(out)]) == 0
    assert json.loads((out / "sweep.json").read_text())["bench"]["overlap"] == "none"
    cells = list((out / "cells").iterdir())
    assert [json.loads((c / "run.json").read_text())["config"]["overlap"] for c in cells] == ["none"]


def stepped_wait(comm_s: float, tau: int, parts: tuple[tuple[float, float], ...], dt: float = 1e-4) -> float:
    """A fragment of several parts laid out tick by tick: the link sends the parts in the order
    backward makes them ready, at the fragment's rate; the next steps' compute runs until the
    forward of step t + tau + 1 reaches a part still in flight, and waits for it."""
    size = sum(b - a for a, b in parts)
    rate = size / comm_s  # model share a second
    left = {a: b - a for a, b in parts}
    ready = {a: F + (B + E) * (1 - a) for a, _ in parts}
    done: dict[float, float] = {}
    t = 0.0
    while left:
        queue = sorted((a for a in left if ready[a] <= t), reverse=True)  # FIFO: the later parts first
        if queue:
            a = queue[0]
            left[a] -= rate * dt
            if left[a] <= 1e-12:
                del left[a]
                done[a] = t + dt
        t += dt
    start = F + B + E + tau * (F + B)  # step t + tau + 1's forward begins
    wait = 0.0
    for a, _ in sorted(parts):  # its forward reaches each part in turn, later by what it waited
        wait = max(wait, done[a] - (start + a * F))
    return wait


@pytest.mark.parametrize("tau", [0, 1])
@pytest.mark.parametrize("comm_s", [0.5, 3.0, 6.0])
def test_a_strided_fragment_waits_as_its_parts_laid_out_tick_by_tick(tau, comm_s):
    # fragment 0 of 4 over 12 equal tensors, dealt strided: tensors 0, 4 and 8
    parts = ((0.0, 1 / 12), (4 / 12, 5 / 12), (8 / 12, 9 / 12))
    priced = PricedStep(comm=Priced(comm_s), extra=Priced(), buckets=None, count=1, hidden_steps=tau,
                        hidden_pieces=(parts,))
    exposed = priced.times(StepWork(forward_s=F, backward_s=B, encode_s=E)).comm_exposed_s
    assert exposed == pytest.approx(stepped_wait(comm_s, tau, parts), abs=2e-3)


def test_strided_parts_hide_more_than_one_run_of_the_same_size_at_the_model_s_start():
    # the same 1/4 of the model as one run [0, 1/4) (sequential fragment 0) or as three parts spread
    # over it: the spread one starts sending two thirds of the way through backward
    run = PricedStep(comm=Priced(4.0), extra=Priced(), buckets=None, count=1, hidden_steps=0,
                     hidden_pieces=(((0.0, 0.25),),))
    spread = PricedStep(comm=Priced(4.0), extra=Priced(), buckets=None, count=1, hidden_steps=0,
                        hidden_pieces=(((0.0, 1 / 12), (4 / 12, 5 / 12), (8 / 12, 9 / 12)),))
    work = StepWork(forward_s=F, backward_s=B, encode_s=E)
    assert spread.times(work).comm_exposed_s < run.times(work).comm_exposed_s == pytest.approx(4.0)


def test_after_is_none_under_the_name_the_footers_give_it():
    """The footers and estimate's `overlap` column call the unoverlapped schedule "after": --overlap
    accepts that word for `none`, and a near miss is pointed at it."""
    from lionsim.errors import LionsimError
    from lionsim.steptime.overlap import OverlapConfig
    from lionsim.transports import TRANSPORTS

    after, none = OverlapConfig(mode="after"), OverlapConfig(mode="none")
    assert after == none and after.mode == "none"
    assert after.label(TRANSPORTS.get("fp32-allreduce")) == "after"
    with pytest.raises(LionsimError, match="did you mean 'after'"):
        OverlapConfig(mode="aftr")
