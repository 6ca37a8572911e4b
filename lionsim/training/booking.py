"""From what a run measured to the time columns of steps.csv: how every second is obtained.

    compute_s   the bench's one forward + backward figure (lionsim.training.compute), the same
                on every step of every strategy
    encode_s, decode_s, update_s
                measured on this machine: per step, the median of that part over the run's steps
                of the same kind (the same collectives issued: a momentum-sync step is its own
                kind), the first `warmup` steps of the run left out of the medians (they still
                train); per worker (encode and decode of the w rows / w; the update is one
                replica's). On a device (--compute DEVICE): memory passes at its bandwidth, at
                least their kernels x its per-kernel floor (lionsim.steptime.work); a
                momentum-sync step's update adds one worker's copy of the synced momenta
                (lionsim.steptime.passes.sync_copy)
    comm_s, comm_exposed_s
                sim: the network model's price of the step's collectives (W workers, overlap as
                lionsim.steptime.overlap says). gloo/nccl: measured, each real collective timed
                after a barrier, summed per step, the slowest rank's, booked as a median by kind
                like the other measured parts; no overlap (the loop sends after backward)
    comm_model_s
                the network model's price of the collectives that step ran: on sim the same as
                comm_s, on gloo/nccl the real calls (R ranks, their real sizes), so
                comm_model_s / comm_s - 1 is the model's error on every row
    wire_bytes  whole bytes one worker sends that step by the algorithms that were priced (on a
                real backend: one rank, for its w workers)
    bits_per_param_up/down
                the payload's bits per parameter plus the step's extra collectives (momentum
                sync, scale maxima), each counted up and down
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass

import torch

from lionsim.backends import Comm
from lionsim.compute import Device
from lionsim.backends.dist import MeasuredCall
from lionsim.network import CollectiveCall, Network, price
from lionsim.steptime import Kernels, OverlapConfig, StepWork, device_work, measured_work, pass_bytes, price_calls, step_times
from lionsim.steptime.passes import sync_copy
from lionsim.steptime.timeline import StepTimes
from lionsim.strategies.momentum_sync import CALL_LABEL
from lionsim.training.compute import ComputeFigure
from lionsim.training.loop import RunRecord, StepRecord

NAN = float("nan")


@dataclass(frozen=True, kw_only=True, slots=True)
class Booking:
    """How one bench books time."""

    network: Network
    overlap: OverlapConfig
    compute: ComputeFigure
    device: Device | None
    """--compute DEVICE, or None for measured."""
    warmup: int
    """Leading steps of each run left out of the medians."""
    backend: str
    workers: int
    """W."""
    ranks: int
    """R: processes (1 on sim)."""


def slowest_process(record: RunRecord, comm: Comm) -> None:
    """Every process's measured parts and collective times -> the slowest process's, per step
    (a step ends when its slowest process does). Collective on every process; sim: nothing."""
    if comm.ranks == 1 or not record.steps:
        return
    parts = ("encode", "decode", "update")
    table = torch.tensor([[s.seconds.get(p, 0.0) for p in parts] + [sum(c.seconds for c in s.collectives)]
                          for s in record.steps], dtype=torch.float64)
    for s, values in zip(record.steps, comm.max_over_ranks(table).tolist()):
        s.seconds.update(dict(zip(parts, values[:3])))
        s.seconds["collectives"] = values[3]


def _kind(step: StepRecord, record: RunRecord, workers: int) -> tuple:
    """Steps of one kind issue the same collectives (so do the same work)."""
    if step.collectives:
        return tuple((c.op, c.nbytes) for c in step.collectives)
    if step.sent is None:
        return ("diverged",)
    return tuple((c.op, c.nbytes) for c in step.sent.calls(record.transport, workers))


def medians_by_kind(values: list[float], kinds: list[tuple], warmup: int) -> list[float]:
    """Each step's booked value: the median over the steps of its kind past the warm-up (over
    all of its kind when none is past it)."""
    pools: dict[tuple, list[float]] = {}
    for i, (value, kind) in enumerate(zip(values, kinds)):
        if i >= warmup:
            pools.setdefault(kind, []).append(value)
    for value, kind in zip(values, kinds):
        pools.setdefault(kind, [])
    fallback = {kind: [v for v, k in zip(values, kinds) if k == kind] for kind, pool in pools.items() if not pool}
    return [statistics.median(pools[k] or fallback[k]) for k in kinds]


def book_run(record: RunRecord, booking: Booking, w: int) -> list[dict]:
    """The time and byte columns of every step of one run (module doc)."""
    b, W = booking, booking.workers
    live = [s for s in record.steps if s.sent is not None]
    kinds = [_kind(s, record, W) for s in live]

    def booked(part: str, per: int = 1) -> list[float]:
        return medians_by_kind([s.seconds.get(part, 0.0) / per for s in live], kinds, b.warmup)

    encode, decode, update = booked("encode", w), booked("decode", w), booked("update")
    # the slowest rank's collectives (slowest_process), or this rank's own when a failed run is booked
    collectives = [s.seconds.get("collectives", sum(c.seconds for c in s.collectives)) for s in live]
    comm = medians_by_kind(collectives, kinds, b.warmup) if b.ranks > 1 else [0.0] * len(live)
    rows = []
    for i, s in enumerate(live):
        if b.device is None:
            work = measured_work(b.compute.seconds, encode[i], decode[i], update[i])
        else:
            spec = s.sent.spec or record.spec
            passes = pass_bytes(record.run.strategy, record.run.transport, spec, W, local=s.sent.local)
            counted = record.kernels.get(s.phase, Counter())  # this phase's kernels (a warm-up, a local step, a sync)
            work = device_work(b.compute.flops, record.params, passes, b.device,
                               kernels=Kernels(compute=b.compute.kernels, encode=counted["encode"],
                                               decode=counted["decode"], update=counted["update"]),
                               sync=sync_copy(_synced(s), record.params))
        rows.append(_times(s, record, work, comm[i], b))
    if record.diverged_at is not None:
        rows.append({c: NAN for c in TIME_KEYS} | {"wire_bytes": 0, "bits_per_param_up": NAN, "bits_per_param_down": NAN})
    return rows


def _synced(s: StepRecord) -> int:
    """Parameters whose momenta the step averaged (0 on a step without a momentum sync)."""
    return sum(c.nbytes for c in s.sent.extra if c.label == CALL_LABEL) // 4


TIME_KEYS = ("compute_s", "encode_s", "comm_s", "comm_exposed_s", "decode_s", "update_s", "step_s", "comm_model_s")


def _times(s: StepRecord, record: RunRecord, work: StepWork, measured_comm: float, b: Booking) -> dict:
    W, params = b.workers, record.params
    bits = _bits(s, record, W)
    if b.ranks == 1:  # sim: the model is the time
        t = step_times(work, transport=record.transport, spec=s.sent.spec, workers=W, network=b.network,
                       overlap=b.overlap, extra_calls=s.sent.extra, after_step=record.run.strategy_class.after_step)
        return {**t.columns(), "comm_model_s": t.comm_s, "wire_bytes": t.sent_bytes, **bits}
    model = sum(price(_call(c), b.ranks, b.network).time_s for c in s.collectives)
    sent = price_calls([_call(c) for c in s.collectives], b.ranks, b.network).sent_bytes
    t = StepTimes(forward_s=work.forward_s, backward_s=work.backward_s, encode_s=work.encode_s, comm_s=measured_comm,
                  comm_exposed_s=measured_comm, decode_s=work.decode_s, update_s=work.update_s,
                  buckets=1 if s.collectives else 0, sent_bytes=sent)
    return {**t.columns(), "comm_model_s": model, "wire_bytes": sent, **bits}


def _call(measured: MeasuredCall) -> CollectiveCall:
    return CollectiveCall(measured.op, measured.nbytes)


def _bits(s: StepRecord, record: RunRecord, W: int) -> dict[str, float]:
    """Payload bits per parameter plus every extra collective's bytes, up and down."""
    if W == 1 or s.sent is None or s.sent.spec is None:
        return {"bits_per_param_up": 0.0, "bits_per_param_down": 0.0}
    up, down = record.transport.bits_per_param(s.sent.spec, W)
    extra = sum(8.0 * c.nbytes for c in s.sent.extra) / record.params
    return {"bits_per_param_up": up + extra, "bits_per_param_down": down + extra}

