"""The per-step time model: buckets, overlap with backward, exposed communication."""

from __future__ import annotations

import itertools

import pytest

from lionsim.aggregators import MajorityVote
from lionsim.errors import LionsimError
from lionsim.steptime import Buckets, OverlapConfig, StepWork, serial_end, step_times
from lionsim.steptime.timeline import bucketed_exposed, bucket_spec
from lionsim.network import CollectiveCall, Link, Network
from lionsim.transports import TRANSPORTS, PayloadSpec

# A flat network with no latency at 1e6 B/s: a 2-worker ring all-reduce of n bytes takes
# 2(N-1)/N n / bw = n microseconds.
SLOW = Network(name="slow", inter=Link(alpha_s=0.0, bandwidth_Bps=1e6))
FP32 = TRANSPORTS.get("fp32-allreduce")()
A2A = TRANSPORTS.get("a2a-1bit")()
MS = 1e-3


def overlap(bucket_params: int, mode: str = "auto") -> OverlapConfig:
    return OverlapConfig(mode=mode, bucket_mb=bucket_params * 4 / 1e6)


def test_buckets_put_the_remainder_first():
    assert Buckets.of(1100, 250).sizes() == [100, 250, 250, 250, 250]
    assert Buckets.of(1000, 250).sizes() == [250] * 4
    assert Buckets.of(100, 250).sizes() == [100]
    assert Buckets.of(1100, 250).total == 5
    assert overlap(250).bucket_params == 250


def test_four_buckets_by_hand():
    # P = 1000 fp32 params in 4 buckets of 1000 bytes: each all-reduce costs 1 ms.
    # F = 1 ms, B = 2 ms: buckets ready at 1.5, 2, 2.5, 3 ms; the stream runs them
    # 1.5-2.5, 2.5-3.5, 3.5-4.5, 4.5-5.5: backward ends at 3, so 2.5 ms are exposed.
    work = StepWork(forward_s=1 * MS, backward_s=2 * MS)
    t = step_times(work, transport=FP32, spec=PayloadSpec(kind="dense", numel=1000), workers=2, network=SLOW,
                   overlap=overlap(250))
    assert t.buckets == 4
    assert t.comm_s == pytest.approx(4 * MS)
    assert t.comm_exposed_s == pytest.approx(2.5 * MS)
    assert t.step_s == pytest.approx(3 * MS + 2.5 * MS)


def test_a_fast_network_exposes_only_the_last_bucket():
    fast = Network(name="fast", inter=Link(alpha_s=0.0, bandwidth_Bps=1e7))  # 0.1 ms per bucket
    work = StepWork(forward_s=1 * MS, backward_s=2 * MS)
    t = step_times(work, transport=FP32, spec=PayloadSpec(kind="dense", numel=1000), workers=2, network=fast,
                   overlap=overlap(250))
    assert t.comm_s == pytest.approx(0.4 * MS)
    assert t.comm_exposed_s == pytest.approx(0.1 * MS)


def test_encode_runs_on_the_compute_stream_between_buckets():
    # E = 2 ms interleaved: the window is B + E = 4 ms, ready at 2, 3, 4, 5 ms; 1 ms each:
    # the stream is never behind, so only the last bucket (5-6 ms) is exposed.
    work = StepWork(forward_s=1 * MS, backward_s=2 * MS, encode_s=2 * MS, decode_s=0.5 * MS, update_s=0.25 * MS)
    t = step_times(work, transport=FP32, spec=PayloadSpec(kind="dense", numel=1000), workers=2, network=SLOW,
                   overlap=overlap(250))
    assert t.comm_exposed_s == pytest.approx(1 * MS)
    assert t.step_s == pytest.approx((1 + 2 + 2 + 1 + 0.5 + 0.25) * MS)


def test_no_overlap_exposes_everything_once():
    work = StepWork(forward_s=1 * MS, backward_s=2 * MS)
    spec = PayloadSpec(kind="dense", numel=1000)
    t = step_times(work, transport=FP32, spec=spec, workers=2, network=SLOW, overlap=overlap(250, "none"))
    assert (t.buckets, t.comm_s, t.comm_exposed_s) == (1, pytest.approx(4 * MS), pytest.approx(4 * MS))


def test_a2a_runs_as_its_strategy_does_unless_the_run_says_otherwise():
    """dlion-mavo's reference code exchanges after backward; --overlap buckets runs it per bucket (a2a-1bit's
    votes are per coordinate), --overlap none runs a DDP strategy's all-reduce after backward."""
    from lionsim.strategies import STRATEGIES

    spec = PayloadSpec(kind="votes", numel=8000, rule=MajorityVote())
    work = StepWork(forward_s=1 * MS, backward_s=100 * MS)
    mavo = STRATEGIES.get("dlion-mavo")
    auto = step_times(work, transport=A2A, spec=spec, workers=3, network=SLOW, overlap=overlap(2000), strategy=mavo)
    assert auto.buckets == 1 and auto.comm_exposed_s == auto.comm_s > 0
    forced = step_times(work, transport=A2A, spec=spec, workers=3, network=SLOW, overlap=overlap(2000, "buckets"),
                        strategy=mavo)
    assert forced.buckets == 4 and forced.comm_exposed_s < forced.comm_s
    dense = PayloadSpec(kind="dense", numel=1000)
    adamw = STRATEGIES.get("adamw")
    assert step_times(work, transport=FP32, spec=dense, workers=2, network=SLOW, overlap=overlap(250),
                      strategy=adamw).buckets == 4
    assert step_times(work, transport=FP32, spec=dense, workers=2, network=SLOW, overlap=overlap(250, "none"),
                      strategy=adamw).buckets == 1


