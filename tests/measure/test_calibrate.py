"""What `bench --calibrate` measures (lionsim.measure.calibrate.planned_calls): every call a run
sends on the whole group, not only its steady payload. It measured the steady payload alone, so a
calibrated onebit-adam left the warm-up's dense all-reduce unmeasured, and the run's notes offered
`comm --fit this run's calibration`, a command that cannot run."""

from __future__ import annotations

import math
import random

import pytest

from lionsim.docgen.run import bench_plan
from lionsim.measure.calibrate import MAX_SIZES, cases, planned_calls, thinned
from lionsim.training.runner import Runner
from lionsim.transports.base import plan_on

WARM_UPS = ["--freeze-steps", "2", "--dgc-warmup-steps", "4", "--powersgd-warmup-steps", "2", "--local-steps", "3"]
"""Warm-ups and a sync period inside the steps, so the runs send each kind of payload they have."""


def sent_in_training(runner: Runner) -> set[tuple[str, str, int]]:
    """(op, dtype, bytes a rank sends) of every world-group call the runs made, step by step, as
    they trained: each step's own payload (its Sent spec, what encode returned) through its
    transport, and the strategy's own calls."""
    comm = runner.place.comm
    out = set()
    for record in runner.records:
        for step in record.steps:
            if step.sent is None:
                continue
            calls = [] if step.sent.spec is None else plan_on(record.transport, step.sent.spec, comm.world_size, 1)
            for c in [*calls, *step.sent.extra]:
                if c.scope == "world" and c.nbytes:
                    rows = comm.local_workers if c.op in ("all_to_all", "ps_push") else 1  # a rank's w workers
                    out.add((c.op, c.dtype, c.nbytes * rows))
    return out


def test_calibration_measures_every_call_the_runs_send_in_training():
    plan = bench_plan(["-w", "mlp", "--model-size", "tiny", "-n", "2", "-b", "8", "--steps", "7", "--eval-every", "7",
                       "-s", "onebit-adam,dgc,powersgd,diloco-int8,dlion-mavo,terngrad", *WARM_UPS])
    runner = Runner(plan)
    runner.run()
    sent = sent_in_training(runner)
    planned = set(planned_calls(plan, runner.workload, runner.place.comm))
    assert sent <= planned, sorted(sent - planned)
    ops = {op for op, _, _ in sent}
    assert {"all_reduce", "all_to_all", "all_gather"} <= ops  # 1-bit Adam's dense warm-up and its 1-bit phase
    measured = {(op, dtype): sizes for op, dtype, sizes in cases(sorted(planned))}
    assert all(n in measured[(op, dtype)] for op, dtype, n in sent)


@pytest.mark.parametrize("count", [1, MAX_SIZES, MAX_SIZES + 1, 300])
def test_many_sizes_are_thinned_to_a_spread_that_covers_them(count):
    """A plug-in whose payload changes size every step: at most MAX_SIZES measured, both ends kept,
    and each size within one log spacing of a measured one (brute force over every size)."""
    rng = random.Random(count)
    sizes = {rng.randint(1, 10**9) for _ in range(count)}
    kept = thinned(sizes)
    assert kept <= sizes and len(kept) <= MAX_SIZES and {min(sizes), max(sizes)} <= kept
    if len(sizes) <= MAX_SIZES:
        assert kept == sizes
        return
    spacing = math.log(max(sizes) / min(sizes)) / (MAX_SIZES - 1)
    assert all(min(abs(math.log(s / k)) for k in kept) <= spacing * (1 + 1e-12) for s in sizes)
