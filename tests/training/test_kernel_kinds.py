"""A step whose vote carried abstentions is its own kind when a device's kernels are counted
(lionsim.training.loop.kernel_kind): its count must not set every step's encode and decode.
The run is forced to abstain on step 1 only (the flag the transport settles is replaced), as a
CPU whose step-1 gradient has an exact zero does."""

from __future__ import annotations

import dataclasses

import lionsim.transports.a2a_1bit as a2a
from lionsim.bench import BenchConfig, plan
from lionsim.training.results import Results
from lionsim.training.runner import Runner
from lionsim.compute import DEVICES
from lionsim.training.booking import book_run


def test_an_abstaining_first_step_does_not_set_every_steps_kernels(monkeypatch):
    real = a2a.settle
    calls = []

    def first_abstains(payload, comm):
        real(payload, comm)
        calls.append(1)
        payload.spec = dataclasses.replace(payload.spec, abstain=len(calls) == 1)
        return payload.spec.abstain

    monkeypatch.setattr(a2a, "settle", first_abstains)
    cfg = BenchConfig(workload="mlp", workers=4, steps=5, strategies=["dlion-mavo@a2a-1bit"], batch_size=8,
                      eval_every=100, compute="h100")
    bench = Runner(plan(cfg))
    bench.run()
    record = bench.records[0]
    assert [s.sent.spec.abstain for s in record.steps] == [True, False, False, False, False]
    assert set(record.kernels) == {"steady+abstained", "steady"}
    # the voted plane is packed and unpacked: more kernels on the abstaining step only
    assert record.kernels["steady+abstained"]["encode"] > record.kernels["steady"]["encode"]
    rows = book_run(record, Results(bench).booking(), 4)
    floor = DEVICES.get("h100").kernel_s
    plain = rows[1]["encode_s"] + rows[1]["decode_s"]
    assert all(r["encode_s"] + r["decode_s"] == plain for r in rows[2:])
    assert rows[0]["encode_s"] + rows[0]["decode_s"] > plain
    # the plain steps are booked with the plain step's count (at least its kernels' floor, and
    # below what the abstaining step's count would give them)
    assert rows[1]["encode_s"] >= record.kernels["steady"]["encode"] * floor * (1 - 1e-9)
    assert rows[1]["encode_s"] < record.kernels["steady+abstained"]["encode"] * floor


def test_a_run_that_always_abstains_is_counted_three_times_at_most(monkeypatch):
    counted = []
    import lionsim.training.loop as loop

    real = loop.KernelCounter

    class Counting(real):
        def __init__(self, *a, **k):
            counted.append(1)
            super().__init__(*a, **k)

    monkeypatch.setattr(loop, "KernelCounter", Counting)

    def always(payload, comm):
        payload.spec = dataclasses.replace(payload.spec, abstain=True)
        comm.all_reduce(payload.values[:, :1].to(dtype=__import__("torch").uint8), op="max")
        return True

    monkeypatch.setattr(a2a, "settle", always)
    cfg = BenchConfig(workload="mlp", workers=2, steps=6, strategies=["dlion-mavo@a2a-1bit"], batch_size=8,
                      eval_every=100, compute="h100")
    bench = Runner(plan(cfg))
    bench.run()
    assert len(counted) == loop.COUNT_TRIES
    assert set(bench.records[0].kernels) == {"steady+abstained", "steady"}
    rows = book_run(bench.records[0], Results(bench).booking(), 2)
    assert len({r["encode_s"] for r in rows}) == 1
