"""`bench --backend gloo|nccl --calibrate`: fit the model on the run's own group before training.

Every rank, before the first run trains:

1. lists the collectives the bench's runs will issue on this group: every payload a run sends
   (lionsim.strategies.core.sends.sent_specs, the walk the plan's transport questions use: the steady
   one, a warm-up's dense or denser ones, each vote also with abstentions, streaming-diloco's
   fragments rather than the mean that prices its steps) through its transport,
   plus the strategy's own calls (momentum syncs), at the sizes a rank really sends (an
   all-to-all or a parameter-server push of a rank holding w workers carries w workers' rows);
   the calls on a node's or a slot's subgroup are left out (this group is not theirs). Calls of
   one op, dtype and size are measured once; where a run sends more than MAX_SIZES sizes of one
   (op, dtype) (a plug-in whose payload changes size every step), MAX_SIZES of them spread evenly
   in log size from the smallest to the largest are measured (`thinned`): each size priced then
   lies within one such spacing of a measured one, and calibration time stays bounded. The cap
   is each run's: the runs' sizes are joined after it, so every size a built-in sends is measured;
2. measures each (op, dtype) at those sizes plus anchors that let a floor and a duplex share
   be told apart (one element, 4 KiB, and a quarter of the largest size above 1 MiB), as `lionsim
   comm` does: barriers around every call, warm-up dropped, the slowest rank's time;
   then again as a training step meets them (`in_step`): the calls of at most SLOW_MAX_BYTES,
   each call after one forward + backward of this rank's workers (on STEP_SAMPLES samples),
   untimed, since in a step every call follows CPU work (the compute, or the previous call's
   packing). Small calls are where the library's slow path (a wake-up that waits for a core)
   decides the time, and on a loaded machine it hits a call that follows CPU work more often
   than back-to-back calls show: on the emulated 1 Gbit link, 11-56% of the bench's small
   calls were slow against 10% of back-to-back ones, and most of their medians ran 1.3-1.8x
   (docs/time-model-kernels.md). The slow mode's probability and extra are fitted on the
   in-step times, its calm probability (the band's lower edge) on the back-to-back ones; each
   small size's fast time and the fast path's jitter on both sets, since a step's call meets
   either state of a machine whose load comes and goes (lionsim.network.fit);
3. fits a profile (lionsim.network.fit) with the bench's network as the prior link.

The fitted profile prices comm_model_s of every step; the training steps were not in the fit,
so the model's error on them (summary.csv's comm_model_error) is out of sample. Rank 0 writes
calibration.toml and calibration.csv (every measured size, the fit's error) beside the run.
"""

from __future__ import annotations

import math
from typing import Callable

import pandas as pd
import torch

from lionsim.backends import Comm
from lionsim.measure.rank import sweep_cases
from lionsim.measure.table import Point
from lionsim.network import Network
from lionsim.plan import BenchPlan
from lionsim.training.loop import Place
from lionsim.workloads import Workload
from lionsim.network.fit import SLOW_MAX_BYTES, FitConfig, Measured, fit_profile
from lionsim.group.hosts import shared_cores

WARMUP, ITERS = 3, 12
"""Iterations per calibrated size: dropped, then timed."""
IN_STEP_WARMUP, IN_STEP_ITERS = 1, 24
"""In-step iterations per small size, dropped then timed: the slow mode's share is what the
timed ones estimate (the back-to-back sweep has warmed the group up)."""
ANCHORS = (1, 4096)
"""Sizes every (op, dtype) is also measured at: where the floor shows."""


MAX_SIZES = 8
"""Sizes of one (op, dtype) measured at most for one run, besides the anchors (module doc, 1): the
built-in strategies send at most five (dgc's four warm-up densities and its steady one)."""


def planned_calls(plan: BenchPlan, workload: Workload, comm: Comm) -> list[list[tuple[str, str, int]]]:
    """(op, dtype, bytes) of every distinct collective each of the plan's runs issues on `comm`'s
    group: one list per run."""
    from lionsim.strategies.core.sends import sent_calls, sent_specs
    from lionsim.strategies import flatten_parameters
    from lionsim.transports import TRANSPORTS
    from lionsim.transports.base import plan_on

    w, workers = comm.local_workers, comm.world_size
    network = plan.network.network
    _, layout = flatten_parameters(workload.model)
    runs = []
    for planned in plan.runs:
        run = planned.run
        strategy = run.strategy_class(planned.strategy, layout, comm)
        transport = TRANSPORTS.get(run.transport)()
        specs = sent_specs(strategy, strategy.payload_spec(), plan.steps)
        calls = [c for s in specs for c in plan_on(transport, s, workers, network.workers_per_node)
                 if c.scope == "world"]  # a node's or a slot's subgroup is not the group measured here
        calls += sent_calls(strategy, plan.steps)
        seen: dict[tuple[str, str, int], None] = {}
        for c in calls:
            scale = w if c.op in ("all_to_all", "ps_push") else 1  # a rank sends its w workers' rows
            if c.nbytes:
                seen[(c.op, c.dtype, c.nbytes * scale)] = None
        runs.append(list(seen))
        del strategy
    return runs


