"""Each step of a run laid out in time, per worker or rank: what `bench --trace` draws.

    sim        the modelled step (lionsim.steptime.lanes) of every worker (one timeline for all
               when workers are even: theirs are the same), with the work that
               booking.py booked for that step (so each step lasts its step_s, and the steps
               follow one another as sim_time_s adds them up)
    gloo/nccl  what each rank measured: its clock's sections (compute, encode, decode, update,
               the untimed "control" exchange of losses and flags, where a rank waits for a
               slower one, and "evaluate" on rank 0: lionsim.timing.Clock.spans) and each
               collective it timed (from its start after the aligning barrier, for this rank's
               own seconds), preceded by its wait in that barrier: the wait for the slowest
               rank. Every rank leaves an aligning barrier together (to its exit skew), so the
               ranks' clocks are aligned by the median over every call of the difference of its
               starts (a median: the first call's set-up can skew its exit by milliseconds).
               Steps restored from an interrupted session (--resume) ran on another process's
               clock and are left out

A span's lane is "step" (one span per step), "compute" or "comm"; seconds from the run's start.
"""

from __future__ import annotations

import math

import torch

from lionsim.backends import Comm
from lionsim.numbers import bytes_text
from lionsim.steptime.lanes import COMM, COMPUTE, WAIT_WORKER, Span, modelled_lanes, step_end
from lionsim.training.booking import Booking, step_tensors, step_work
from lionsim.training.loop import TRACED, RunRecord

STEP = "step"
"""The lane holding one span per step."""
WAIT_RANK = "wait for slowest rank"
SHOWN = {"control": "exchange losses and flags (untimed)"}
"""A section's name in the trace where the clock's would not say what it is."""
_SECTION, _CALL, _WAIT = 0, 1, 2
"""Row kinds of the gathered table: (step index, kind, index, start, end)."""


def run_tracks(records: list[RunRecord], booking: Booking, backend: str, w: int) -> list[tuple[str, list[Span]]]:
    """(name, spans) of every worker or rank of every run, in run order: on sim one per worker
    under --compute-spread, else one for every worker (theirs are the same); on gloo/nccl one
    per rank, naming its workers."""
    W, tracks = booking.workers, []
    for record in records:
        label = record.run.label
        if backend == "sim":
            lanes = modelled_run(record, booking, w)
            if booking.spread is None:
                tracks.append((f"{label} · every worker ({W} alike)", lanes[0]))
            else:
                tracks += [(f"{label} · worker {i}", spans) for i, spans in enumerate(lanes)]
            continue
        lanes = measured_run(record, backend)
        per = W // len(lanes) if lanes else 1
        tracks += [(f"{label} · rank {r}" + (f" (workers {r * per}-{r * per + per - 1})" if per > 1 else ""), spans)
                   for r, spans in enumerate(lanes)]
    return tracks


def modelled_run(record: RunRecord, booking: Booking, w: int) -> list[list[Span]]:
    """sim: every worker's spans over the whole run (module doc); one list when the workers are
    even (no --compute-spread), where every worker's is the same."""
    b, W = booking, booking.workers
    lanes: list[list[Span]] = [[] for _ in range(W if b.spread is not None else 1)]
    at = 0.0
    for s, work, _ in step_work(record, booking, w):
        factors = [1.0] if b.spread is None else [float(f) for f in b.spread.factors(s.step, W)]
        step = modelled_lanes(work=work, factors=factors, workers=W,
                              transport=record.transport, spec=s.sent.spec, network=b.network, overlap=b.overlap,
                              extra_calls=s.sent.extra, strategy=record.run.strategy_class,
                              tensors=step_tensors(record, s.sent.spec, b.overlap))
        end = step_end(step[0])
        for worker, spans in enumerate(step):
            lanes[worker].append(Span(STEP, f"step {s.step}", at, end, {"step": s.step, "phase": s.phase}))
            lanes[worker] += [_shifted(span, at) for span in spans]
        at += end
    return lanes


def _shifted(span: Span, by: float) -> Span:
    return Span(span.lane, span.name, span.start_s + by, span.dur_s, span.args)


