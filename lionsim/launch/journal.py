"""Rank 0's finished steps on disk as they finish, and their publication by whoever survives.

Rank 0 stages whole files (steps.csv, summary.csv, run.json; lionsim.reports.publish) as each
run starts and ends. In between, each finished step of the run under way is appended as one
CSV line to a journal in the staging directory (and, on a real backend, the step's measured
collectives to a second one, calls.csv's rows): booking the run again and rewriting steps.csv
at every step would cost O(steps) a step (0.1 s at 600 steps). `finalize` (the spawner when a
rank died, or rank 0 itself under torchrun) books the journal's complete lines as a finished
run's are booked (per kind, the median over the steps past the warm-up), adds them to the
staged steps.csv (and those steps' calls to the staged calls.csv, so that the two files hold the
same steps; a journaled call's time_s and wait_s are rank 0's own, as its journaled step's
figures are: the max over ranks is taken when a run ends), redoes summary.csv under the run's own summary rule (its run.json's baseline,
target loss and warm-up steps: a failed or interrupted run is summarised as a finished one), marks run.json with the status and the error line,
removes the journal and any temp file a killed writer left (keeping the ranks' states of a run
stopped at a step boundary, `.resume/`, for `lionsim bench --resume`), and publishes into --out,
or into its `.rerun/` where --out holds results this run was to replace
(lionsim.reports.outdir.unfinished_home): --out never holds the journal or a half-written file.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os
import shutil
import time
from pathlib import Path

import pandas as pd

from lionsim.option_paths import absolute
from lionsim.reports.columns import EXTRA_STEP_COLUMNS, STEP_COLUMNS
from lionsim.reports.files import CALLS_FILE, META_FILE, STEPS_FILE, read_csv, read_json, write_atomic, write_run
from lionsim.reports.formats import write_csv
from lionsim.reports.publish import RunDir
from lionsim.reports.summary import SummaryRule, run_summary
from lionsim.training.booking import CALL_COLUMNS, _kind, call_rows, medians_by_kind, read_calls  # _kind: steps of a kind issue the same collectives
from lionsim.training.checkpoint import RESUME_DIR
from lionsim.training.results import Results

JOURNAL = ".steps.journal"
CALLS_JOURNAL = ".calls.journal"
KIND = "kind"
"""The journal's last column: the step's kind (the collectives it issued), for the medians."""
MEDIANED = ("encode_s", "decode_s", "update_s", "comm_s")
"""Columns a finished run books as medians of their kind (lionsim.training.booking)."""


class StepJournal:
    """The run under way, a line per finished step (rows booked one step at a time)."""

    def __init__(self, target: RunDir) -> None:
        self.path = target.stage / JOURNAL
        self.calls_path = target.stage / CALLS_JOURNAL
        self._files: dict[Path, tuple] = {}

    def add_step(self, results: Results) -> None:
        """The last finished step of the run under way, booked on its own (O(1)), and its calls
        on a real backend."""
        record = results.runner.records[-1]
        one = dataclasses.replace(record, steps=record.steps[-1:], diverged_at=None)
        calls = call_rows(one, results.booking()) if results.runner.place.comm.ranks > 1 else []
        for call in calls:  # the calls first: a step on disk has its calls on disk
            self._line(self.calls_path, CALL_COLUMNS, call)
        if calls:
            self._files[self.calls_path][0].flush()
        self.add(results.rows(one)[0], repr(_kind(one.steps[0], one, results.runner.place.comm.world_size)))

    def add(self, row: dict, kind: str) -> None:
        self._line(self.path, STEP_COLUMNS + EXTRA_STEP_COLUMNS + [KIND], {**row, KIND: kind})
        self._files[self.path][0].flush()  # in the OS's hands: a killed process loses nothing it flushed

    def _line(self, path: Path, columns: list[str], row: dict) -> None:
        if path not in self._files:  # a run's first step: a fresh journal with its header
            path.parent.mkdir(parents=True, exist_ok=True)
            file = open(path, "w", newline="", encoding="utf-8")
            self._files[path] = (file, csv.DictWriter(file, columns, extrasaction="ignore"))
            self._files[path][1].writeheader()
        self._files[path][1].writerow(row)

    def reset(self) -> None:
        """The run's rows are in the staged steps.csv (or the job is over): drop the journals."""
        self.close()
        self.path.unlink(missing_ok=True)
        self.calls_path.unlink(missing_ok=True)

    def close(self) -> None:
        for file, _ in self._files.values():
            file.close()
        self._files.clear()


def journal_rows(path: Path, warmup: int) -> pd.DataFrame:
    """The journal's complete lines booked like a finished run's rows (empty if none)."""
    rows = _complete_lines(path)
    if rows is None or rows.empty:
        return pd.DataFrame()
    kinds = list(rows.pop(KIND))
    if (rows["ranks"] > 1).all():  # real collectives: no overlap, so step_s is the sum of its parts
        for column in MEDIANED:
            rows[column] = medians_by_kind(list(rows[column]), kinds, warmup)
        rows["comm_exposed_s"] = rows["comm_s"]
        rows["step_s"] = rows[["compute_s", "wait_s", "encode_s", "comm_exposed_s", "decode_s", "update_s"]].sum(axis=1)
    rows["sim_time_s"] = rows["step_s"].cumsum()
    return rows


