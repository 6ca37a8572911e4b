"""From what a run measured to the time columns of steps.csv: how every second is obtained.

    compute_s   the bench's one forward + backward figure (lionsim.training.compute_figure), the same
                on every step of every strategy; with --compute-spread, the median worker's
    compute_median_s, compute_max_s, wait_s
                uneven workers. sim: each worker's compute scaled by its --compute-spread factor
                this step; a step waits for the slowest (lionsim.steptime.stragglers: wait_s is
                what that adds to the median worker's step); a step that exchanges nothing (a
                local step) waits for no one, and the next that does waits for the workers'
                drift since (lionsim.steptime.rounds): a sync's row carries its round's wait,
                and its compute_max_s the slowest worker's lead (a local step's is its median's),
                so a round's rows add up to its slowest worker's compute, as estimate books it.
                gloo/nccl: the ranks' measured compute this step, per worker (--compute-spread
                injects sleeps into it; the real loop exchanges its losses every step, so every
                step waits there, local or not). Under
                --compute-spread compute_s is compute_median_s and wait_s = compute_max_s -
                compute_median_s, added to step_s; without it compute_s stays the bench's one
                figure (already the slowest rank's), so the step waits for nothing more: wait_s
                0, and the measured spread is compute_max_s - compute_median_s. With --compute
                DEVICE the median and slowest are modelled as on sim, not this CPU's ranks'.
                Without a spread on sim or on a device: compute_s twice and 0. On every row step_s includes wait_s
    encode_s, decode_s, update_s
                measured on this machine: per step, the median of that part over the run's steps
                of the same kind (the same collectives issued: a momentum-sync step is its own
                kind), the first `warmup` steps of the run left out of the medians (they still
                train); per worker (encode and decode of the w rows / w; the update is one
                replica's). On a device (--compute DEVICE): memory passes at its bandwidth, at
                least their kernels x its per-kernel floor (lionsim.steptime.work), the kernels
                counted on a step of the same kind (its phase; a step whose vote carried
                abstentions is its own kind, so one such step moves only its own figure); a
                momentum-sync step's update adds one worker's copy of the synced momenta
                (lionsim.steptime.passes.sync_copy)
    comm_s, comm_exposed_s
                sim: the network model's price of the step's collectives (W workers, per bucket
                or after backward as --overlap and lionsim.steptime.overlap say). gloo/nccl: measured, each real collective timed
                between two barriers (lionsim.backends.dist) and billed as its slowest rank's
                time, summed per step (comm_measured_s), booked as a median by kind like the
                other measured parts; no overlap (the loop sends after backward)
    comm_measured_s, barrier_wait_s, calls
                gloo/nccl: the step's own measured comm (each call's slowest rank, summed), how
                long ranks waited for each other at the calls' leading barriers (rank imbalance:
                the latest rank's arrival minus the earliest's, summed), and how many calls;
                every call on its own row of calls.csv. NaN / 0 on sim
    comm_model_s
                the network model's price of the collectives that step ran, its mean over the
                traits' slow mode (what steps add up to): on sim the same as comm_s, on
                gloo/nccl the real calls (R ranks, their real sizes and dtypes), so
                comm_model_s / comm_measured_s - 1 is the model's error on every row
    comm_model_p10_s, comm_model_p90_s
                gloo/nccl: the spread the model gives that step's calls (which of them hit the
                traits' slow mode, and the fast path's jitter: lionsim.network.traits.sum_quantile);
                NaN on sim
    wire_bytes  whole bytes one worker sends that step by the algorithms that were priced (on a
                real backend: one rank, for its w workers)
    bits_per_param_up/down
                bits per parameter of the model one worker sends and receives: the payload's
                (its share of the model where it carries part of it) plus the step's extra
                collectives (momentum sync, scale maxima, MuLoCo's codes: lionsim.transports.base.step_bits)
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections import Counter
from dataclasses import dataclass

import numpy as np
import torch

from lionsim.backends import Comm
from lionsim.compute import Device
from lionsim.backends.timed import MeasuredCall
from lionsim.network import CollectiveCall, Network, price
from lionsim.network.traits import sum_quantile
from lionsim.steptime import Kernels, OverlapConfig, StepWork, device_work, measured_work, pass_bytes
from lionsim.steptime.spread import ComputeSpread
from lionsim.steptime.rounds import Drift
from lionsim.steptime.timeline import price_step, tensor_specs
from lionsim.steptime.work import BACKWARD_SHARE
from lionsim.steptime.passes import sync_copy
from lionsim.steptime.timeline import StepTimes
from lionsim.strategies.core.momentum_sync import CALL_LABEL
from lionsim.training.compute_figure import ComputeFigure
from lionsim.training.loop import RunRecord, StepRecord, kernel_kind
from lionsim.transports.base import step_bits

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
    spread: ComputeSpread | None = None
    """--compute-spread: uneven workers (lionsim.steptime.spread); None: every worker alike."""


def slowest_process(record: RunRecord, comm: Comm) -> None:
    """Every process's measured parts -> the slowest process's, per step (a step ends when its
    slowest process does); every collective -> its slowest rank's time, and the spread of the
    ranks' waits before it; the median and slowest worker's compute over every process's
    workers. Collective on every process; sim: nothing."""
    if comm.ranks == 1 or not record.steps:
        return
    own = torch.tensor([s.seconds.get("compute", 0.0) / comm.local_workers for s in record.steps], dtype=torch.float64)
    every = comm.exchange_control(own.expand(comm.local_workers, -1)).cpu().numpy()  # [W, steps]: each worker's compute
    # numpy's median, as the simulator's (stragglers.py): the mean of the middle two at even W
    for s, median, slowest in zip(record.steps, np.median(every, 0).tolist(), every.max(0).tolist()):
        s.seconds.update(compute_median=median, compute_max=slowest)
    parts = ("encode", "decode", "update")
    table = torch.tensor([[s.seconds.get(p, 0.0) for p in parts] for s in record.steps], dtype=torch.float64)
    for s, values in zip(record.steps, comm.max_over_ranks(table).tolist()):
        s.seconds.update(dict(zip(parts, values)))
    _bill_calls(record, comm)


def _bill_calls(record: RunRecord, comm: Comm) -> None:
    """Each call billed as the max over ranks of that call (not the max of per-rank sums: a
    rank slow in one call and fast in the next must not hide either), its wait as the latest
    rank's minus the earliest's."""
    calls = [c for s in record.steps for c in s.collectives]
    counts = comm.max_over_ranks(torch.tensor([len(calls), -len(calls)], dtype=torch.float64)).tolist()
    if counts[0] != -counts[1]:
        raise RuntimeError(f"ranks logged different numbers of collectives ({-counts[1]:g} to {counts[0]:g})")
    billed = iter(comm.max_over_ranks(torch.tensor([[c.seconds, c.wait_s, -c.wait_s] for c in calls] or [[0.0] * 3],
                                                   dtype=torch.float64)).tolist())
    for s in record.steps:
        s.collectives = [dataclasses.replace(c, seconds=t, wait_s=latest + earliest)
                         for c, (t, latest, earliest) in zip(s.collectives, billed)]
        s.seconds["collectives"] = sum(c.seconds for c in s.collectives)


def _kind(step: StepRecord, record: RunRecord, workers: int) -> tuple:
    """Steps of one kind issue the same collectives (so do the same work)."""
    if step.collectives:
        return tuple((c.op, c.nbytes) for c in step.collectives)
    if step.sent is None:
        return ("diverged",)
    return tuple((c.op, c.nbytes) for c in step.sent.calls(record.transport, workers))


def step_kinds(record: RunRecord, workers: int) -> int:
    """How many kinds of step a run took (steps that sent, alike in their collectives): 1 for a
    step that always syncs, 2 or more for local-step and phased methods, whose medians
    (medians_by_kind) each cover fewer steps than the run."""
    return len({_kind(s, record, workers) for s in record.steps if s.sent is not None})


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
    median = {kind: statistics.median(pool or fallback[kind]) for kind, pool in pools.items()}  # once a kind
    return [median[k] for k in kinds]


def book_run(record: RunRecord, booking: Booking, w: int) -> list[dict]:
    """The time and byte columns of every step of one run (module doc)."""
    drift = Drift(booking.workers)  # the workers' lead over the median since the last step that waited
    rows = [_times(s, record, work, comm, booking, w, drift)
            for s, work, comm in step_work(record, booking, w)]
    if record.diverged_at is not None:
        rows.append({c: NAN for c in TIME_KEYS} | {"wire_bytes": 0, "bits_per_param_up": NAN, "bits_per_param_down": NAN,
                                                    "calls": 0})
    return rows


def step_work(record: RunRecord, booking: Booking, w: int) -> list[tuple[StepRecord, StepWork, float]]:
    """Every step that sent (not a diverged one) with its booked compute-stream work and its
    booked measured comm (0 on sim): what book_run prices and the trace draws."""
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
            passes = pass_bytes(record.run.strategy_class, record.run.transport, spec, W, b.network.workers_per_node,
                                local=s.sent.local)
            # this kind's kernels (a warm-up, a local step, a sync, a step with abstentions), else its phase's
            counted = record.kernels.get(kernel_kind(s.phase, s.sent), record.kernels.get(s.phase, Counter()))
            work = device_work(b.compute.flops, record.params, passes, b.device,
                               kernels=Kernels(compute=b.compute.kernels, encode=counted["encode"],
                                               decode=counted["decode"], update=counted["update"]),
                               sync=sync_copy(_synced(s), record.params))
        rows.append((s, work, comm[i]))
    return rows


def step_tensors(record: RunRecord, spec, overlap: OverlapConfig):
    """The step's payload per parameter tensor where --overlap tensors exchanges it so (else None):
    the run's own per-tensor specs at steady state, else the step's spec split by the tensors' shares."""
    if spec is None or not overlap.per_tensor(record.transport, record.run.strategy_class):
        return None
    return record.tensors if spec == record.spec else tensor_specs(spec, record.shapes)


