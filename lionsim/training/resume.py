"""`lionsim bench --resume`: what an interrupted run directory holds, checked against this command.

A bench stopped by SIGINT or SIGTERM (or failed by a dead rank) publishes every finished step,
run.json marked `interrupted` (or `failed`) and, when it stopped at a step boundary, each
process's state of the run under way (lionsim.training.checkpoint). `--resume` on that --out
with the same configuration (run.json's resolved configuration is compared: every option but
--out and --timeout, each run's hyperparameters included) keeps the runs that finished (their
booked rows and, on a real backend, their measured calls: read back bit for bit), continues the run under way from its last finished step,
or from its first where no state was kept (a second Ctrl-C, a dead rank), and trains the rest.
A different configuration, a complete run, or a directory holding no bench run is refused with
one line before anything trains. An unfinished rerun kept in --out's `.rerun/` (one that was to
replace the results --out holds: lionsim.reports.outdir) is the run continued where there is one;
a configuration that differs from it is refused saying how to get back to an unfinished run --out
itself holds (other_configuration).
"""

from __future__ import annotations

import datetime
import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from lionsim.backends.scope import acts
from lionsim.errors import LionsimError
from lionsim.option_paths import absolute, placed
from lionsim.plan import BenchPlan
from lionsim.reports.columns import run_label
from lionsim.reports.files import CALLS_FILE, META_FILE, load_run
from lionsim.reports.outdir import resumed_from
from lionsim.reports.resuming import RESUMABLE, resumable
from lionsim.training.checkpoint import RunCheckpoint, load_checkpoint

FREE = ("out", "timeout", "trace")
"""Options that may differ on --resume: where the run lives, how long a collective may wait,
whether trace.json is written (it draws the steps of the session that writes it)."""


@dataclass(slots=True)
class Resume:
    """What a resumed bench keeps from the interrupted one."""

    meta: dict
    """The interrupted run's run.json."""
    finished: dict[str, pd.DataFrame] = field(default_factory=dict)
    """Run label -> its booked rows, for every run that finished (or diverged)."""
    calls: dict[str, pd.DataFrame] = field(default_factory=dict)
    """Run label -> its rows of calls.csv (a real backend's measured collectives), for every
    finished run: they were measured once and cannot be measured again."""
    checkpoint: RunCheckpoint | None = None
    """This process's state of the run that was under way (None: it restarts)."""
    restarted: str | None = None
    """A run that was under way with no state kept: it trains again from step 1."""

    def compute(self):
        """The forward + backward figure the kept steps were booked with (a bench measures it once:
        lionsim.training.compute_figure): the checkpoint's, else, where runs finished but none was
        under way with state kept (stopped between runs), the one run.json records; None: nothing
        was booked yet, so it is measured."""
        from lionsim.training.compute_figure import ComputeFigure

        if self.checkpoint is not None and self.checkpoint.compute is not None:
            return self.checkpoint.compute
        timing = self.meta.get("timing") or {}
        if not self.finished:
            return None
        if samples := timing.get("compute_samples_s"):
            return ComputeFigure(seconds=statistics.median(samples), samples=list(samples))
        if counted := timing.get("compute_counted"):
            return ComputeFigure(flops=float(counted["flops"]), kernels=int(counted["kernels"]))
        return None

    def describe(self) -> dict:
        """run.json's note of this resume."""
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        where = ({"run": self.checkpoint.label, "from_step": self.checkpoint.step + 1} if self.checkpoint else
                 {"run": self.restarted, "from_step": 1} if self.restarted else {})
        return {"at": now, "kept_runs": list(self.finished), **where}


RECORDED_EVERYWHERE = ("timeout", "warmup_steps")
"""Options an older lionsim resolved to a default on every backend (--timeout 60, --warmup-steps 3),
so its run.json holds them where they cannot act (lionsim.backends.scope). No other option bound
to a backend was ever recorded where it could not act: one a file sets there is refused, not dropped."""


def drop_inert_defaults(config: dict) -> dict:
    """A bench's run.json config, in place, without the defaults an older lionsim recorded where they
    could not act: --timeout on sim, --warmup-steps on sim with a --compute device (nothing
    measured), --bucket-mb 25. As not given: the same run (a replay, a --resume)."""
    backend, compute = config.get("backend", "sim"), config.get("compute")
    for key in RECORDED_EVERYWHERE:
        if key in config and not acts(key, config[key], backend, compute):
            config.pop(key)
    # by value on any backend, not by scope: an older lionsim recorded DDP's 25 for every run, where a
    # bucket formed (the same as not given) and where none did (on sim too: check_buckets refuses it)
    if config.get("bucket_mb") == 25.0:
        config.pop("bucket_mb")
    return config


def config_differences(old: dict, new: dict) -> list[str]:
    """`option old -> new` for every option that differs (but FREE ones), JSON-normalised; a
    table of runs (--hyper) names each run and value that differs, among the runs both have (a
    run added or removed is said by --strategy)."""
    new = json.loads(json.dumps(new, default=str))
    old = drop_inert_defaults(dict(old))  # what an older lionsim recorded where it could not act
    # an older lionsim recorded paths as given, from where it ran (a resume runs there): compared absolute
    old = placed(old, absolute, "bench")[0]
    keys = [k for k in dict.fromkeys([*new, *old]) if k not in FREE]
    out = []
    for k in keys:
        if old.get(k) == new.get(k):
            continue
        flag = f"--{k.replace('_', '-')}"
        if isinstance(old.get(k), dict) and isinstance(new.get(k), dict):
            a, b = old[k], new[k]
            if k == "hyper":  # a run only one side has is --strategy's difference: its resolved table is no news
                a, b = ({run: v for run, v in t.items() if run in a and run in b} for t in (a, b))
            out += [f"{flag} {path} {before} -> {after}" for path, before, after in _dict_differences(a, b)]
        else:
            out.append(f"{flag} {_show(old.get(k))} -> {_show(new.get(k))}")
    return out


