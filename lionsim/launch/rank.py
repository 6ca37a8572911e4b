"""One rank's life in a gloo/nccl bench: rendezvous, the same-configuration check, the bench
on this rank's workers, and (on rank 0) the outputs: every finished step on disk as it
finishes (lionsim.launch.journal), the whole run published at the end.

Failures are classified so the caller can answer with one line: bad input (a configuration
that differs across ranks, a port in use, an unreachable rendezvous, a backend this machine
lacks) is a LionsimError (exit 2); an error in the user's code (a workload, a plug-in) is a
UserCodeError naming the run and the step (exit 3, what finished published); a collective that
fails mid-run (a peer died, a timeout) or a SIGTERM from the launcher (torchrun stopping the job
after a peer died) is a RankFailure (exit 1) after every finished step is published, marked
failed: by rank 0 under torchrun, by the spawner (which outlives every rank, rank 0 included)
when lionsim started the ranks.
"""

from __future__ import annotations

import json
import signal
import threading
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Callable, Iterator

import torch
import torch.distributed as dist

from lionsim.backends import ProcessGroupComm
from lionsim.errors import LionsimError
from lionsim.group.env import Rendezvous
from lionsim.group.hosts import gather_hosts
from lionsim.group.join import check_backend, check_same, join, leave
from lionsim.group.quiet import library_words
from lionsim.launch.journal import StepJournal, finalize
from lionsim.measure.calibrate import calibrate
from lionsim.option_paths import absolute
from lionsim.plan import BenchPlan
from lionsim.ranges import refusal, span
from lionsim.reports.files import META_FILE, write_atomic
from lionsim.reports.publish import RunDir
from lionsim.reports.resuming import Unfinished
from lionsim.reports.writing import publish_result, stage_result
from lionsim.training.checkpoint import save_checkpoint
from lionsim.training.loop import Place, RunStopped
from lionsim.training.results import BenchResult, Results
from lionsim.training.resume import load_resume, resume_point
from lionsim.training.runner import Runner
from lionsim.training.stop import StopRequest, stop_at_step_boundary
from lionsim.transports import TRANSPORTS
from lionsim.usercode import UserCodeError


class RankFailure(RuntimeError):
    """A collective failed mid-run on this rank (a peer died or stopped answering)."""


def check_layout(plan: BenchPlan, ranks: int) -> int:
    """w = W / R, or a clear error."""
    workers = plan.workload.workers
    if ranks < 1 or ranks > workers:
        raise LionsimError(refusal("--ranks", ranks, span(1, f"--workers ({workers:,})", whole=True)))
    if workers % ranks:
        divisors = [r for r in range(1, workers + 1) if workers % r == 0][:8]
        raise LionsimError(f"--workers {workers} is not divisible by {ranks} ranks: each rank holds W/R workers; "
                           f"accepted: --workers a multiple of {ranks} ({ranks}, {ranks * 2}, {ranks * 3}, ...), or --ranks "
                           f"one of {', '.join(map(str, divisors))}")
    w = workers // ranks
    g = min(plan.network.network.workers_per_node, workers)
    hierarchical = [r.label for r in plan.specs if TRANSPORTS.get(r.transport).hierarchical]
    if hierarchical and g % w and w % g:  # lionsim.backends.dist_nodes: a rank's workers never straddle a node
        raise LionsimError(f"{hierarchical[0]} needs each rank's workers inside one node or whole nodes in one rank: "
                           f"{w} workers per rank, {g} per node; choose --ranks so that W / R divides {g} or is a multiple of it")
    return w


def check_same_config(plan: BenchPlan, device: torch.device, extra: str = "") -> None:
    """All ranks hold rank 0's configuration and versions (check_same), and continue from the
    same point (`extra`: lionsim.training.resume.resume_point); the interface is each host's own
    (lsim-a on one, lsim-b on the other), so it is left out."""
    check_same({**{k: v for k, v in plan.options().items() if k != "iface"}, "resume": extra}, device)


