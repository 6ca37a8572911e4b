"""`lionsim regress`: run the selected cases at their fixed seeds and judge them against the baseline.

Everything that can be bad input is checked before any training: the case patterns, the
baseline file, every case's strategies and transports. A case the baseline lacks is not
trained: its runs are `missing` whatever they measure, known before the first run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from lionsim.numbers import plural
from lionsim.regress.baseline import baseline_path, current_versions, load_baseline, update_command
from lionsim.regress.cases import SUITE, SUITE_VERSION, Case, select_cases, validate_cases
from lionsim.regress.compare import compare_case, missing_case
from lionsim.regress.crosschecks import cross_checks
from lionsim.regress.fingerprint import AUTO, SPREAD, STRICT, choose_mode, mode_line
from lionsim.regress.rows import Row
from lionsim.regress.runner import ProgressFn, run_case, run_labels


@dataclass(slots=True)
class CheckResult:
    cases: list[str]
    """The cases that ran, in suite order."""
    rows: list[Row]
    warnings: list[str] = field(default_factory=list)
    """Things to know that do not fail the check (stale baseline entries, other versions)."""
    baseline: Path | None = None
    mode: str = SPREAD
    """strict, float or spread (fingerprint.py)."""
    mode_reason: str = ""
    """Why that mode: the platforms match, differ (how), or it was asked for."""
    run_seconds: dict[tuple[str, str], float] = field(default_factory=dict)
    """(case, run label) -> wall seconds of that run's bench (CaseRun.seconds)."""

    @property
    def mode_line(self) -> str:
        return mode_line(self.mode, self.mode_reason)

    @property
    def failures(self) -> list[Row]:
        return [r for r in self.rows if r.failed]

    @property
    def unguarded(self) -> list[Row]:
        """Passing checks that any reading would have passed (rows.UNGUARDED)."""
        return [r for r in self.rows if r.unguarded]

    @property
    def checks_line(self) -> str:
        """'312 checks' with, where some guard nothing, how many ('312 checks, 2 unguarded')."""
        unguarded = len(self.unguarded)
        return plural(len(self.rows), "check") + (f", {unguarded} unguarded" if unguarded else "")

    @property
    def ok(self) -> bool:
        return not self.failures


def unrecorded(cases: Sequence[Case], baseline_dir: Path) -> list[str]:
    """The names of `cases` that DIR/regress.json lacks: a check reports them without training."""
    recorded = load_baseline(baseline_dir).cases
    return [c.name for c in cases if c.name not in recorded]


def total_runs(cases: Sequence[Case], passes: int = 1) -> int:
    """How many bench runs `passes` passes over these cases take (a check: 1; an update: its
    seeds and float-noise draws)."""
    return passes * sum(len(c.strategies) for c in cases)


def check_suite(baseline_dir: Path, patterns: list[str] | None = None, suite: Sequence[Case] = SUITE,
                progress: ProgressFn | None = None, mode: str = AUTO) -> CheckResult:
    """Run the cases matching `patterns` (all if None) and compare them with DIR/regress.json,
    strictly on the baseline's own platform and within float-noise tolerances elsewhere (mode
    auto), or as `mode` (strict | float | spread) says."""
    cases = select_cases(patterns, tuple(suite))
    baseline = load_baseline(baseline_dir)
    recorded = [baseline.cases[c.name] for c in cases if c.name in baseline.cases]
    chosen, why = choose_mode(mode, baseline.fingerprint, bool(recorded) and all(c.has_float for c in recorded),
                              update_command(baseline_dir))
    validate_cases(list(suite))
    result = CheckResult(cases=[c.name for c in cases], rows=[], baseline=baseline_path(baseline_dir),
                         mode=chosen, mode_reason=why)
    if baseline.suite_version != SUITE_VERSION:
        result.warnings.append(f"the baseline was written by suite version {baseline.suite_version}, this is "
                               f"version {SUITE_VERSION}: cases are compared where their definitions still match")
    now = current_versions()
    for name in ("torch", "lionsim") if chosen != STRICT else ():
        if baseline.versions.get(name) != now[name]:
            result.warnings.append(f"the baseline was written with {name} {baseline.versions.get(name)}, this is "
                                   f"{now[name]}: small numeric drift is expected and within tolerance")
    names = {c.name for c in suite}
    result.warnings += [f"baseline case {name} is no longer in the suite (stale; `{update_command(baseline_dir)}` drops it)"
                        for name in baseline.cases if name not in names]
    for case in cases:
        if case.name not in baseline.cases:
            result.rows += missing_case(case.name, run_labels(case), baseline_dir)
            continue
        run = run_case(case, case.seed, progress)
        rows, warnings = compare_case(run, baseline.cases[case.name], chosen, baseline_dir)
        result.rows += rows + cross_checks(run)
        result.run_seconds.update({(case.name, label): s for label, s in run.seconds.items()})
        result.warnings += warnings
    return result
