"""Start R ranks on this machine, collect rank 0's timings, and stop every rank whatever happens.

The parent checks the backend and the configuration, picks a free loopback port, starts the
ranks (multiprocessing's spawn: a fresh interpreter each) and waits for rank 0's results.
A rank that exits with an error, dies, or sends nothing for the timeout (after a startup
allowance for importing torch) ends the sweep with one line; no rank is left running.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import time

from lionsim.errors import LionsimError
from lionsim.measure.config import MeasureConfig
from lionsim.measure.table import Point

STARTUP_S = 120.0
"""Seconds the first result may take beyond the timeout (interpreters importing torch on a busy machine)."""


class MeasureFailure(RuntimeError):
    """A rank died or failed mid-sweep (exit 1), as opposed to bad input (LionsimError, exit 2)."""


def measure(cfg: MeasureConfig) -> tuple[list[Point], list[dict]]:
    """Run the sweep of `cfg` on cfg.ranks fresh processes: rank 0's points, in sweep order, and
    where every rank ran (lionsim.group.hosts)."""
    from lionsim.group.env import free_port
    from lionsim.group.join import check_backend
    from lionsim.measure.rank import rank_main

    cfg.validate()
    check_backend(cfg.backend, cfg.ranks)
    ctx = mp.get_context("spawn")
    messages = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=rank_main, args=(r, cfg, port, messages), daemon=True, name=f"lionsim-comm{r}")
             for r in range(cfg.ranks)]
    for p in procs:
        p.start()
    try:
        return _collect(procs, messages, cfg)
    finally:
        _stop(procs)


def _collect(procs, messages, cfg: MeasureConfig) -> tuple[list[Point], list[dict]]:
    points: list[Point] = []
    hosts: list[dict] = []
    done: set[int] = set()
    deadline = time.monotonic() + STARTUP_S + cfg.timeout_s
    while len(done) < len(procs):
        try:
            msg = messages.get(timeout=0.2)
        except queue.Empty:
            msg = None
        if msg is not None:
            deadline = time.monotonic() + cfg.timeout_s
            kind, rank = msg[0], msg[1]
            if kind == "point":
                points.append(msg[2])
            elif kind == "hosts":
                hosts = msg[2]
            elif kind == "done":
                done.add(rank)
            elif kind == "error":
                if msg[2] == 2:
                    raise LionsimError(msg[3])
                raise MeasureFailure(f"rank {rank} failed: {msg[3]}")
            continue
        for rank, p in enumerate(procs):
            if p.exitcode is not None and p.exitcode != 0 and rank not in done:
                time.sleep(0.5)  # its last words may still be in the pipe
                if not messages.empty():
                    break
                raise MeasureFailure(f"rank {rank} died (exit code {p.exitcode}) after {len(points)} measured sizes")
        if time.monotonic() > deadline:
            raise MeasureFailure(f"no result for {cfg.timeout_s:g} s after {len(points)} measured sizes: a rank hung")
    return points, hosts


def _stop(procs, grace_s: float = 5.0) -> None:
    """Join the ranks; kill whatever has not ended within `grace_s`."""
    end = time.monotonic() + grace_s
    for p in procs:
        p.join(max(0.0, end - time.monotonic()))
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join(5)
