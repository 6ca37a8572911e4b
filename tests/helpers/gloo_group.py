"""Real gloo ranks kept for the whole test session: R processes joined once, then given work.

Starting a rank costs a new interpreter and torch's import (seconds, and far more on two busy
cores), while the work most gloo tests give it takes well under a second; so each world size
gets one group per test process (tests/conftest.py's `gloo_group` fixture), and every test
sends its rank function to it. The ranks are forked from a forkserver that imported torch (and
torch._dynamo, which an optimizer's first construction imports) once for all world sizes, where
the platform has one (as lionsim's sweep workers are). The function runs on every rank at once
with the default process group initialised (gloo, this world, one torch thread), and returns
what the rank found: the test compares it with the simulator. A rank function must leave the
group as it found it (subgroups it makes stay, harmlessly); one that fails or hangs breaks the
group, which is then stopped and started again for the next test.
"""

from __future__ import annotations

import datetime
import multiprocessing
import os
import queue
import time
import traceback
from typing import Callable

from lionsim.launch import free_port

PRELOAD = ["torch", "torch.distributed", "torch._dynamo", "lionsim.backends", "lionsim.optim", "lionsim.strategies",
           "tests.helpers.gloo_group"]
"""What the forkserver imports once for every rank of every group."""
TIMEOUT_S = 300.0
"""How long run() waits for every rank (the slowest CI-tier rank function takes seconds)."""


def on_own_rows(rank: int, fn: Callable, local: int):
    """A rank function: fn(comm, rows) with this rank's comm of `local` workers (unaligned) and the
    rows its workers hold of the world's [R x local, ...] gradients."""
    from lionsim.backends import ProcessGroupComm

    return fn(ProcessGroupComm(local_workers=local, align=False), range(rank * local, (rank + 1) * local))


class GlooGroup:
    """`world` gloo ranks on this machine, started once and reused."""

    def __init__(self, world: int) -> None:
        context = _context()
        self.world = world
        self.tasks = [context.Queue() for _ in range(world)]
        self.results = context.Queue()
        port = free_port()
        self.ranks = [context.Process(target=_serve, args=(rank, world, port, self.tasks[rank], self.results),
                                      daemon=True, name=f"gloo-rank-{rank}-of-{world}") for rank in range(world)]
        for process in self.ranks:
            process.start()
        self.broken = False

    def run(self, fn: Callable, *args) -> list:
        """fn(rank, *args) on every rank at once; each rank's return value, in rank order. `fn` is a
        module-level function (it travels by name), its arguments and results picklable."""
        if self.broken:
            raise RuntimeError("this gloo group failed earlier")
        for tasks in self.tasks:
            tasks.put((fn, args))
        got: dict[int, object] = {}
        failures: list[str] = []
        deadline = time.monotonic() + TIMEOUT_S
        while len(got) + len(failures) < self.world:
            try:
                rank, ok, value = self.results.get(timeout=max(1.0, deadline - time.monotonic()))
            except queue.Empty:
                failures.append(f"no answer from {self.world - len(got) - len(failures)} rank(s) in {TIMEOUT_S:.0f} s")
                break
            if ok:
                got[rank] = value
            else:
                failures.append(f"rank {rank}:\n{value}")
        if failures:
            self.close()
            raise AssertionError(f"{fn.__name__} on {self.world} gloo ranks failed:\n" + "\n".join(failures))
        return [got[rank] for rank in range(self.world)]

    def close(self) -> None:
        """Stop the ranks (politely, then for good)."""
        self.stop()
        self.join()

    def stop(self) -> None:
        """Ask every rank to leave the group and exit."""
        self.broken = True
        for tasks in self.tasks:
            tasks.put(None)

    def join(self, timeout_s: float = 10.0) -> None:
        """Wait for the ranks to exit; kill those still running after `timeout_s`."""
        for process in self.ranks:
            process.join(timeout=timeout_s)
            if process.is_alive():
                process.kill()
                process.join()


def _context():
    """forkserver where there is one (its imports done once, for every rank), else spawn."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)  # read when the server starts (once a process)
    return context


def _serve(rank: int, world: int, port: int, tasks, results) -> None:
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)  # the ranks share the machine's cores
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=60))
    while (task := tasks.get()) is not None:
        fn, args = task
        try:
            results.put((rank, True, fn(rank, *args)))
        except BaseException:  # noqa: BLE001 (reported to the test, which fails with it)
            results.put((rank, False, traceback.format_exc()))
    dist.barrier()  # gloo: no rank tears the group down while a peer still uses it
    dist.destroy_process_group()
    os._exit(0)  # everything is sent: skip the interpreter's teardown of torch (a second a rank)
