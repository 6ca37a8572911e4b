"""The run loop every backend shares: one strategy trained for `steps` steps by the workers
this process holds.

    sim         one process holds all W workers (w = W) and a SimComm
    gloo, nccl  each of R processes holds w = W / R consecutive workers and a ProcessGroupComm

Per step, top to bottom:

    batches of this process's workers -> gradients [w, P]                  (timed: compute)
       (each at its own replica for a strategy whose replicas differ between syncs: local
       SGD, DiLoCo; at the shared replica for every other strategy)
    -> every worker's loss and finiteness to every process (Comm.exchange_control, untimed):
       the mean loss is summed in worker order, so every backend reports the same number,
       and every process learns together whether any worker diverged; likewise which tensors
       no worker has a gradient for (autograd's None), which the step leaves alone
    -> lionsim.engine.train_step: encode, collectives, decode, update        (timed by section)
    -> evaluation on held-out data every eval_every steps (process 0, untimed)

A non-finite loss or gradient on any worker, or a mean loss above 100x the first step's
(lionsim.divergence), ends the run at that step: the step is recorded with its loss and
the run is marked diverged. A stop asked for on any process (`stop`: SIGINT
or SIGTERM, lionsim.training.stop) travels in the same exchange, so every process drops the
step under way together and raises RunStopped with its state after the last finished step
(lionsim.training.checkpoint); `resume` continues a run from such a state. The loop only measures; lionsim.training.booking
turns the records into the time columns.
"""

from __future__ import annotations

import time
from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Callable

import torch

from lionsim.backends import Comm
from lionsim.divergence import BLOWUP, blew_up
from lionsim.engine import Sent, train_step
from lionsim.packing import reference_paths
from lionsim.runs import RunSpec
from lionsim.simulator import GRADIENT_METHODS, Replicas, gradient_method
from lionsim.strategies import StrategyConfig, flatten_parameters, frozen_positions
from lionsim.steptime.timeline import tensor_specs
from lionsim.strategies.core.base import Hyper
from lionsim.strategies.core.unacted import first_past_warmup, unacted_note
from lionsim.timing import Clock
from lionsim.training.checkpoint import RunCheckpoint
from lionsim.training.counting import KernelCounter
from lionsim.transports import TRANSPORTS, PayloadSpec, Transport
from lionsim.transports.checks import StepChecks
from lionsim.usercode import is_users, user_code
from lionsim.workloads import Workload
from lionsim.workloads.plugin import is_plugin

SECTIONS = ("compute", "encode", "decode", "update")
"""Measured parts of a step (collectives are measured per call by a real Comm, or priced)."""
TRACED = (*SECTIONS, "control", "evaluate")
"""Sections the measured trace draws: the booked ones, the untimed exchange of losses and flags
(where a rank waits for a slower one), evaluation (process 0)."""


@dataclass(frozen=True, slots=True)
class Place:
    """Where this process stands in a run: its workers, its communicator, its device."""

    comm: Comm
    device: torch.device = torch.device("cpu")

    @property
    def workers(self) -> range:
        """Global indices of the workers this process holds."""
        return range(self.comm.first_worker, self.comm.first_worker + self.comm.local_workers)

    @property
    def is_root(self) -> bool:
        """Process 0: it evaluates and writes."""
        return self.comm.first_worker == 0


@dataclass(slots=True)
class StepRecord:
    """What one step did and what it cost, as this process measured it."""

    step: int
    loss: float
    """Mean training loss over all W workers."""
    sent: Sent | None
    """What went on the wire (None on a diverged step, which sends nothing)."""
    seconds: dict[str, float]
    """Measured seconds of this process per section (SECTIONS), for all its w workers."""
    collectives: list = field(default_factory=list)
    """Real collectives as they ran (MeasuredCall; empty on the simulator)."""
    evaluation: dict[str, float] = field(default_factory=dict)
    """eval_loss / eval_acc on steps that evaluated (process 0)."""
    phase: str = "steady"
    """The strategy's phase this step (Strategy.phase: a warm-up, a local step, a sync)."""
    spans: list = field(default_factory=list)
    """This process's measured sections as they ran: (section, start, end), perf_counter seconds
    (lionsim.timing.Clock.spans; the measured timeline of --trace)."""


