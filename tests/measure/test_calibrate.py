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
                       "-s", "onebit-adam,dgc,powersgd,diloco-int8,dlion-mavo,terngrad,streaming-diloco",
                       *WARM_UPS])
    runner = Runner(plan)
    runner.run()
    sent = sent_in_training(runner)
    runs = planned_calls(plan, runner.workload, runner.place.comm)
    planned = {c for calls in runs for c in calls}
    assert sent <= planned, sorted(sent - planned)
    ops = {op for op, _, _ in sent}
    assert {"all_reduce", "all_to_all", "all_gather"} <= ops  # 1-bit Adam's dense warm-up and its 1-bit phase
    measured = {(op, dtype): sizes for op, dtype, sizes in cases(runs)}
    assert all(n in measured[(op, dtype)] for op, dtype, n in sent)


def test_streaming_diloco_is_calibrated_at_the_sizes_of_its_fragments_as_its_training_sends_them():
    """Its run_spec prices a send as the mean fragment (1381 values on the tiny mlp), which training
    never sends (fragments of 2048 and 714): calibration measured the mean's sizes and none of the
    fragments'. The reference: the calls the simulator's comm was asked to run while it trained,
    sized by lionsim.network.calls' convention (an all-to-all: a rank's whole send buffer, here
    every worker's row; an all-gather: its whole output)."""
    plan = bench_plan(["-w", "mlp", "--model-size", "tiny", "-n", "2", "-b", "8", "--steps", "7",
                       "--eval-every", "7", "-s", "streaming-diloco", "--local-steps", "3"])
    runner = Runner(plan)
    comm = runner.place.comm
    ran = set()

    def recorded(op, call, size):
        def run(x, *args, **kwargs):
            ran.add((op, str(x.dtype).removeprefix("torch."), size(x) * x.element_size()))
            return call(x, *args, **kwargs)
        return run

    comm.all_to_all = recorded("all_to_all", comm.all_to_all, lambda x: x.numel())
    comm.all_gather = recorded("all_gather", comm.all_gather, lambda x: x[0].numel() * comm.world_size)
    comm.all_reduce = recorded("all_reduce", comm.all_reduce, lambda x: x[0].numel())
    runner.run()
    # fp4 codes of blocks of 256 values, 128 bytes each, padded to a multiple of the 2 workers, both rows:
    # fragments of 2048 and 714 values are 8 and 4 blocks (the mean's 1381 would be 6)
    assert {n for op, dtype, n in ran if (op, dtype) == ("all_to_all", "uint8")} == {2 * 8 * 128, 2 * 4 * 128}
    assert set(*planned_calls(plan, runner.workload, comm)) == ran


def test_the_size_cap_is_each_runs_not_the_benchs():
    """Six built-ins whose all_gather float32 payloads are 9 sizes together, each run's at most
    four: calibration thinned the bench's 9 to MAX_SIZES, so a size a built-in sends was priced
    from a fit. The reference: the sizes each run sent as it trained."""
    plan = bench_plan(["-w", "mlp", "--model-size", "tiny", "-n", "2", "-b", "8", "--steps", "7", "--eval-every", "7",
                       "-s", "dgc,demo,muloco,sparseloco,onebit-adam,ef-signsgd", "--dgc-warmup-steps", "4",
                       "--freeze-steps", "2", "--local-steps", "3"])
    runner = Runner(plan)
    runner.run()
    sent = sent_in_training(runner)
    gathered = {n for op, dtype, n in sent if (op, dtype) == ("all_gather", "float32")}
    assert len(gathered) > MAX_SIZES  # the bench's union is over the cap, each run's is not
    measured = {(op, dtype): sizes for op, dtype, sizes in cases(planned_calls(plan, runner.workload,
                                                                               runner.place.comm))}
    assert all(n in measured[(op, dtype)] for op, dtype, n in sent), sorted(
        (op, dtype, n) for op, dtype, n in sent if n not in measured[(op, dtype)])


def test_two_runs_each_under_the_cap_are_measured_whole_and_one_over_it_is_thinned():
    """Closed form: runs of MAX_SIZES sizes each are measured at every size, however many runs;
    a run of more is thinned to MAX_SIZES (`thinned`), beside the other runs' sizes."""
    first = [("all_gather", "float32", 2**k) for k in range(13, 13 + MAX_SIZES)]
    second = [("all_gather", "float32", 3 * 2**k) for k in range(13, 13 + MAX_SIZES)]
    many = [("all_reduce", "float32", 5 * 2**k) for k in range(MAX_SIZES + 4)]
    measured = {(op, dtype): set(sizes) for op, dtype, sizes in cases([first, second, many])}
    assert measured[("all_gather", "float32")] == {n for _, _, n in first + second} | {1, 4096}
    assert measured[("all_reduce", "float32")] == thinned({n for _, _, n in many}) | {1, 4096}
    assert len(thinned({n for _, _, n in many})) == MAX_SIZES


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