def _dict_differences(old: dict, new: dict, path: str = "") -> list[tuple[str, str, str]]:
    """(where, old, new) for every leaf of two nested dicts that differs."""
    out = []
    for k in dict.fromkeys([*old, *new]):
        a, b, at = old.get(k), new.get(k), f"{path}{'.' if path else ''}{k}"
        if isinstance(a, dict) and isinstance(b, dict):
            out += _dict_differences(a, b, at)
        elif a != b:
            out.append((at, _show(a), _show(b)))
    return out


def _show(value) -> str:
    if value is None:
        return "(not given)"
    text = json.dumps(value) if isinstance(value, (dict, list)) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def load_resume(out: Path, plan: BenchPlan, rank: int = 0) -> Resume:
    """The interrupted run in `out`, checked against this command's plan; LionsimError otherwise."""
    from lionsim.training.record import resolved_config

    given = Path(out)
    out = resumed_from(given)  # --out's own run, or the unfinished rerun kept beside it
    if not (out / META_FILE).is_file():
        raise LionsimError(f"--resume: {out} holds no bench run to continue ({META_FILE} not found); "
                           "run without --resume to start one")
    steps, _, meta = load_run(out)
    if meta.get("command") != "bench":
        raise LionsimError(f"--resume: {out}/{META_FILE} records a `lionsim {meta.get('command')}`, not a bench run")
    status = meta.get("status")
    if status not in RESUMABLE:
        raise LionsimError(f"--resume: the run in {out} is {status}, nothing to continue; "
                           "pass --overwrite to run it again, or choose another --out")
    config = resolved_config(plan)
    differ = config_differences(meta.get("config", {}), config)
    if differ:
        raise other_configuration(given, out, differ, config)
    resume = Resume(meta=meta)
    diverged = {r["run"] for r in meta.get("runs", []) if r.get("diverged_at_step") is not None}
    under_way = []
    for (strategy, transport), rows in steps.groupby(["strategy", "transport"], sort=False):
        label = run_label(strategy, transport)
        if len(rows) >= plan.steps or label in diverged:
            resume.finished[label] = rows.reset_index(drop=True)
        else:
            under_way.append((label, len(rows)))
    resume.calls = finished_calls(out, list(resume.finished))
    checkpoint = load_checkpoint(out, rank)
    if checkpoint is not None and (checkpoint.label, checkpoint.step) in under_way:
        resume.checkpoint = checkpoint
    elif under_way:
        resume.restarted = under_way[0][0]
    return resume


def other_configuration(given: Path, home: Path, differ: list[str], config: dict) -> LionsimError:
    """The refusal of a --resume whose configuration differs from the run in `home`. Where that is
    --out's `.rerun/` (which --resume continues first) and --out itself holds an unfinished run, it
    says how to get back to that one: removing `.rerun/`, with this command where it matches."""
    listed = "; ".join(differ[:4]) + ("; ..." if len(differ) > 4 else "")
    own_options = f"`lionsim bench --config {home}/{META_FILE} --resume`"
    below = _meta(given) if home != given else None
    if not resumable(below):
        return LionsimError(f"--resume: {home} was run with another configuration ({listed}); resume with its own "
                            f"options ({own_options}) or pass --overwrite")
    said = (f"--resume: {home}, the unfinished rerun an --overwrite left (--resume continues it first), was run "
            f"with another configuration ({listed})")
    gone = f"remove {home} (its finished steps go)"
    if not config_differences(below.get("config", {}), config):
        return LionsimError(f"{said}; the {below['status']} run {given} itself holds matches this command: {gone} "
                            f"and run it again to continue that one, or resume the rerun with its own options "
                            f"({own_options})")
    return LionsimError(f"{said}; resume it with its own options ({own_options}) or pass --overwrite; to continue "
                        f"the {below['status']} run {given} itself holds instead, {gone} and resume with that run's "
                        f"options (`lionsim bench --config {given}/{META_FILE} --resume`)")


def _meta(run: Path) -> dict | None:
    """A run directory's run.json (None: none, or unreadable: the refusal then says less)."""
    try:
        meta = json.loads((run / META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def finished_calls(out: Path, labels: list[str]) -> dict[str, pd.DataFrame]:
    """The rows of calls.csv (none on sim) of the runs `labels`, by run."""
    from lionsim.training.booking import CALL_COLUMNS, CALL_TEXT, read_calls

    if not labels or not (out / CALLS_FILE).is_file():
        return {}
    calls = read_calls(out / CALLS_FILE)
    if not set(CALL_TEXT) <= set(calls.columns):
        raise LionsimError(f"--resume: {out}/{CALLS_FILE} lacks its collective and dtype columns; "
                           "pass --overwrite to start the run again")
    by_run = {run_label(s, t): rows for (s, t), rows in calls.groupby(["strategy", "transport"], sort=False)}
    return {label: by_run[label][CALL_COLUMNS].reset_index(drop=True) for label in labels if label in by_run}


def resume_point(resume: Resume | None) -> str:
    """Where a resume continues, for the configuration check every rank makes."""
    if resume is None:
        return "fresh"
    where = f"{resume.checkpoint.label}:{resume.checkpoint.step}" if resume.checkpoint else f"{resume.restarted}:0"
    return ",".join(sorted(resume.finished)) + "|" + where