@dataclass(slots=True)
class RunRecord:
    """One strategy's run on this process."""

    run: RunSpec
    hyper: Hyper
    transport: Transport
    spec: PayloadSpec
    """What the strategy sends at steady state (the step's own spec is in its Sent)."""
    params: int
    steps: list[StepRecord] = field(default_factory=list)
    diverged_at: int | None = None
    """The step at which the run diverged (lionsim.divergence: a worker's loss or gradient
    went non-finite, or the loss blew up)."""
    diverged_workers: list[int] = field(default_factory=list)
    restored: int = 0
    """Leading steps restored from an interrupted session's checkpoint (--resume)."""
    rank_spans: list = field(default_factory=list)
    """--trace on gloo/nccl: every rank's measured spans (lionsim.training.spans.gather_spans)."""
    tensors: tuple[PayloadSpec, ...] = ()
    """`spec` per parameter tensor, in model order (lionsim.steptime.timeline.tensor_specs): what
    `--overlap tensors` exchanges one by one."""
    shapes: tuple[tuple[int, ...], ...] = ()
    """The model's parameter tensors' shapes, in model order (a step whose spec differs from
    `spec`, a warm-up, is split over them by their shares)."""
    built_note: str = ""
    """Where the strategy was built otherwise than its options read (Strategy.built_note): one
    of the notes under the run's table."""
    scale_note: str = ""
    """Where a default tuned for lionsim's short runs is not what its authors use at scale
    (Strategy.scale_note: a local-step method's H): one of the notes under the run's table."""
    option_notes: tuple[str, ...] = ()
    """Where an option the run was given did not act as its value reads: capped (Strategy.capped_note)
    or never reached past the warm-up (lionsim.strategies.core.unacted); more notes under its table."""
    warmup_until: int | None = None
    """The first step past the strategy's warm-up where every step of the run fell before it
    (lionsim.strategies.core.unacted): the run never trained as its method; None otherwise."""
    kernels: dict[str, Counter] = field(default_factory=dict)
    """Kernels launched per section, counted on the first step of each phase (Strategy.phase:
    a warm-up, a local step, a sync each launch their own) when `count_kernels` is on; a step
    whose vote carried abstentions under its own key (kernel_kind), the phase's count then
    taken on its next step (up to COUNT_TRIES steps)."""


StepFn = Callable[[RunSpec, int, float], None]
DelayFn = Callable[[int, float], float]
"""delay(step, seconds this process's gradients took) -> seconds to sleep before the step goes on."""


COUNT_TRIES = 3
"""Steps of a phase counted at most while looking for one without abstentions (the phase's count)."""
ABSTAINED = "+abstained"


def kernel_kind(phase: str, sent: Sent | None) -> str:
    """The key of RunRecord.kernels a step is booked with: its phase, or phase + ABSTAINED when
    some worker abstained in its vote (the transport then packs and sends a second plane, so
    encode and decode launch more kernels; such a step must not set every step's count)."""
    spec = None if sent is None else sent.spec
    return phase + ABSTAINED if spec is not None and spec.abstain else phase


class RunStopped(KeyboardInterrupt):
    """A stop was asked for: the run ended at a step boundary; `checkpoint` continues it."""

    def __init__(self, checkpoint: RunCheckpoint) -> None:
        super().__init__(f"stopped after step {checkpoint.step} of {checkpoint.label}")
        self.checkpoint = checkpoint