def finalize(out: Path, status: str, error: str | None, home: Path | None = None, resumed: bool = True) -> int:
    """Publish what rank 0 staged and journaled, marked `status` / `error`, into `home` (--out, or
    its `.rerun/`: unfinished_home); return how many steps that is (0, and nothing written, if none
    had finished). `resumed`: the session continued the run in `home`, whose saved states it may
    carry over (a new run's may not: they are another run's). Call only once rank 0 writes no more."""
    home = Path(out) if home is None else Path(home)
    target = RunDir(out)
    stage = target.stage
    if not (stage / META_FILE).is_file():
        target.discard()
        return 0
    meta = read_json(stage / META_FILE)
    rule = SummaryRule.of_run(meta)  # the rule a finished run of this plan is summarised with
    steps = read_csv(stage / STEPS_FILE, STEP_COLUMNS) if (stage / STEPS_FILE).is_file() else pd.DataFrame()
    tail = journal_rows(stage / JOURNAL, rule.warmup_steps or 0)
    if len(steps) and len(tail):  # rank 0 staged the run (or a resume's first part) before dying
        done = set(zip(steps["strategy"], steps["transport"], steps["step"]))
        tail = tail[[k not in done for k in zip(tail["strategy"], tail["transport"], tail["step"])]]
    frames = [f for f in (steps, tail) if len(f)]
    if not frames:
        target.discard()
        return 0
    calls = journaled_calls(stage, tail)
    steps = pd.concat(frames, ignore_index=True)
    meta.update(status=status, error=error)
    meta["config"]["out"] = absolute(out)
    if "started" in meta:
        started = pd.Timestamp(meta["started"]).timestamp()
        meta["duration_s"] = round(time.time() - started, 3)
    for leftover in stage.iterdir():  # the journal, and temp files of a writer killed mid-write
        if leftover.name.startswith(".") and leftover.name != RESUME_DIR:  # the ranks' states stay for --resume
            leftover.unlink()
    keep_resume_state(stage, home if resumed else None)
    summary = run_summary(steps, meta)  # as the finished run's: its rule, what priced its model
    target.write(lambda d: write_run(d, steps, summary, meta) +
                 ([write_atomic(d / CALLS_FILE, lambda f: write_csv(f, calls))] if calls is not None else []))
    target.publish(home)
    return len(steps)


def journaled_calls(stage: Path, tail: pd.DataFrame) -> pd.DataFrame | None:
    """The staged calls.csv with the journaled calls of the steps `tail` adds (None: no calls
    were journaled, the staged calls.csv, if any, stays as it is)."""
    journaled = _complete_lines(stage / CALLS_JOURNAL)
    if journaled is None:
        return None
    keys = set(zip(tail["strategy"], tail["transport"], tail["step"])) if len(tail) else set()
    journaled = journaled[[k in keys for k in zip(journaled["strategy"], journaled["transport"], journaled["step"])]]
    staged = read_calls(stage / CALLS_FILE) if (stage / CALLS_FILE).is_file() else None
    frames = [f[CALL_COLUMNS] for f in (staged, journaled) if f is not None and len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=CALL_COLUMNS)


def _complete_lines(path: Path) -> pd.DataFrame | None:
    """A journal's complete lines (a line cut short by a kill is dropped); None if there is none."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    text = text[: text.rfind("\n") + 1]
    return pd.read_csv(io.StringIO(text)) if text.count("\n") > 1 else None


def keep_resume_state(stage: Path, resumed: Path | None) -> None:
    """The ranks' states for --resume as publishing leaves them: a checkpoint a writer killed
    mid-write left as a temp file goes; where this session saved none (a resume stopped at once,
    before any new step finished) the states already in `resumed` (the run it continued: None for
    a new run) are carried over, as publishing replaces it whole. A carried state that no longer
    matches the steps (the run went on past it) is ignored by --resume, which then restarts that
    run: never wrong, at worst slower."""
    states = stage / RESUME_DIR
    if states.is_dir():
        for leftover in states.iterdir():
            if leftover.name.startswith("."):
                leftover.unlink()
        if any(states.iterdir()):
            return
        states.rmdir()
    if resumed is None:
        return
    earlier = resumed / RESUME_DIR
    if earlier.is_dir() and any(p.suffix == ".pt" for p in earlier.iterdir()):
        states.mkdir()
        for state in earlier.iterdir():
            if state.suffix == ".pt" and not state.name.startswith("."):
                try:
                    os.link(state, states / state.name)  # beside --out: the same file system, no copy
                except OSError:
                    shutil.copy2(state, states / state.name)