def gather_spans(record: RunRecord, comm: Comm) -> None:
    """gloo/nccl: every rank's measured spans into record.rank_spans (a [n, 5] table per rank).
    Collective on every process; call it before the calls are billed (their own seconds)."""
    rows = []
    for i, s in enumerate(record.steps[record.restored:]):
        rows += [(i, _SECTION, TRACED.index(name), t0, t1) for name, t0, t1 in getattr(s, "spans", [])
                 if name in TRACED]
        for j, c in enumerate(s.collectives):
            rows.append((i, _CALL, j, c.start_s, c.start_s + c.seconds))
            if c.wait_s > 0:
                rows.append((i, _WAIT, j, c.start_s - c.wait_s, c.start_s))
    own = torch.tensor(rows, dtype=torch.float64).reshape(-1, 5)
    if comm.ranks == 1:
        record.rank_spans = [own]
        return
    n = int(comm.max_over_ranks(torch.tensor([len(rows)], dtype=torch.float64)).item())
    padded = torch.full((n, 5), math.nan, dtype=torch.float64)
    padded[:len(rows)] = own
    every = comm.exchange_control(padded.reshape(1, -1).expand(comm.local_workers, -1)).cpu()  # [W, n * 5]
    record.rank_spans = [every[r * comm.local_workers].reshape(n, 5) for r in range(comm.ranks)]
    record.rank_spans = [t[~torch.isnan(t[:, 0])] for t in record.rank_spans]


def measured_run(record: RunRecord, backend: str) -> list[list[Span]]:
    """gloo/nccl: every rank's spans over this session's steps (module doc), from rank_spans."""
    steps = record.steps[record.restored:]
    tables = record.rank_spans
    if not steps or not any(len(t) for t in tables):
        return [[] for _ in tables]
    shift = [_offset(t, tables[0]) for t in tables]
    origin = min(float(t[:, 3].min()) - d for t, d in zip(tables, shift) if len(t))
    lanes = []
    for table, d in zip(tables, shift):
        spans: list[Span] = []
        for i, kind, j, t0, t1 in table.tolist():
            i, kind, j, t0, dur = int(i), int(kind), int(j), t0 - d - origin, t1 - t0
            if kind == _SECTION:
                spans.append(Span(COMPUTE, SHOWN.get(TRACED[j], TRACED[j]), t0, dur))
                continue
            c = steps[i].collectives[j]
            if kind == _WAIT:
                spans.append(Span(COMM, WAIT_RANK, t0, dur, {"before": c.op}))
            else:
                spans.append(Span(COMM, f"{c.op} {bytes_text(c.nbytes)} {backend}", t0, dur,
                                  {"op": c.op, "bytes": c.nbytes, "dtype": c.dtype, "algorithm": backend,
                                   **({"scope": c.scope} if c.scope != "world" else {}), "call": j}))
        by_step: dict[int, list[Span]] = {}
        for (i, *_), span in zip(table.tolist(), spans):
            by_step.setdefault(int(i), []).append(span)
        for i, own in sorted(by_step.items()):
            start = min(sp.start_s for sp in own)
            spans.append(Span(STEP, f"step {steps[i].step}", start, max(sp.end_s for sp in own) - start,
                              {"step": steps[i].step, "phase": steps[i].phase}))
        lanes.append(spans)
    return lanes


def _offset(table: torch.Tensor, reference: torch.Tensor) -> float:
    """How far a rank's clock reads ahead of the reference rank's: the median, over the calls
    both logged, of the difference of their starts (every rank leaves a call's aligning barrier
    together, to its exit skew; the median ignores a skewed exit, as the first call's set-up)."""
    own, ref = table[table[:, 1] == _CALL][:, 3], reference[reference[:, 1] == _CALL][:, 3]
    n = min(len(own), len(ref))
    return float((own[:n] - ref[:n]).median()) if n else 0.0


__all__ = ["STEP", "WAIT_RANK", "WAIT_WORKER", "gather_spans", "measured_run", "modelled_run", "run_tracks"]