def _synced(s: StepRecord) -> int:
    """Parameters whose momenta the step averaged (0 on a step without a momentum sync)."""
    return sum(c.nbytes for c in s.sent.extra if c.label == CALL_LABEL) // 4


TIME_KEYS = ("compute_s", "encode_s", "comm_s", "comm_exposed_s", "decode_s", "update_s", "step_s", "comm_model_s",
             "comm_measured_s", "barrier_wait_s", "comm_model_p10_s", "comm_model_p90_s", "compute_median_s",
             "compute_max_s", "wait_s")


def _times(s: StepRecord, record: RunRecord, work: StepWork, measured_comm: float, b: Booking, w: int,
           drift: Drift | None = None) -> dict:
    W = b.workers
    bits = _bits(s, record, b)
    if b.ranks == 1:  # sim: the model is the time
        priced = price_step(transport=record.transport, spec=s.sent.spec, workers=W, network=b.network,
                            overlap=b.overlap, extra_calls=s.sent.extra, strategy=record.run.strategy_class,
                            tensors=step_tensors(record, s.sent.spec, b.overlap))
        if b.spread is None:
            t = priced.times(work)
        else:  # a step that exchanges nothing waits for no one: the next that does waits for the drift
            waits = s.sent.spec is not None or bool(s.sent.extra)
            t = (drift or Drift(W)).times(priced, work, b.spread.factors(s.step, W), waits)
        return {**t.columns(), "comm_model_s": t.comm_s, "wire_bytes": t.sent_bytes, **bits,
                "comm_measured_s": NAN, "barrier_wait_s": NAN, "calls": 0, "comm_model_p10_s": NAN,
                "comm_model_p90_s": NAN}
    calls = [as_call(c) for c in s.collectives]
    costs = [price(call, b.ranks, _network_of(call, b)) for call in calls]
    model, sent = sum(c.time_s for c in costs), sum(math.ceil(c.sent_bytes - 1e-9) for c in costs)
    modes = [c.modes for c in costs]
    # the ranks' measured compute this step (slowest_process): under --compute-spread (sleeps
    # injected) the median worker's is the step's compute and the slowest's adds the wait; without
    # it compute_s stays the bench's one figure, already the slowest rank's: the step adds no wait
    # (wait_s 0, as step_s books it), and the ranks' spread is reported in compute_median_s and
    # compute_max_s (with --compute DEVICE both are modelled, as on sim)
    own = s.seconds.get("compute", 0.0) / w  # a step booked before slowest_process (a journal): this process's
    median, slowest = s.seconds.get("compute_median", own), s.seconds.get("compute_max", own)
    injected = b.spread is not None
    if b.device is not None:  # compute modelled for a device: even, or the spread's factors, as on sim
        compute = work.forward_s + work.backward_s  # not this CPU's ranks, whose times say nothing of it
        factors = b.spread.factors(s.step, W) if injected else np.ones(1)
        median, slowest = compute * float(np.median(factors)), compute * float(factors.max())
    if injected:  # no overlap here (the loop sends after backward): the wait is the compute difference
        work = dataclasses.replace(work, forward_s=(1 - BACKWARD_SHARE) * median, backward_s=BACKWARD_SHARE * median)
    t = StepTimes(forward_s=work.forward_s, backward_s=work.backward_s, encode_s=work.encode_s, comm_s=measured_comm,
                  comm_exposed_s=measured_comm, decode_s=work.decode_s, update_s=work.update_s,
                  buckets=1 if s.collectives else 0, sent_bytes=sent, wait_s=slowest - median if injected else 0.0)
    measured = {"compute_median_s": median, "compute_max_s": slowest}
    return {**t.columns(), **measured, "comm_model_s": model, "wire_bytes": sent, **bits,
            "comm_measured_s": s.seconds.get("collectives", sum(c.seconds for c in s.collectives)),
            "barrier_wait_s": sum(c.wait_s for c in s.collectives), "calls": len(s.collectives),
            "comm_model_p10_s": sum_quantile(modes, 0.1), "comm_model_p90_s": sum_quantile(modes, 0.9)}


