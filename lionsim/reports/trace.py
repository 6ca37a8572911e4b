"""trace.json: a run's step timeline in the Chrome trace-event format (Perfetto, chrome://tracing).

    {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}

One process (pid) per worker or rank of each run, named by "M" process_name events ("dlion-mavo@a2a-1bit
· worker 0") and ordered by process_sort_index; three threads (tid) per process, named by
thread_name events: "step" (one span per step), "compute" (forward/backward or compute,
encode, waits, decode, update) and "comm" (each collective, named by op, size and algorithm).
Every span is a complete event: ph "X", ts and dur in microseconds from the run's start (every
run starts at 0, so runs compare side by side), args what a click shows. Format:
https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from lionsim.steptime.lanes import COMM, COMPUTE, Span

THREADS = ("step", COMPUTE, COMM)
"""Lanes in the order drawn; a lane's tid is its index + 1."""
US = 1e6


@dataclass(frozen=True, slots=True)
class Track:
    """One process of the trace: a worker or rank of a run and its spans (seconds)."""

    name: str
    spans: list[Span]


def chrome_trace(tracks: list[Track], about: dict | None = None) -> dict:
    """The trace-event JSON object of `tracks` (module doc); `about` goes to otherData."""
    events: list[dict] = []
    for pid, track in enumerate(tracks, start=1):
        events.append({"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": track.name}})
        events.append({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0, "args": {"sort_index": pid}})
        for tid, lane in enumerate(THREADS, start=1):
            events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": lane}})
            events.append({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid, "args": {"sort_index": tid}})
        for span in sorted(track.spans, key=lambda s: (THREADS.index(s.lane), s.start_s)):
            events.append({"name": span.name, "cat": span.lane, "ph": "X", "pid": pid,
                           "tid": THREADS.index(span.lane) + 1, "ts": round(span.start_s * US, 3),
                           "dur": round(max(span.dur_s, 0.0) * US, 3), "args": span.args})
    return {"traceEvents": events, "displayTimeUnit": "ms", "otherData": dict(about or {})}


def trace_text(tracks: list[Track], about: dict | None = None) -> str:
    """trace.json's text."""
    return json.dumps(chrome_trace(tracks, about), separators=(",", ":"), allow_nan=False) + "\n"
