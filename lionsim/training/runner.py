"""Running a bench's runs on this process: the workload built once, the compute figure, then
every run from the same initial model on the same batches (same seed), into RunRecords.

The same code runs on every backend: on `sim` this process holds all W workers; on gloo/nccl
each of R processes holds W/R of them (lionsim.launch starts them, or torchrun does). The
runner only trains and measures; lionsim.training.results turns its records into steps.csv,
summary.csv, the trace and run.json.
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from typing import Callable

from lionsim.backends import SimComm
from lionsim.plan import BenchPlan
from lionsim.runs import RunSpec
from lionsim.training.booking import slowest_process
from lionsim.training.checkpoint import RunCheckpoint
from lionsim.training.compute_figure import ComputeFigure, count_compute, measure_compute
from lionsim.training.loop import Place, RunRecord, RunStopped, StepFn, train_run
from lionsim.training.resume import Resume
from lionsim.training.spans import gather_spans
from lionsim.training.threads import torch_threads
from lionsim.transports import TRANSPORTS
from lionsim.usercode import UserCodeError, blame, file_of, is_users, user_code
from lionsim.workloads import build_workload
from lionsim.workloads.plugin import is_plugin


class Runner:
    """One bench's training on this process.

    `records` grows as runs go, so a bench that fails part way can still book what finished. A
    run stopped at a step boundary leaves its state in `checkpoint`; `resume` (lionsim.training.resume)
    continues an interrupted bench: its finished runs are kept as booked, the run under way
    continues from its checkpoint."""

    def __init__(self, plan: BenchPlan, place: Place | None = None, resume: Resume | None = None) -> None:
        self.plan = plan
        self.resume = resume
        network = plan.network.network
        # whole nodes (or one): before any training, not when booking; the count is --workers' (bench's,
        # a sweep cell's, a resumed run's), which BenchConfig checked already
        network.nodes(plan.workload.workers)
        self.place = place or Place(SimComm(plan.workload.workers, network.workers_per_node))
        with torch_threads(plan.training.threads):
            self.workload = build_workload(plan.workload)  # fails on bad data before any training
        self.workload.model.to(self.place.device)
        self.initial = {k: v.detach().clone() for k, v in self.workload.model.state_dict().items()}
        self.compute = ComputeFigure()
        """The one forward + backward figure every step is booked with (lionsim.training.compute_figure)."""
        self.records: list[RunRecord] = []
        self.checkpoint: RunCheckpoint | None = None
        """The state of the run a stop ended (lionsim.training.checkpoint), with the compute figure."""
        self.started = time.time()
        self.on_start: Callable[[RunSpec], None] | None = None
        """Called as each run starts (a watchdog's note of where this process is)."""

    def _started(self, record: RunRecord) -> None:
        self.records.append(record)
        if self.on_start is not None:
            self.on_start(record.run)

    def run(self, progress: StepFn | None = None, after_run: Callable[[Runner], None] | None = None,
            stop: Callable[[], bool] | None = None) -> list[RunRecord]:
        """Train every run (but those a resume kept) and return the records; `after_run(self)`
        after each (to write what finished). `stop()` true ends the run under way at a step
        boundary: RunStopped, with `self.checkpoint` set. An error raised by the user's code (a
        workload, a plug-in: lionsim.usercode) is a UserCodeError naming the run and the step;
        `records` holds every run that finished before it."""
        plan = self.plan
        resumed = self.resume.checkpoint if self.resume is not None else None
        kept = self.resume.compute() if self.resume is not None else None
        with torch_threads(plan.training.threads):
            if kept is not None:
                self.compute = kept  # the figure every finished step was booked with
            else:
                users = user_code("the workload") if is_plugin(type(self.workload)) else nullcontext()
                try:
                    with users:
                        self.compute = (measure_compute(self.workload, self.place) if plan.compute.device is None
                                        else count_compute(self.workload, self.place))
                except Exception as e:
                    _raise_if_users(e, "measuring the workload's forward and backward, before the first run")
                    raise
            for planned in plan.runs:
                run = planned.run
                if self.resume is not None and run.label in self.resume.finished:
                    continue
                own = resumed if resumed is not None and resumed.label == run.label else None
                try:
                    record = train_run(run, workload=self.workload, initial=self.initial, place=self.place,
                                       strategy_cfg=planned.strategy, steps=plan.training.steps,
                                       eval_every=plan.training.eval_every,
                                       count_kernels=plan.compute.device is not None, on_step=progress,
                                       on_record=self._started, delay=self._straggler(), stop=stop, resume=own)
                except RunStopped as e:
                    e.checkpoint.compute = self.compute
                    self.checkpoint = e.checkpoint
                    raise
                except Exception as e:
                    _raise_if_users(e, f"{run.label} at step {self._step_under_way(run.label)}", _names(run))
                    raise
                if plan.training.trace and plan.backend.name != "sim":
                    gather_spans(record, self.place.comm)  # every rank's own times, before billing
                slowest_process(record, self.place.comm)
                if after_run is not None:
                    after_run(self)
        return self.records

    def _step_under_way(self, label: str) -> int:
        """The step a run was in when it failed (1 before its record existed)."""
        record = self.records[-1] if self.records and self.records[-1].run.label == label else None
        return 1 if record is None else len(record.steps) + 1

    def _straggler(self) -> Callable[[int, float], float] | None:
        """--compute-spread on a real backend with measured compute: this process's sleeps."""
        comm, spread = self.place.comm, self.plan.compute.spread
        if spread is None or comm.ranks == 1 or self.plan.compute.device is not None:
            return None
        return spread.delay(comm.first_worker, comm.local_workers, comm.world_size)

    def state_to_keep(self) -> RunCheckpoint | None:
        """After a stop: the state a --resume continues from (the one this session resumed from,
        if it stopped again before training on)."""
        if self.checkpoint is not None:
            return self.checkpoint
        old = self.resume.checkpoint if self.resume is not None else None
        record = next((r for r in self.records if old is not None and r.run.label == old.label), None)
        return old if old is not None and (record is None or len(record.steps) == old.step) else None


def _names(run: RunSpec) -> dict[str, str]:
    """A plug-in's file -> what it holds, to name the culprit of an error raised there."""
    named = {"the strategy": run.strategy_class, "the transport": TRANSPORTS.get(run.transport)}
    files = {file_of(cls): f"{what} {cls.name}" for what, cls in named.items() if is_users(cls)}
    return {path: what for path, what in files.items() if path is not None}


def _raise_if_users(error: Exception, at: str, names: dict[str, str] | None = None) -> None:
    """A UserCodeError saying `at` (the run and the step) and what raised what, if `error` is the
    user's code's (lionsim.usercode.blame); else nothing: the caller re-raises it as it is."""
    line = blame(error, names)
    if line is not None:
        raise UserCodeError(f"{at}: {line}") from error