def as_call(measured: MeasuredCall) -> CollectiveCall:
    """A measured call as the network model prices it."""
    return CollectiveCall(measured.op, measured.nbytes, scope=measured.scope, dtype=measured.dtype)


def _network_of(call: CollectiveCall, b: Booking) -> Network:
    """The network a real call among R ranks is priced on: a node-local or cross-node call's
    groups are counted in ranks, so its nodes hold workers_per_node / w ranks (a node of one rank has
    no NVLink SHARP to run: nvls goes, which a network refuses on nodes of one)."""
    if call.scope == "world":
        return b.network
    per_rank = b.workers // b.ranks
    ranks = max(1, b.network.workers_per_node // per_rank)
    return dataclasses.replace(b.network, workers_per_node=ranks, nvls=b.network.nvls if ranks > 1 else "")


def _bits(s: StepRecord, record: RunRecord, b: Booking) -> dict[str, float]:
    """Payload bits per parameter of the model plus the strategy's own collectives, up and down (step_bits)."""
    if s.sent is None:
        return {"bits_per_param_up": 0.0, "bits_per_param_down": 0.0}
    up, down = step_bits(record.transport, s.sent.spec, s.sent.extra, record.params, b.workers,
                         b.network.workers_per_node)
    return {"bits_per_param_up": up, "bits_per_param_down": down}



CALL_COLUMNS = ["strategy", "transport", "step", "call", "collective", "dtype", "bytes", "time_s", "wait_s",
                "model_s", "model_p10_s", "model_p90_s"]
"""calls.csv (real backends): one row per collective of every step."""
CALL_TEXT = ("collective", "dtype")
"""calls.csv's text columns: the rest are numbers a read requires."""


def read_calls(path):
    """calls.csv read exactly (lionsim.reports.files.read_csv): every numeric column required."""
    from lionsim.reports.files import read_csv

    return read_csv(path, [c for c in CALL_COLUMNS if c not in CALL_TEXT])


def call_rows(record: RunRecord, booking: Booking) -> list[dict]:
    """Every measured call of the run beside the model's price of it: time_s the slowest rank's,
    wait_s the spread of the ranks' arrivals at its leading barrier, model_s the model's mean
    and model_p10_s / model_p90_s its spread (the traits' slow mode)."""
    rows = []
    for s in record.steps:
        for i, c in enumerate(s.collectives):
            call = as_call(c)
            cost = price(call, booking.ranks, _network_of(call, booking))
            modes = cost.modes
            rows.append({"strategy": record.run.strategy, "transport": record.run.transport, "step": s.step,
                         "call": i, "collective": c.op, "dtype": c.dtype, "bytes": c.nbytes, "time_s": c.seconds,
                         "wait_s": c.wait_s, "model_s": cost.time_s, "model_p10_s": modes.quantile(0.1),
                         "model_p90_s": modes.quantile(0.9)})
    return rows