def cases(runs: list[list[tuple[str, str, int]]]) -> list[tuple[str, str, list[int]]]:
    """The sizes to measure per (op, dtype): each run's planned ones, thinned per run (module doc,
    1), joined; and the anchors (module doc, 2). `runs`: planned_calls's lists."""
    grouped: dict[tuple[str, str], set[int]] = {}
    for calls in runs:
        own: dict[tuple[str, str], set[int]] = {}
        for op, dtype, nbytes in calls:
            own.setdefault((op, dtype), set()).add(nbytes)
        for key, sizes in own.items():
            grouped.setdefault(key, set()).update(thinned(sizes))
    out = []
    for (op, dtype), sizes in grouped.items():  # thinning keeps each run's largest: the anchor is the same
        anchors = set(ANCHORS) | ({max(sizes) // 4} if max(sizes) // 4 >= 2**20 else set())
        out.append((op, dtype, sorted(sizes | anchors)))
    return out


def thinned(sizes: set[int], most: int = MAX_SIZES) -> set[int]:
    """`sizes` (bytes, each at least 1), or where there are more than `most`, the one nearest in log
    size to each of `most` points spread evenly from the smallest to the largest: both ends kept,
    and every size within one spacing, (largest / smallest) ** (1 / (most - 1)), of a kept one."""
    if len(sizes) <= most:
        return set(sizes)
    ordered = sorted(sizes)
    low, high = math.log(ordered[0]), math.log(ordered[-1])
    points = [low + (high - low) * i / (most - 1) for i in range(most)]
    return {min(ordered, key=lambda s: abs(math.log(s) - p)) for p in points}


STEP_SAMPLES = 2
"""Samples per worker of the in-step compute: the step's own model and kernels keep the cores
busy as a step does, while a whole batch of a larger model (vit paper: seconds on 2 loaded
cores) before each of a few hundred calls would take minutes."""


def step_compute(workload: Workload, place: Place) -> Callable[[], None]:
    """One forward + backward of this rank's workers on the first STEP_SAMPLES samples of their
    first batch, as a training step runs it (lionsim.training.compute_figure), leaving the model's
    gradients and the RNG as they were."""
    from lionsim.simulator import GRADIENT_METHODS, gradient_method

    w = place.comm.local_workers
    grads = torch.zeros(w, workload.params, device=place.device)
    gradients = GRADIENT_METHODS[gradient_method(workload.gradients, w)]
    batches = [(x[:STEP_SAMPLES], y[:STEP_SAMPLES]) for x, y in workload.batches(0, place.workers, place.device)]

    def run() -> None:
        with torch.random.fork_rng(devices=[place.device] if place.device.type == "cuda" else []):
            gradients(workload.model, workload.loss, batches, grads)
        workload.model.zero_grad(set_to_none=True)

    return run


def in_step(calls: list[tuple[str, str, list[int]]]) -> list[tuple[str, str, list[int]]]:
    """The cases' sizes a step's compute changes (module doc, 2): those of at most SLOW_MAX_BYTES."""
    small = [(op, dtype, [b for b in sizes if b <= SLOW_MAX_BYTES]) for op, dtype, sizes in calls]
    return [(op, dtype, sizes) for op, dtype, sizes in small if sizes]


def calibrate(plan: BenchPlan, workload: Workload, place: Place,
              hosts: list[dict]) -> tuple[Network, pd.DataFrame] | None:
    """Measure and fit on every rank (collective): the plan's runs on `workload`, built on this
    rank's `place`; rank 0 gets (profile, calibration.csv rows)."""
    import torch.distributed as dist

    comm, device = place.comm, place.device
    prior, backend = plan.network.network, plan.backend.name
    planned = cases(planned_calls(plan, workload, comm))
    points: list[Point] = []
    sweep_cases(planned, comm.ranks, WARMUP, ITERS, device, points.append)
    stepped: list[Point] = []
    sweep_cases(in_step(planned), comm.ranks, IN_STEP_WARMUP, IN_STEP_ITERS, device, stepped.append,
                before=step_compute(workload, place))
    if dist.get_rank() != 0:
        return None
    in_steps = {(p.op, p.dtype, p.size): p.times for p in stepped}
    measured = [Measured(p.op, p.dtype, p.nbytes(comm.ranks), p.times + in_steps.get((p.op, p.dtype, p.size), ()))
                for p in points]
    machines = len({h["boot_id"] for h in hosts})
    reach = max((p.nbytes(comm.ranks) for p in stepped), default=0)  # the slow mode covers every in-step size
    fit = FitConfig(slow_up_to=reach,
                    slow_from=tuple(Measured(p.op, p.dtype, p.nbytes(comm.ranks), p.times) for p in stepped),
                    calm_from=tuple(Measured(p.op, p.dtype, p.nbytes(comm.ranks), p.times) for p in points
                                    if (p.op, p.dtype, p.size) in in_steps),
                    shared_cores=shared_cores(hosts) is not None)
    net, errors = fit_profile(measured, workers=comm.ranks, prior=prior, backend=backend, cfg=fit,
                              name="calibration", record={"backend": backend, "ranks": comm.ranks,
                                                          "hosts": machines, "when": "before training, this run"},
                              description=f"calibrated on this run's {comm.ranks} {backend} ranks before "
                                          f"training ({machines} host(s)); link alpha from {prior.name}")
    return net, errors
