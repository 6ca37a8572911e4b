"""A bench's records turned into what its files hold: steps.csv's rows (booked by
lionsim.training.booking), summary.csv (under the plan's summary rule), calls.csv on a real
backend, trace.json and run.json (lionsim.training.record).

Results reads the runner's records and measurements and a plan; it never trains. The plan
may be the runner's own or the same bench priced on another network (a sweep books one
training per network: BenchPlan.with_network), and `network` the profile a calibration fitted
on the run's own group (lionsim.measure.calibrate).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import pandas as pd

from lionsim.network import Network
from lionsim.network.profile import host_slow_line
from lionsim.plan import BenchPlan
from lionsim.reports.columns import EXTRA_STEP_COLUMNS, STEP_COLUMNS
from lionsim.reports.formats import csv_frame
from lionsim.reports.summary import leave_out_unchecked_error, summarize
from lionsim.training.booking import CALL_COLUMNS, Booking, book_run, call_rows, step_kinds
from lionsim.training.loop import RunRecord
from lionsim.training.record import bench_record, priced_by, run_entry, timing_notes
from lionsim.training.runner import Runner
from lionsim.transports.abstain import abstention_note
from lionsim.transports.base import footnote_on, plan_on

BOOKED_COLUMNS = STEP_COLUMNS + EXTRA_STEP_COLUMNS
"""steps.csv's columns, in order."""


def issued_ops(record: RunRecord, workers: int, workers_per_node: int) -> set[str]:
    """The collective ops a run issued: a real backend's calls as they ran, on sim each step's
    payload as its transport plans it on the network's nodes, and the strategy's own calls."""
    ops = {c.op for s in record.steps for c in s.collectives}
    sent = [s.sent for s in record.steps if s.sent is not None]
    for spec in {x.spec for x in sent if x.spec is not None}:
        ops |= {c.op for c in plan_on(record.transport, spec, workers, workers_per_node)} if workers > 1 else set()
    return ops | {c.op for x in sent for c in x.extra}


POOR_FIT = 0.25
"""The median |error| on its own measured calls past which a calibration is said to model this link
poorly (README's calibrated runs: within 8%)."""


def calibration_fit_line(calibration: pd.DataFrame | None) -> str | None:
    """The line where --calibrate's fit misses its own measured calls by a median |error| over
    POOR_FIT (calibration.csv's error: a shaped link's burst, a busy host's slow path): its model
    errors beside the steps rest on it. None where it fits, or there was none."""
    if calibration is None or "error" not in calibration.columns or not len(calibration):
        return None
    median = float(calibration["error"].abs().median())
    if not median > POOR_FIT:
        return None
    return (f"this run's calibration misses its own {len(calibration)} measured calls by a median |error| of "
            f"{median:.0%} (calibration.csv): its model of this link is poor here, and so are the model errors "
            "beside the steps; a profile fitted by lionsim comm --fit over more sizes is the better model")


@dataclass(slots=True)
class BenchResult:
    steps: pd.DataFrame
    summary: pd.DataFrame
    meta: dict
    calls: pd.DataFrame | None = None
    """calls.csv on a real backend (lionsim.training.booking.CALL_COLUMNS); None on sim."""
    files: dict[str, str] = field(default_factory=dict)
    """Further files of the run, name -> text (a calibrated run's calibration.toml and .csv)."""

    @property
    def diverged(self) -> list[str]:
        """Labels of the runs that diverged."""
        hit = self.summary[self.summary["diverged_at_step"].notna()]
        return [f"{s}@{t} at step {int(at)}" for s, t, at in zip(hit["strategy"], hit["transport"], hit["diverged_at_step"])]


