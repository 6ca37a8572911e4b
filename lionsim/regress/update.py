"""`lionsim regress --update`: re-measure the baselines and their tolerances, and say what changed.

Each selected case runs at its fixed seed, at `seeds` more (the spread) and at its fixed seed
again with NOISE_DRAWS draws of float noise (the float tolerances; noise.py, tolerance.py).
Nothing is written unless every run finished with finite metrics and the cross-checks hold
at the fixed seed: a baseline must not record a broken algorithm. Updating some cases
(`--case`) keeps the others' entries; updating the whole suite also drops stale cases.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from lionsim.errors import LionsimError
from lionsim.regress.baseline import (Baseline, CaseBaseline, baseline_path, current_versions, load_baseline,
                                      save_baseline, tolerance_info, update_command)
from lionsim.regress.calibrate import calibrate
from lionsim.regress.cases import SUITE, SUITE_VERSION, Case, select_cases, validate_cases
from lionsim.regress.crosschecks import cross_checks
from lionsim.regress.fingerprint import fingerprint
from lionsim.regress.noise import NOISE_DRAWS
from lionsim.regress.runner import CaseRun, ProgressFn, run_case
from lionsim.ranges import refusal
from lionsim.regress.tolerance import DEFAULT_SEEDS, SEEDS


@dataclass(frozen=True, slots=True)
class Change:
    case: str
    run: str
    metric: str
    kind: str
    """changed | tolerance | new case | new run | new metric | removed case | removed run | removed metric."""
    old: float = math.nan
    new: float = math.nan
    old_tol: float = math.nan
    new_tol: float = math.nan
    old_noise_tol: float = math.nan
    new_noise_tol: float = math.nan


@dataclass(slots=True)
class UpdateResult:
    cases: list[str]
    changes: list[Change] = field(default_factory=list)
    unchanged: int = 0
    """Metrics whose value and tolerance are as before."""
    warnings: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Why nothing was written (empty when the file was written)."""
    path: Path | None = None
    """The file written, or None."""

    @property
    def ok(self) -> bool:
        return not self.problems


def _nan(x: float | None) -> float:
    return math.nan if x is None else x


def _run_problems(runs: list[CaseRun]) -> list[str]:
    """Runs that stopped, non-finite metrics, metrics that come and go between seeds."""
    problems = []
    first = runs[0]
    for run in runs:
        for label, error in run.errors.items():
            problems.append(f"{run.case.name} / {label} failed at seed {run.seed}: {error}")
        for label, metrics in run.metrics.items():
            bad = [m for m, v in metrics.items() if not math.isfinite(v)]
            if bad:
                problems.append(f"{run.case.name} / {label}: non-finite {', '.join(bad)} at seed {run.seed}")
            if label in first.metrics and set(metrics) != set(first.metrics[label]):
                problems.append(f"{run.case.name} / {label}: seed {run.seed} measured other metrics than seed {first.seed}")
    return problems


def _diff(old: Baseline | None, new: Baseline, updated: list[str]) -> tuple[list[Change], int]:
    """What the update changed in the `updated` cases, and which cases it dropped."""
    changes: list[Change] = []
    unchanged = 0
    old_cases = old.cases if old is not None else {}
    for name in updated:
        case = new.cases[name]
        if name not in old_cases:
            changes.append(Change(name, "", "", "new case"))
            continue
        before: CaseBaseline = old_cases[name]
        for label, run in case.runs.items():
            if label not in before.runs:
                changes.append(Change(name, label, "", "new run"))
                continue
            for metric, b in run.metrics.items():
                a = before.runs[label].metrics.get(metric)
                if a is None:
                    changes.append(Change(name, label, metric, "new metric", new=b.value, new_tol=b.tol))
                elif a.value != b.value or a.tol != b.tol or a.noise_tol != b.noise_tol:
                    kind = "changed" if a.value != b.value else "tolerance"
                    changes.append(Change(name, label, metric, kind, a.value, b.value, a.tol, b.tol,
                                          _nan(a.noise_tol), _nan(b.noise_tol)))
                else:
                    unchanged += 1
            changes += [Change(name, label, m, "removed metric", old=a.value, old_tol=a.tol)
                        for m, a in before.runs[label].metrics.items() if m not in run.metrics]
        changes += [Change(name, label, "", "removed run") for label in before.runs if label not in case.runs]
    changes += [Change(name, "", "", "removed case") for name in old_cases if name not in new.cases]
    return changes, unchanged


def update_suite(baseline_dir: Path, patterns: list[str] | None = None, seeds: int = DEFAULT_SEEDS,
                 suite: Sequence[Case] = SUITE, progress: ProgressFn | None = None) -> UpdateResult:
    """Re-measure the cases matching `patterns` (all if None) and rewrite DIR/regress.json."""
    if seeds < 1:
        raise LionsimError(refusal("--seeds", seeds, SEEDS))
    cases = select_cases(patterns, tuple(suite))
    validate_cases(list(suite))
    old = load_baseline(baseline_dir) if baseline_path(baseline_dir).exists() else None
    result = UpdateResult(cases=[c.name for c in cases])
    fresh: dict[str, CaseBaseline] = {}
    for case in cases:
        runs = [run_case(case, case.seed + i, progress) for i in range(seeds + 1)]
        noisy = [run_case(case, case.seed, progress, noise=draw) for draw in range(1, NOISE_DRAWS + 1)]
        problems = _run_problems(runs) + _run_problems(noisy)
        if not problems:
            problems = [f"{case.name} / {r.run}: {r.metric} fails: {r.note}" for r in cross_checks(runs[0]) if r.failed]
        for run in runs[1:]:
            result.warnings += [f"{case.name} / {r.run}: {r.metric} fails at calibration seed {run.seed} "
                                f"({r.note}); the margin is tight for this case"
                                for r in cross_checks(run) if r.failed]
        result.problems += problems
        if not problems:
            fresh[case.name] = calibrate(runs, noisy)
    if result.problems:
        return result
    kept = dict(old.cases) if old is not None and patterns else {}
    merged = {**kept, **fresh}
    order = [c.name for c in suite] + [name for name in merged if name not in {c.name for c in suite}]
    here = fingerprint()
    platform = here
    if kept and not set(kept) <= set(fresh) and old.fingerprint != here:
        platform = None  # the kept cases were recorded elsewhere: no one platform for strict mode
        result.warnings.append("cases kept from the old baseline were recorded on another platform (or an unknown "
                               "one): the file records no fingerprint, so checks run in float mode (spread for cases "
                               "without float tolerances) and never strict; a full "
                               f"`{update_command(baseline_dir)}` on one platform restores strict mode")
    new = Baseline(suite_version=SUITE_VERSION, tolerance=tolerance_info(), versions=current_versions(),
                   cases={name: merged[name] for name in order if name in merged}, fingerprint=platform)
    result.changes, result.unchanged = _diff(old, new, list(fresh))
    result.path = save_baseline(baseline_dir, new)
    return result