def run_rank(plan: BenchPlan, out: Path, rv: Rendezvous, *,
             progress: Callable[[str, int, float], None] | None = None,
             where: Callable[[str, int], None] | None = None, publish_failures: bool = True,
             keeping: Unfinished | None = None, stop: Callable[[], bool] | None = None,
             own_signals: bool = True) -> BenchResult | None:
    """Run this rank's share of the bench; rank 0 publishes and returns the result, others None.

    `progress(label, step, loss)` on rank 0 after every step; `where(label, step)` on every rank
    when a step starts (for a watchdog naming the step a rank stopped in). On a failure rank 0
    publishes what finished unless `publish_failures` is off (the spawner, which outlives every
    rank, does it then), where `keeping` says (--out, or its `.rerun/`: lionsim.reports.resuming;
    None: a new run into --out). SIGINT, or `stop()` (a parent's request), stops every rank at the
    same step boundary; each keeps its state for a resume (`keeping.resumed`:
    lionsim.training.resume), which every rank loads from --out (one host, or a shared file
    system). `plan` is this process's own: a spawned
    rank's is rebuilt from its record with its plug-ins loaded (lionsim.plan), a launched rank's
    is its own command's. Without `own_signals` (a rank lionsim spawned: the parent takes SIGINT and
    SIGTERM and relays them through `stop`) no signal handler is installed."""
    backend = plan.backend
    check_backend(backend.name, rv.world_size)
    w = check_layout(plan, rv.world_size)
    device = torch.device("cpu")
    if backend.name == "nccl":
        device = torch.device("cuda", rv.local_rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
    keeping = keeping or Unfinished(out, out)
    kept = load_resume(out, plan, rv.rank) if keeping.resumed else None
    join(backend.name, rv, backend.timeout, backend.iface)
    try:
        agree_on_resume(kept, device)
        check_same_config(plan, device, resume_point(kept))
        comm = ProcessGroupComm(None, local_workers=w, workers_per_node=plan.network.network.workers_per_node)
        runner = Runner(plan, Place(comm, device), resume=kept)
        hosts = gather_hosts(device, backend.iface, plan.training.threads)
        results = Results(runner, hosts=hosts)
        if backend.calibrate:
            fitted = calibrate(plan, runner.workload, runner.place, hosts)
            if fitted is not None:  # rank 0 books and writes: it prices with the fit
                network, errors = fitted
                results = Results(runner, network=network, calibration=errors, hosts=hosts)
        return _train(runner, results, keeping, rv.rank, progress, where, publish_failures, stop, own_signals)
    finally:
        leave()


def agree_on_resume(kept, device: torch.device) -> None:
    """Continue from the checkpoints only if every rank has its own; else the run restarts."""
    if kept is None:
        return
    have = torch.tensor([int(kept.checkpoint is not None)], dtype=torch.int64, device=device)
    every = [torch.empty_like(have) for _ in range(dist.get_world_size())]
    dist.all_gather(every, have)
    if kept.checkpoint is not None and not all(int(h) for h in every):
        kept.restarted, kept.checkpoint = kept.checkpoint.label, None


class Stopped(BaseException):
    """SIGTERM while training: a launcher (torchrun, after a peer died) stops this rank."""


@contextmanager
def sigterm_stops(armed: list[bool]) -> Iterator[None]:
    """While `armed[0]`, SIGTERM raises Stopped in the training loop (so rank 0 can publish);
    once disarmed (publishing), it is put off until the block ends. Main thread only."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending = []

    def handler(signum, frame) -> None:
        if armed[0]:
            raise Stopped()
        pending.append(signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    except BaseException:
        pending.clear()  # a failure on its way out: its line and exit code say enough
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
    if pending:  # the results are published: now the launcher's stop takes effect
        signal.raise_signal(signal.SIGTERM)


def _train(runner: Runner, results: Results, keeping: Unfinished, rank: int, progress, where, publish_failures: bool,
           stop: Callable[[], bool] | None, own_signals: bool = True) -> BenchResult | None:
    root, out = rank == 0, keeping.out
    target = RunDir(out) if root else None
    journal = StepJournal(target) if root else None
    at = ["", 0]  # the run and the step under way, for the failure's line

    def on_start(run) -> None:
        at[:] = [run.label, 1 + len(runner.records[-1].steps)]  # a resumed run starts past its first step
        if where is not None:
            where(*at)
        if not root:
            return
        kept = results.result(status="running") if runner.resume is not None else None
        if kept is not None and len(kept.steps):  # what a resume kept is staged before anything new
            stage_result(target, kept, plots=False)
        else:  # a run.json from the start (a resume that kept no step too): whoever publishes after a failure marks it
            meta = results.record("running", None)
            target.write(lambda d: [write_atomic(d / META_FILE, lambda f: f.write(json.dumps(meta, default=str)))])

    def on_step(run, step: int, loss: float) -> None:
        at[:] = [run.label, step + 1]
        if where is not None:
            where(run.label, step + 1)
        if root:  # the step's row on disk now (finalize books the journal's rows together)
            journal.add_step(results)
            if progress is not None:
                progress(run.label, step, loss)

    def after_run(done: Runner) -> None:
        if root:
            stage_result(target, results.result(status="running"), plots=False)
            journal.reset()

    runner.on_start = on_start
    if root:
        target.discard()  # a staging directory a killed job left behind
    armed = [True]
    request = StopRequest(also=stop)
    signals = (sigterm_stops(armed), stop_at_step_boundary(request, signals=(signal.SIGINT,))) if own_signals else ()
    with ExitStack() as stack:
        for context in signals:
            stack.enter_context(context)
        try:
            try:
                runner.run(on_step, after_run, stop=request)
            finally:
                armed[0] = False
        except RunStopped:  # every rank stopped at the same step: each keeps its state, then rank 0 the rest
            save_checkpoint(RunDir(out).stage, rank, runner.checkpoint)
            dist.barrier()  # every checkpoint is on disk before anyone publishes
            _failed(journal, keeping, publish_failures, "interrupted", f"interrupted ({request.name})")
            raise
        except KeyboardInterrupt:
            _failed(journal, keeping, publish_failures, "interrupted", "interrupted")
            raise
        except UserCodeError as e:  # the user's code raised on this rank (lionsim.usercode): its line, exit 3
            _failed(journal, keeping, publish_failures, "failed", str(e))
            raise
        except Stopped:
            if not root:  # rank 0 reports; the launcher names this rank
                raise SystemExit(1) from None
            line = (f"stopped by the launcher (SIGTERM) at step {at[1]} of {at[0]}" if at[0] else
                    "stopped by the launcher (SIGTERM) before the first step")
            _failed(journal, keeping, publish_failures, "failed", line)
            raise RankFailure(line) from None
        except RuntimeError as e:  # a collective failed: DistBackendError, gloo's connection errors, timeouts
            text = library_words(e)
            step = f" at step {at[1]} of {at[0]}" if at[0] else ""
            line = f"a collective failed{step} (a peer rank died or stopped answering): {text}"
            _failed(journal, keeping, publish_failures, "failed", line)
            raise RankFailure(line) from None
        # no rank tears the group down while a peer still uses it: a gloo rank that did so under
        # load was seen aborting (SIGABRT, "terminate called without an active exception")
        dist.barrier()
        if not root:
            return None
        journal.reset()
        result = results.result()
        result.meta["config"]["out"] = absolute(out)
        publish_result(target, result)
        return result


def _failed(journal: StepJournal | None, keeping: Unfinished, publish: bool, status: str, error: str) -> None:
    """Rank 0 after a failure: what finished published where `keeping` says (or left staged for the spawner)."""
    if journal is None:
        return
    journal.close()
    if publish:
        finalize(keeping.out, status, error, keeping.home, keeping.resumed)