def train_run(run: RunSpec, *, workload: Workload, initial: dict, place: Place, strategy_cfg: StrategyConfig,
              steps: int, eval_every: int, count_kernels: bool = False, on_step: StepFn | None = None,
              on_record: Callable[[RunRecord], None] | None = None, delay: DelayFn | None = None,
              stop: Callable[[], bool] | None = None, resume: RunCheckpoint | None = None) -> RunRecord:
    """Train `run` from the `initial` state (or from `resume`'s step) up to step `steps` with
    this process's workers.

    `on_record` receives the record before the first step, so a caller holds it (and every
    step finished so far) even if a step fails. `delay` makes a real process a straggler: it
    sleeps inside the step's compute (--compute-spread on gloo/nccl). `stop()` true on any
    process ends the run at the next step boundary with RunStopped."""
    comm = place.comm
    torch.manual_seed(strategy_cfg.seed)  # strategies draw from their own generators; this pins any other use
    # every run starts from the same model (batches are stateless), a resumed one from its checkpoint
    workload.model.load_state_dict(initial if resume is None else resume.model)
    params, layout = flatten_parameters(workload.model)
    strategy = run.strategy_class(strategy_cfg, layout, comm)
    strategy.start(params)
    transport = TRANSPORTS.get(run.transport)()
    transport.check(strategy.payload_spec(), comm.world_size)
    shapes = tuple(tuple(shape) for shape in layout.shapes) if layout.shapes else tuple((n,) for n in layout.numels)
    record = RunRecord(run=run, hyper=strategy.hyper, transport=transport, spec=strategy.payload_spec(),
                       params=layout.numel, shapes=shapes, built_note=strategy.built_note(),
                       scale_note=strategy.scale_note(),
                       option_notes=tuple(note for note in (strategy.capped_note(), unacted_note(strategy, steps))
                                          if note),
                       warmup_until=first_past_warmup(strategy, steps),
                       tensors=tuple(tensor_specs(strategy.payload_spec(), shapes, strategy)))
    if resume is not None:
        resume.restore(strategy, record)
        resume.restore_rng(place.device)
    if on_record is not None:
        on_record(record)
    grads = torch.zeros(comm.local_workers, layout.numel, device=place.device)  # [w, P]
    used = torch.zeros(layout.segments, dtype=torch.bool)  # [T]: tensors some worker has a gradient for
    gradients = GRADIENT_METHODS[gradient_method(workload.gradients, comm.local_workers)]
    clock = Clock(place.device)  # on CUDA its sections wait for their kernels
    tries: dict[str, int] = {}  # steps of each phase counted so far
    checks = plugin_checks(strategy, transport, place)
    # a user's workload: its model, loss and metric are the user's code (lionsim.usercode)
    users = (lambda: user_code("the workload")) if is_plugin(type(workload)) else nullcontext
    for step in range(1 if resume is None else resume.step + 1, steps + 1):
        rng = _rng_state(place.device)  # what a checkpoint after the previous step restores
        batches = workload.batches(step - 1, place.workers, place.device)
        replicas = None if strategy.replicas is None else Replicas(params, strategy.replicas)
        used.zero_()
        with clock.section("compute"):
            started = time.perf_counter()
            with users():
                losses = gradients(workload.model, workload.loss, batches, grads, replicas, used)
            if delay is not None:
                time.sleep(delay(step, time.perf_counter() - started))
        with clock.section("control"):  # untimed for the booking; the trace shows a rank waiting here
            status = worker_status(comm, losses, grads, stop)  # [W, 3]: loss, finite, stop asked
        if bool(status[:, 2].any()):  # every process sees the same flags: all stop here
            comm.take_log()
            clock.take_spans()
            raise RunStopped(RunCheckpoint.take(run.label, step - 1, workload.model, strategy, rng[0], record,
                                                cuda_rng=rng[1]))
        # a tensor no worker has a gradient for is left alone, as torch.optim skips grad None
        with clock.section("control"):
            frozen = frozen_positions(layout, comm.max_over_ranks(used.to(torch.uint8)).bool())
        loss = float(status[:, 0].sum() / comm.world_size)
        first = record.steps[0].loss if record.steps else loss  # a resumed run's first is restored
        if not bool(status[:, 1].all()) or blew_up(loss, first):
            record.diverged_at = step  # every process sees the same status: all stop here
            bad = status[:, 1] == 0
            if first > 0:  # the workers whose own loss blew up (the mean's rule, lionsim.divergence)
                bad |= status[:, 0] > BLOWUP * first
            record.diverged_workers = [int(i) for i in bad.nonzero().flatten()]
            record.steps.append(StepRecord(step, loss, None, clock.take(), comm.take_log(), spans=clock.take_spans()))
            break
        phase = strategy.phase(step)
        counts = count_kernels and phase not in record.kernels and tries.get(phase, 0) < COUNT_TRIES
        counting = KernelCounter(clock.counted) if counts else nullcontext()
        with counting, reference_paths() if counts else nullcontext():  # a device runs the plain paths
            sent = train_step(strategy, transport, comm, grads, params, step, clock, frozen, checks)
        if counts:  # an abstaining step is its own kind: counted on, the phase's own count waits for a plain step
            tries[phase] = tries.get(phase, 0) + 1
            record.kernels.setdefault(kernel_kind(phase, sent), counting.kernels)
            if tries[phase] == COUNT_TRIES:
                record.kernels.setdefault(phase, counting.kernels)
        done = StepRecord(step, loss, sent, clock.take(), comm.take_log(), phase=phase, spans=clock.take_spans())
        if place.is_root and (step % eval_every == 0 or step == steps):
            with clock.section("evaluate"), users():
                done.evaluation = workload.evaluate(workload.model)
            clock.take()  # evaluation is no part of the step's booked time
            done.spans += clock.take_spans()
        record.steps.append(done)
        if on_step is not None:
            on_step(run, step, loss)
    return record


def plugin_checks(strategy, transport: Transport, place: Place) -> StepChecks | None:
    """The checks of what a plug-in strategy's encode and a plug-in transport's aggregate return
    (None: both are lionsim's own, which their tests check instead)."""
    mine, theirs = is_users(type(strategy)), is_users(type(transport))
    if not (mine or theirs):
        return None
    return StepChecks(strategy=strategy.name if mine else None, transport=transport.name if theirs else None,
                      carries=tuple(transport.carries), local_workers=place.comm.local_workers, device=place.device)


def worker_status(comm: Comm, losses: list[float], grads: torch.Tensor,
                  stop: Callable[[], bool] | None = None) -> torch.Tensor:
    """[W, 3] float64 on every process: each worker's loss, whether it and its gradient are
    finite, and whether its process was asked to stop."""
    local = torch.tensor(losses, dtype=torch.float64, device=grads.device)
    finite = torch.isfinite(local) & torch.isfinite(grads).all(dim=1)
    asked = torch.full_like(local, float(stop is not None and stop()))
    return comm.exchange_control(torch.stack([local, finite.to(torch.float64), asked], dim=1)).cpu()


def _rng_state(device: torch.device) -> tuple[torch.Tensor, torch.Tensor | None]:
    """torch's global random state (CPU, and the device's on CUDA)."""
    return torch.get_rng_state(), torch.cuda.get_rng_state(device) if device.type == "cuda" else None
