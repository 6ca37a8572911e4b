"""How a real collective is timed and billed (lionsim.backends.timed, lionsim.training.booking):
barrier, timed call, untimed barrier; each call billed as its slowest rank's time of that call
(not the slowest rank's sum), the spread of the ranks' arrivals as the wait; against a plain
per-call maximum written out here. No timing is asserted: the clock is replaced."""

from __future__ import annotations

import datetime

import pytest
import torch
import torch.distributed as dist

import lionsim.backends.timed as timed
from lionsim.backends.dist import ProcessGroupComm
from lionsim.backends.timed import MeasuredCall
from lionsim.launch import free_port
from lionsim.training.booking import slowest_process
from lionsim.training.loop import RunRecord, StepRecord


class TwoRanks:
    """A Comm whose max_over_ranks combines this rank's table with a peer's (its tables given up front)."""

    ranks, local_workers = 2, 1

    def __init__(self, peer: RunRecord) -> None:
        self.peer_tables = peer_tables(peer)

    def exchange_control(self, x: torch.Tensor) -> torch.Tensor:  # each worker's compute: the peer's as ours
        return torch.cat([x, x])

    def max_over_ranks(self, x: torch.Tensor) -> torch.Tensor:
        return torch.maximum(x, self.peer_tables.pop(0))


def record(calls_per_step: list[list[tuple[float, float]]]) -> RunRecord:
    rec = RunRecord(run=None, hyper=None, transport=None, spec=None, params=0)
    for step, calls in enumerate(calls_per_step, 1):
        logged = [MeasuredCall("all_reduce", 8 * (i + 1), t, "float32", wait) for i, (t, wait) in enumerate(calls)]
        rec.steps.append(StepRecord(step, 0.0, None, {"encode": 0.001 * step, "decode": 0.0, "update": 0.0}, logged))
    return rec


def peer_tables(rec: RunRecord) -> list[torch.Tensor]:
    """What the peer would hand max_over_ranks, in the order booking asks (sections, counts, calls)."""
    calls = [c for s in rec.steps for c in s.collectives]
    return [torch.tensor([[s.seconds.get(p, 0.0) for p in ("encode", "decode", "update")] for s in rec.steps],
                         dtype=torch.float64),
            torch.tensor([len(calls), -len(calls)], dtype=torch.float64),
            torch.tensor([[c.seconds, c.wait_s, -c.wait_s] for c in calls], dtype=torch.float64)]


def test_each_call_is_billed_as_its_slowest_rank_and_summed():
    # rank 0 is slow in the first call, rank 1 in the second: the max of the sums would hide one of them
    mine = record([[(0.010, 0.000), (0.001, 0.003)], [(0.004, 0.001), (0.002, 0.000)]])
    peer = record([[(0.002, 0.004), (0.007, 0.000)], [(0.003, 0.000), (0.006, 0.002)]])
    comm = TwoRanks(peer)
    originals = [[(c.seconds, c.wait_s) for c in s.collectives] for s in mine.steps]
    theirs = [[(c.seconds, c.wait_s) for c in s.collectives] for s in peer.steps]
    slowest_process(mine, comm)
    for s, a, b in zip(mine.steps, originals, theirs):
        expected = [max(x[0], y[0]) for x, y in zip(a, b)]
        assert [c.seconds for c in s.collectives] == expected
        assert s.seconds["collectives"] == pytest.approx(sum(expected))
        assert [c.wait_s for c in s.collectives] == pytest.approx([abs(x[1] - y[1]) for x, y in zip(a, b)])
    assert mine.steps[0].seconds["collectives"] > max(sum(t for t, _ in a) for a in (originals[0], theirs[0]))


def test_ranks_that_logged_different_calls_are_a_bug_not_a_bill():
    mine, peer = record([[(0.001, 0.0)]]), record([[(0.001, 0.0), (0.001, 0.0)]])
    comm = TwoRanks(peer)
    with pytest.raises(RuntimeError, match="different numbers of collectives"):
        slowest_process(mine, comm)


@pytest.fixture
def group():
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=1,
                            timeout=datetime.timedelta(seconds=30))
    try:
        yield
    finally:
        dist.destroy_process_group()


def test_a_call_runs_between_two_barriers_and_only_the_call_is_timed(group, monkeypatch):
    events = []
    barrier = dist.barrier
    monkeypatch.setattr(dist, "barrier", lambda *a, **k: (events.append("barrier"), barrier(*a, **k))[1])
    monkeypatch.setattr(timed, "time_call", lambda run, device: (events.append("timed call"), run(), 0.5)[2])
    comm = ProcessGroupComm()
    out = comm.all_gather(torch.arange(6, dtype=torch.uint8).reshape(1, 6))
    assert events == ["barrier", "timed call", "barrier"]
    assert torch.equal(out[0, 0], torch.arange(6, dtype=torch.uint8))
    [call] = comm.take_log()
    assert (call.op, call.nbytes, call.dtype, call.seconds) == ("all_gather", 6, "uint8", 0.5) and call.wait_s >= 0
    events.clear()
    comm.all_reduce(torch.ones(1, 3, dtype=torch.int8))
    assert events == ["barrier", "timed call", "barrier"] and comm.take_log()[0].dtype == "int8"


@pytest.mark.slow
def test_one_rank_prices_its_comm_and_says_so(tmp_path, capsys):
    """One gloo rank holding every worker crosses no process boundary: comm_s is the model's
    price (as on sim with gloo's traits), run.json says so, and no measured-vs-model table claims a measurement."""
    import json

    import pandas as pd

    from lionsim.cli.app import main
    from lionsim.network import load_network

    out, sim = tmp_path / "one", tmp_path / "sim"
    common = ["bench", "-w", "mlp", "--workers", "2", "--steps", "3", "-s", "adamw", "--compute", "h100"]
    for args in ([*common, "--backend", "gloo", "--ranks", "1", "--out", str(out)], [*common, "--traits", "gloo", "--out", str(sim)]):
        with pytest.raises(SystemExit) as done:
            main(args)
        assert done.value.code == 0
    printed = capsys.readouterr().out
    assert "comm measured on" not in printed
    one, ref = pd.read_csv(out / "summary.csv"), pd.read_csv(sim / "summary.csv")
    assert one.comm_s.iloc[0] == pytest.approx(ref.comm_s.iloc[0]) and one.comm_measured_s.isna().all()
    assert load_network("1gbe").name in json.loads((out / "run.json").read_text())["timing"]["comm_s"]
    assert json.loads((out / "run.json").read_text())["timing"]["comm_s"].startswith("modelled: one rank")
