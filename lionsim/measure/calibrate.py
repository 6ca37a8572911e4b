"""`bench --backend gloo|nccl --calibrate`: fit the model on the run's own group before training.

Every rank, before the first run trains:

1. lists the collectives the bench's runs will issue on this group: each run's steady-state
   payload through its transport (and with abstentions, where the transport carries them),
   plus the strategy's own calls (momentum syncs), at the sizes a rank really sends (an
   all-to-all or a parameter-server push of a rank holding w workers carries w workers' rows);
2. measures each (op, dtype) at those sizes plus anchors that let a floor and a duplex share
   be told apart (one element, 4 KiB, and a quarter of the largest size above 1 MiB), as `lionsim
   comm` does: barriers around every call, warm-up dropped, the slowest rank's time;
3. fits a profile (lionsim.network.fit) with the bench's network as the prior link.

The fitted profile prices comm_model_s of every step; the training steps were not in the fit,
so the model's error on them (summary.csv's comm_model_error) is out of sample. Rank 0 writes
calibration.toml and calibration.csv (every measured size, the fit's error) beside the run.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import torch

from lionsim.measure.rank import sweep_cases
from lionsim.measure.table import Point
from lionsim.network import Network
from lionsim.network.fit import Measured, fit_profile

WARMUP, ITERS = 3, 12
"""Iterations per calibrated size: dropped, then timed."""
ANCHORS = (1, 4096)
"""Sizes every (op, dtype) is also measured at: where the floor shows."""


def planned_calls(bench) -> list[tuple[str, str, int]]:
    """(op, dtype, bytes) of every distinct collective the bench's runs issue on its group."""
    from lionsim.strategies import flatten_parameters
    from lionsim.transports import TRANSPORTS
    from lionsim.transports.base import plan_on

    comm = bench.place.comm
    w, workers = comm.local_workers, comm.world_size
    _, layout = flatten_parameters(bench.workload.model)
    seen: dict[tuple[str, str, int], None] = {}
    for planned in bench.plan.runs:
        run = planned.run
        strategy = run.strategy_class(planned.strategy, layout, comm)
        transport = TRANSPORTS.get(run.transport)()
        spec = strategy.payload_spec()
        specs = [spec] + ([replace(spec, abstain=True)] if spec.kind == "votes" and not spec.abstain else [])
        calls = [c for s in specs for c in plan_on(transport, s, workers, bench.network.workers_per_node)
                 if c.scope == "world"]  # a node's or a slot's subgroup is not the group measured here
        calls += [c for step in range(1, bench.cfg.steps + 1) for c in strategy.extra_calls(step)]
        for c in calls:
            scale = w if c.op in ("all_to_all", "ps_push") else 1  # a rank sends its w workers' rows
            if c.nbytes:
                seen[(c.op, c.dtype, c.nbytes * scale)] = None
        del strategy
    return list(seen)


def cases(calls: list[tuple[str, str, int]]) -> list[tuple[str, str, list[int]]]:
    """The sizes to measure per (op, dtype): the planned ones and the anchors (module doc, 2)."""
    grouped: dict[tuple[str, str], set[int]] = {}
    for op, dtype, nbytes in calls:
        grouped.setdefault((op, dtype), set()).add(nbytes)
    out = []
    for (op, dtype), sizes in grouped.items():
        anchors = set(ANCHORS) | ({max(sizes) // 4} if max(sizes) // 4 >= 2**20 else set())
        out.append((op, dtype, sorted(sizes | anchors)))
    return out


def calibrate(bench, device: torch.device, hosts: list[dict]) -> tuple[Network, pd.DataFrame] | None:
    """Measure and fit on every rank (collective); rank 0 gets (profile, calibration.csv rows)."""
    import torch.distributed as dist

    comm = bench.place.comm
    points: list[Point] = []
    sweep_cases(cases(planned_calls(bench)), comm.ranks, WARMUP, ITERS, device, points.append)
    if dist.get_rank() != 0:
        return None
    measured = [Measured(p.op, p.dtype, p.nbytes(comm.ranks), p.times) for p in points]
    machines = len({h["boot_id"] for h in hosts})
    net, errors = fit_profile(measured, workers=comm.ranks, prior=bench.network, backend=bench.cfg.backend,
                              name="calibration", record={"backend": bench.cfg.backend, "ranks": comm.ranks,
                                                          "hosts": machines, "when": "before training, this run"},
                              description=f"calibrated on this run's {comm.ranks} {bench.cfg.backend} ranks before "
                                          f"training ({machines} host(s)); link alpha from {bench.network.name}")
    return net, errors
