"""`lionsim bench` on the simulator: train, and on SIGINT or SIGTERM stop at a step boundary
and keep everything that finished, with the state `--resume` continues from (a signal while
that is written waits for it: lionsim.training.stop.deferred_signals); on an error in the
user's code (lionsim.usercode) keep what finished too, and say so in one line (exit 3). What
did not complete is kept where lionsim.reports.resuming.Unfinished says: --out, or its `.rerun/`
where --out holds results this run was to replace (they stay whole). A signal that comes after
the last step's stop check stops nothing: the bench completes, says so, and exits 0
(lionsim.training.stop.settle)."""

from __future__ import annotations

from pathlib import Path

from lionsim.cli.app import console, err_console, fail
from lionsim.cli.progress import step_progress
from lionsim.option_paths import absolute


def run_here(plan, out: Path, resume: bool, keeping=None):
    """Train every run of the plan in this process and publish it into `out`; return (result,
    files). An interruption publishes what finished where `keeping` (an Unfinished) says and exits
    2 with one line; an error in the user's code does the same with exit 3."""
    from lionsim.cli.interruption import published
    from lionsim.reports.outdir import unfinished_home
    from lionsim.reports.publish import RunDir
    from lionsim.reports.resuming import Unfinished
    from lionsim.reports.writing import publish_result
    from lionsim.training.results import Results
    from lionsim.training.resume import load_resume
    from lionsim.training.runner import Runner
    from lionsim.training.stop import StopRequest, deferred_signals, late_note, settle, stop_at_step_boundary, to_stderr
    from lionsim.usercode import EXIT_CODE, UserCodeError

    keeping = keeping or Unfinished(out, unfinished_home(out, resume), resume)
    report = ReportNote(out, resume)
    kept = load_resume(out, plan) if resume else None
    runner = Runner(plan, resume=kept)  # bad data or a bad network fail here, before anything is made
    results = Results(runner)
    target = RunDir(out)
    target.prepare()  # --out is writable: checked before anything trains
    request = StopRequest()
    try:
        with stop_at_step_boundary(request, note=to_stderr), step_progress(console, plan.labels, plan.steps) as progress:
            runner.run(progress, stop=request)
        result = results.result()
    except KeyboardInterrupt:
        with deferred_signals():  # a signal while what finished is written (booked, then published) waits for it
            line = interrupted(runner, results, target, request, keeping)
        report.say()
        fail(line)
    except UserCodeError as e:
        with deferred_signals():
            line = failed(runner, results, target, str(e), keeping)
        report.say()
        fail(line, code=EXIT_CODE)
    except BaseException:  # a failure that is not a result: nothing was published, nothing is left
        target.abandon()
        raise
    result.meta["config"]["out"] = absolute(out)
    try:
        files = publish_result(target, result)
        published(out)  # a KeyboardInterrupt raised from here on says the files are there
        settle()  # complete and written: a signal from here on changes nothing (exit 0)
    except KeyboardInterrupt:  # every run finished: keep them all, without the plots being drawn
        target.discard()
        publish_result(target, result, plots=False)
        report.say()
        fail(f"interrupted while drawing the plots: every run's results are kept in {out}; "
             f"`lionsim plot {out}` draws them")
    report.say()
    late_note(request)
    return result, files


class ReportNote:
    """A --resume publishes over --out, and the report.md `lionsim report` wrote there (of the run
    before it: stale now) goes: said in one line on stderr once it has, as a sweep says it. A
    resumed `.rerun/` replaces the run --out held, which its --overwrite was to replace: the
    report described that run, not the one resumed."""

    def __init__(self, out: Path, resume: bool) -> None:
        from lionsim.reports.outdir import REPORT_FILE, resumed_from

        self.path = Path(out) / REPORT_FILE
        self.held = resume and self.path.is_file()
        rerun = resume and resumed_from(out) != Path(out)
        self.described = "the run this one replaced" if rerun else "the run before this resume"

    def say(self) -> None:
        from lionsim.reports.resuming import report_removed

        if self.held and not self.path.is_file():
            self.held = False
            err_console.print(report_removed(self.path, self.described), markup=False)


def interrupted(runner, results, target, request, keeping) -> str:
    """Publish what an interrupted bench finished (and the state of the run it stopped in) where
    `keeping` says; return the line that says so."""
    from lionsim.cli.interruption import interrupted_line
    from lionsim.reports.writing import publish_result
    from lionsim.training.checkpoint import save_checkpoint

    how = f"interrupted ({request.name})" if request.signal is not None else "interrupted"
    partial = results.result(status="interrupted", error=how)
    partial.meta["config"]["out"] = absolute(target.out)
    if not len(partial.steps):
        target.abandon()
        return interrupted_line(how)
    checkpoint = runner.state_to_keep()
    if checkpoint is not None:
        save_checkpoint(target.stage, 0, checkpoint)
    publish_result(target, partial, plots=False, into=keeping.home)
    return f"{how}: {keeping.kept(len(partial.steps))}; {continues(checkpoint, keeping.command)}"


def rank_interrupted(rank: int, checkpoint, keeping) -> str:
    """A launcher's rank's line when a signal stopped it: after which step of which run, where the
    finished steps are kept and what continues them, in `interrupted`'s `; ... continues` form
    (`checkpoint` None: stopped at once, nothing of the run under way kept)."""
    if checkpoint is None:
        return f"rank {rank}: interrupted"
    return (f"rank {rank}: interrupted after step {checkpoint.step} of {checkpoint.label}; {keeping.kept()}; "
            f"{continues(checkpoint, keeping.command)}")


def failed(runner, results, target, line: str, keeping) -> str:
    """Publish what a bench finished before the user's code raised (run.json marked failed, with
    the line); return the line with what was kept. The run under way restarts on --resume: its
    state was left half-way through a step."""
    from lionsim.reports.writing import publish_result
    from lionsim.usercode import kept_line

    partial = results.result(status="failed", error=line)
    partial.meta["config"]["out"] = absolute(target.out)
    if not len(partial.steps):
        target.abandon()
        return kept_line(line, None)
    publish_result(target, partial, plots=False, into=keeping.home)
    return kept_line(line, keeping.kept(len(partial.steps)), keeping.command)


def continues(checkpoint, command: str) -> str:
    """What `--resume` will do, in words (the report's Reproduce section says the same)."""
    from lionsim.reports.resuming import continues as words

    return words(checkpoint.label, checkpoint.step, command) if checkpoint is not None else words(command=command)