def test_extra_calls_are_never_hidden():
    work = StepWork(forward_s=1 * MS, backward_s=100 * MS)
    extra = [CollectiveCall("all_reduce", 500, "scales")]  # 0.5 ms on SLOW
    spec = PayloadSpec(kind="dense", numel=1000)
    t = step_times(work, transport=FP32, spec=spec, workers=2, network=SLOW, overlap=overlap(250), extra_calls=extra)
    assert t.comm_s == pytest.approx(4.5 * MS)
    assert t.comm_exposed_s == pytest.approx(1.5 * MS)  # the last bucket + the extra call


def test_one_worker_sends_nothing():
    work = StepWork(forward_s=1 * MS, backward_s=2 * MS, encode_s=MS)
    t = step_times(work, transport=FP32, spec=PayloadSpec(kind="dense", numel=1000), workers=1, network=SLOW,
                   overlap=overlap(250))
    assert (t.comm_s, t.comm_exposed_s, t.buckets) == (0.0, 0.0, 0)
    assert t.step_s == pytest.approx(4 * MS)


@pytest.mark.parametrize(("numel", "size"), [(1000, 250), (1100, 250), (100, 250), (1, 1), (997, 100)])
def test_closed_form_matches_the_event_loop(numel, size):
    buckets = Buckets.of(numel, size)
    for forward, window, first_cost, cost in itertools.product((0.0, 1.0), (0.0, 0.3, 2.0, 50.0), (0.05, 0.7),
                                                              (0.01, 0.2, 3.0)):
        sizes = buckets.sizes()
        costs = [first_cost if buckets.first and i == 0 else cost for i in range(len(sizes))]
        done, ready = 0, []
        for n in sizes:
            done += n
            ready.append(forward + window * done / numel)
        plain = serial_end(ready, costs) - (forward + window)
        assert bucketed_exposed(buckets, first_cost, cost, window, numel) == pytest.approx(plain, abs=1e-12)


def test_bucket_spec_scales_per_parameter_counts():
    spec = PayloadSpec(kind="sparse", numel=1000, k=10, segments=20)
    part = bucket_spec(spec, 250)
    assert (part.numel, part.k, part.segments) == (250, 2, 5)  # round(2.5) = 2
    assert bucket_spec(spec, 1000) == spec


def test_bad_overlap_settings():
    with pytest.raises(LionsimError, match="bad --overlap sometimes; accepted: auto, buckets, tensors, none"):
        OverlapConfig(mode="sometimes")
    with pytest.raises(LionsimError, match="bad --bucket-mb 0"):
        OverlapConfig(bucket_mb=0)
    with pytest.raises(LionsimError, match="forward_s"):
        StepWork(forward_s=-1.0, backward_s=0.0)


@pytest.mark.parametrize("numel, algorithm", [(1000, "recursive_doubling"), (10**8, "rabenseifner")])
def test_wire_bytes_are_the_bytes_of_the_algorithm_that_was_priced(numel, algorithm):
    """N = 4, alpha 10 us: recursive doubling wins small all-reduces and sends log2(4) n = 2n,
    not a ring's 2(N-1)/N n = 1.5n; large ones go to a bandwidth-optimal one (1.5n, as a ring)."""
    from lionsim.network.collectives.base import Group
    from lionsim.network.collectives.rabenseifner import Rabenseifner
    from lionsim.network.collectives.recursive_doubling import RecursiveDoubling
    from lionsim.network.collectives.ring import Ring

    link = Link.from_units(alpha_us=10.0, bandwidth_GBps=1.0)
    net = Network(name="alpha", inter=link)
    n = 4 * numel
    t = step_times(StepWork(forward_s=MS, backward_s=MS), transport=FP32, spec=PayloadSpec(kind="dense", numel=numel),
                   workers=4, network=net, overlap=overlap(numel, "none"))
    formula = {"recursive_doubling": RecursiveDoubling, "rabenseifner": Rabenseifner}[algorithm]()
    terms = formula.all_reduce(float(n), Group(ranks=4, link=link))
    assert t.comm_s == pytest.approx(terms.time_s)  # the algorithm comm_s priced...
    assert t.sent_bytes == terms.sent_bytes  # ...is the one wire_bytes counts
    ring = Ring().all_reduce(float(n), Group(ranks=4, link=link))
    if algorithm == "recursive_doubling":
        assert (t.sent_bytes, ring.sent_bytes) == (2 * n, 1.5 * n) and ring.time_s > t.comm_s
    else:
        assert t.sent_bytes == ring.sent_bytes == 1.5 * n