class Results:
    """The runner's records booked under `plan` (default: the runner's) on `network` (default:
    the plan's); `calibration` the fit's error on every measured size and `hosts` where a real
    group's ranks run (lionsim.group.hosts), for run.json and the files beside it."""

    def __init__(self, runner: Runner, plan: BenchPlan | None = None, network: Network | None = None,
                 calibration: pd.DataFrame | None = None, hosts: list[dict] | None = None) -> None:
        self.runner = runner
        self.plan = plan or runner.plan
        self.network = network or self.plan.network.network
        self.calibration = calibration
        self.hosts = hosts or []

    def booking(self) -> Booking:
        comm, plan = self.runner.place.comm, self.plan
        return Booking(network=self.network, overlap=plan.overlap, compute=self.runner.compute,
                       device=plan.compute.device, warmup=plan.rule.warmup_steps or 0, backend=plan.backend.name,
                       workers=comm.world_size, ranks=comm.ranks, spread=plan.compute.spread)

    def result(self, status: str = "complete", error: str | None = None) -> BenchResult:
        """Every finished (or partly finished) run booked: steps, summary, run.json record."""
        resume = self.runner.resume
        kept = resume.finished if resume is not None else {}
        trained = {r.run.label: r for r in self.runner.records if r.steps}
        frames = [kept[label][BOOKED_COLUMNS] if label in kept else self.frame(trained[label])
                  for label in self.plan.labels if label in kept or label in trained]
        steps = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=BOOKED_COLUMNS)
        summary = summarize(steps, self.plan.rule) if frames else pd.DataFrame()
        calls = None
        if self.runner.place.comm.ranks > 1:
            booking = self.booking()
            kept_calls = resume.calls if resume is not None else {}
            measured = {r.run.label: pd.DataFrame(call_rows(r, booking), columns=CALL_COLUMNS)
                        for r in self.runner.records if r.steps}
            parts = [kept_calls[label] if label in kept_calls else measured[label]
                     for label in self.plan.labels if label in kept_calls or label in measured]
            calls = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=CALL_COLUMNS)
            if len(summary):
                summary["comm_priced_by"] = self.priced_by
        files = {}
        if self.calibration is not None:
            from lionsim.network.fit import link_source
            from lionsim.network.toml_out import profile_toml
            from lionsim.network.unmeasured import header_line

            # the header says which of the link's figures were measured and which are the prior's
            header = f"{self.network.description}\nlink: {link_source(self.network)}"
            if stand_ins := header_line(self.network):  # ops no run issued: priced, but not measured
                header += f"\n{stand_ins}"
            files = {"calibration.toml": profile_toml(self.network, header),
                     "calibration.csv": csv_frame(self.calibration).to_csv(index=False)}
        record = self.record(status, error)
        if self.plan.training.trace:
            files["trace.json"] = self.trace(record)
        summary = leave_out_unchecked_error(summary, record)  # a default --network priced no link measured
        workers = self.runner.place.comm.world_size
        per_node = self.network.workers_per_node
        notes = list(dict.fromkeys(note for r in self.runner.records
                                   for note in (footnote_on(r.transport, r.spec, workers, per_node), r.built_note,
                                                r.scale_note,
                                                *r.option_notes,
                                                abstention_note(r.run.label, r.transport,
                                                                [s.sent.spec for s in r.steps if s.sent is not None],
                                                                r.params, workers, per_node))
                                   if note))
        if gaps := self.unmeasured_line():
            notes.append(gaps)
        if (poor := calibration_fit_line(self.calibration)) is not None:
            notes.append(poor)
        if host := host_slow_line(self.plan.network.spec, self.plan.backend.name):
            notes.append(host)  # the profile's shared-core slow mode, left out of the simulated hosts
        if notes:  # the table's footer, continued (Transport.footnote: a widened container, hier:'s bits)
            record["notes"] = notes
        if options := list(dict.fromkeys(note for r in self.runner.records for note in r.option_notes if note)):
            record["option_notes"] = options  # of those, the options' (capped, never acted): a sweep's caption says them
        return BenchResult(steps, summary, record, calls, files)

    def unmeasured_line(self) -> str:
        """The line naming the ops the runs issued that the profile's library never measured
        (lionsim.network.unmeasured), "" where none: their model columns rest on a stand-in."""
        from lionsim.network.unmeasured import line, unmeasured

        if not unmeasured(self.network):
            return ""
        calibrated = self.calibration is not None
        source = "this run's calibration" if calibrated else os.path.basename(self.plan.network.spec)
        per_node = self.network.workers_per_node
        return line(self.network, source, {r.run.label: issued_ops(r, self.runner.place.comm.world_size, per_node)
                                           for r in self.runner.records if r.steps}, calibrated=calibrated)

    def rows(self, record: RunRecord) -> list[dict]:
        """The record's booked steps, one dict each: steps.csv's columns but sim_time_s (a
        running sum over the run, which a caller booking one step at a time adds later)."""
        plan, comm = self.plan, self.runner.place.comm
        times = book_run(record, self.booking(), comm.local_workers)
        rows = []
        for s, t in zip(record.steps, times):
            rows.append({
                "strategy": record.run.strategy, "transport": record.run.transport, "workers": comm.world_size,
                "network": self.network.name, "backend": plan.backend.name, "workload": plan.workload.name,
                "seed": plan.workload.seed, "step": s.step, "loss": s.loss, **t, "params": record.params,
                "eval_loss": s.evaluation.get("eval_loss", math.nan), "eval_acc": s.evaluation.get("eval_acc", math.nan),
                "ranks": comm.ranks, "diverged_at_step": math.nan if record.diverged_at is None else record.diverged_at,
                "vote_agreement": math.nan if s.sent is None or s.sent.agreement is None else s.sent.agreement,
                "synced": int(s.sent is not None and not s.sent.local),
                "aggregate_rel_error": math.nan if s.sent is None or s.sent.aggregate_error is None
                else s.sent.aggregate_error,
                "eval_metric": self.runner.workload.metric_name,
                "eval_higher_is_better": int(self.runner.workload.higher_is_better),
            })
        return rows

    def frame(self, record: RunRecord) -> pd.DataFrame:
        """steps.csv's rows of one run."""
        frame = pd.DataFrame.from_records(self.rows(record))
        frame["sim_time_s"] = frame["step_s"].cumsum()
        frame["wire_bytes"] = frame["wire_bytes"].astype("int64")
        return frame[BOOKED_COLUMNS]

    def trace(self, record: dict) -> str:
        """trace.json of the runs trained in this session (lionsim.training.spans). `record`
        (run.json) names the network as the table does: on gloo/nccl the link measured."""
        from lionsim.reports.titles import compute_measured, named_network
        from lionsim.reports.trace import Track, trace_text
        from lionsim.training.spans import run_tracks

        comm, backend = self.runner.place.comm, self.plan.backend.name
        tracks = [Track(name, spans) for name, spans in
                  run_tracks(self.runner.records, self.booking(), backend, comm.local_workers)]
        if backend != "sim":
            times = "measured on each rank; ranks' clocks aligned at the calls' barriers (median)"
        elif compute_measured(record):
            times = "compute measured on this machine, the network modelled (the network model and the booked work)"
        else:
            times = "modelled (the network model and the booked work)"
        about = {"command": "bench", "backend": backend,
                 "network": named_network(self.network.name, record, backend != "sim"),
                 "workers": comm.world_size, "ranks": comm.ranks, "times": times}
        return trace_text(tracks, about)

    @property
    def priced_by(self) -> str | None:
        """What prices comm_model_s on a real backend (None on sim, where the model is the time)."""
        if self.plan.backend.name == "sim":
            return None
        return priced_by(self.network, self.calibration is not None, self.plan.network.given)

    def diverged_at(self, label: str) -> int | None:
        """The step a run diverged at (None: it did not, or has not run)."""
        done = next((r for r in self.runner.records if r.run.label == label), None)
        if done is not None:
            return done.diverged_at
        resume = self.runner.resume
        kept = resume.finished.get(label) if resume is not None else None
        at = kept["diverged_at_step"].dropna() if kept is not None else ()
        return int(at.iloc[0]) if len(at) else None

    def warmup_until(self, label: str) -> int | None:
        """RunRecord.warmup_until of a run, or what the session it was resumed from recorded."""
        done = next((r for r in self.runner.records if r.run.label == label), None)
        if done is not None:
            return done.warmup_until
        resume = self.runner.resume
        runs = (resume.meta.get("runs") if resume is not None and isinstance(resume.meta, dict) else None) or []
        kept = next((e for e in runs if isinstance(e, dict) and e.get("run") == label), {})
        return kept.get("warmup_until")

    def record(self, status: str, error: str | None) -> dict:
        """run.json (lionsim.training.record): every run with the hyperparameters it trains with."""
        plan, runner = self.plan, self.runner
        options = plan.options()
        runs = [run_entry(r.run, r.hyper, self.diverged_at(r.label), r.options, self.warmup_until(r.label))
                for r in plan.runs]
        timing = timing_notes(options=options, device=plan.compute.device, compute=runner.compute,
                              network=self.network, ranks=runner.place.comm.ranks, comm_model=self.priced_by)
        workers = self.booking().workers
        timing["step_kinds"] = max((step_kinds(r, workers) for r in runner.records if r.steps), default=1)
        resume = runner.resume
        return bench_record(options=options, runs=runs, timing=timing, workload=runner.workload, network=self.network,
                            started=runner.started, status=status, error=error, hosts=self.hosts,
                            comm_model=self.priced_by, network_given=self.plan.network.given,
                            resumed=(resume.meta, resume.describe()) if resume is not None else None)
