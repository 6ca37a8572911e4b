"""A host-staged library's copies during backward (lionsim.steptime.timeline, "Host copies"):
per bucket and per tensor the stream holds each exchange's transfer alone and the step also
waits for the last exchange's copies, against a plain loop over the exchanges priced one by one;
one exchange after backward pays its copies in line; the trace ends where the step does."""

from __future__ import annotations

import pytest

import dataclasses

from lionsim.network import CollectiveCall, Link, Network, price
from lionsim.network.libraries import MPI
from lionsim.network.traits import Staging
from lionsim.steptime.lanes import COMM, modelled_lanes, step_end
from lionsim.steptime.overlap import OverlapConfig
from lionsim.steptime.timeline import StepWork, bucket_spec, price_step
from lionsim.transports import TRANSPORTS, PayloadSpec

F, B, E = 0.05, 0.10, 0.0
WORKERS = 8
NETWORK = Network(name="10g-mpi", inter=Link(alpha_s=25e-6, bandwidth_Bps=1.17e9), traits=MPI)
TRANSPORT = TRANSPORTS.get("fp32-allreduce")()
WORK = StepWork(forward_s=F, backward_s=B, encode_s=E)


def plain_exposed(numels: list[int], network: Network = NETWORK) -> float:
    """The step's wait by the plain loop: exchange j (numels[j] floats, in backward order) is ready
    when backward has passed its share, holds the stream for its call less the copies, and the
    step ends after the last transfer and the last exchange's copies, and no sooner than the copy
    engines, one queue, have done every exchange's copies."""
    total, done, free, engine, copies = sum(numels), 0, 0.0, 0.0, 0.0
    for n in numels:
        done += n
        cost = price(CollectiveCall("all_reduce", 4 * n), WORKERS, network)
        ready = F + (B + E) * done / total
        free = max(free, ready) + cost.time_s - cost.staging_s
        engine = max(engine, ready) + cost.staging_s
        copies = cost.staging_s
    return max(free + copies, engine) - (F + B + E)


def test_per_bucket_the_stream_holds_transfers_and_the_last_copies_follow():
    spec = PayloadSpec(kind="dense", numel=9_000_000)  # 8 MB buckets: 1M floats, then 4 of 2M
    overlap = OverlapConfig(mode="buckets", bucket_mb=8)
    priced = price_step(transport=TRANSPORT, spec=spec, workers=WORKERS, network=NETWORK, overlap=overlap)
    sizes = priced.buckets.sizes()
    assert len(sizes) == 5 and sizes[0] < sizes[1]  # a partial first bucket, then full ones
    assert priced.times(WORK).comm_exposed_s == pytest.approx(plain_exposed(sizes), rel=1e-9)
    in_line = sum(price(CollectiveCall("all_reduce", 4 * n), WORKERS, NETWORK).time_s for n in sizes)
    assert priced.comm.time_s == pytest.approx(in_line)  # comm_s still counts every copy
    assert priced.comm.staging_s > 0


def test_per_tensor_the_same_rule():
    shapes = [(1000, 2000), (3000,), (500, 500), (4_000_000,)]
    spec = PayloadSpec(kind="dense", numel=sum(a * (b[0] if b else 1) for a, *b in shapes))
    tensors = [bucket_spec(spec, a * (b[0] if b else 1)) for a, *b in shapes]
    priced = price_step(transport=TRANSPORT, spec=spec, workers=WORKERS, network=NETWORK,
                        overlap=OverlapConfig(mode="tensors"), tensors=tensors)
    backward_order = [t.numel for t in reversed(tensors)]
    assert priced.times(WORK).comm_exposed_s == pytest.approx(plain_exposed(backward_order), rel=1e-9)


def test_one_exchange_after_backward_pays_its_copies_in_line():
    spec = PayloadSpec(kind="dense", numel=10_000_000)
    priced = price_step(transport=TRANSPORT, spec=spec, workers=WORKERS, network=NETWORK,
                        overlap=OverlapConfig(mode="none"))
    whole = price(CollectiveCall("all_reduce", 4 * spec.numel), WORKERS, NETWORK)
    assert priced.times(WORK).comm_exposed_s == pytest.approx(whole.time_s)
    assert whole.staging_s > 0


@pytest.mark.parametrize("mode", ["buckets", "none"])
def test_the_trace_ends_where_the_step_does(mode):
    spec = PayloadSpec(kind="dense", numel=10_000_000)
    kw = dict(transport=TRANSPORT, spec=spec, network=NETWORK, overlap=OverlapConfig(mode=mode, bucket_mb=8))
    lanes = modelled_lanes(work=WORK, factors=[1.0, 1.0], workers=WORKERS, **kw)[0]
    assert step_end(lanes) == pytest.approx(price_step(workers=WORKERS, **kw).times(WORK).step_s)
    copies = [s for s in lanes if s.lane == COMM and s.name == "host copies"]
    assert len(copies) == (1 if mode == "buckets" else 0)  # after backward the copies are inside each call


def test_slow_copies_wait_for_the_copy_engines_queue():
    """Copies slower than the link: the step waits for the copy engines' queue, not just the last
    exchange's copies (a library staged through a slow host: a profile's [traits.staging])."""
    slow = Network(name="fast-link-slow-host", inter=Link(alpha_s=5e-6, bandwidth_Bps=20e9),
                   traits=dataclasses.replace(MPI, host_GBps=20.0, staging=Staging(GBps=0.5)))
    spec = PayloadSpec(kind="dense", numel=9_000_000)
    kw = dict(transport=TRANSPORT, spec=spec, network=slow, overlap=OverlapConfig(mode="buckets", bucket_mb=8))
    priced = price_step(workers=WORKERS, **kw)
    exposed = priced.times(WORK).comm_exposed_s
    assert exposed == pytest.approx(plain_exposed(priced.buckets.sizes(), slow), rel=1e-9)
    assert exposed > priced.comm.staging_s - (B + E)  # the queue of copies outlasts backward
    lanes = modelled_lanes(work=WORK, factors=[1.0, 1.0], workers=WORKERS, **kw)[0]
    assert step_end(lanes) == pytest.approx(priced.times(WORK).step_s)
