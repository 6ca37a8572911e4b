"""Comparing a case run with its baseline: one row per (run, metric), with a verdict.

A baseline from another version of the suite is compared where it still fits and reported
clearly where it does not: a case or run the baseline lacks is `missing`, one defined
differently (setting, lr, weight decay) is `outdated`; both fail and ask for `--update`.
Cases and runs the baseline has but the suite no longer does are warnings.

Metrics are compared in one of two modes (fingerprint.py): strict on the platform that
recorded the baseline (equal to float noise, a change either way is CHANGED), spread
elsewhere (REGRESSED past the seed-spread tolerance on the worse side).
"""

from __future__ import annotations

import math

from lionsim.regress.baseline import CaseBaseline, MetricBaseline, RunBaseline
from lionsim.regress.metrics import HIGHER_IS_BETTER, is_better, is_worse
from lionsim.regress.fingerprint import strict_tolerance
from lionsim.regress.rows import CHANGED, FAILED, IMPROVED, MISSING, OUTDATED, PASS, REGRESSED, Row
from lionsim.regress.runner import CaseRun


def _update_hint(case: str) -> str:
    return f"run `lionsim regress --update --case {case}`"


def _setting_diff(old: dict, new: dict) -> str:
    keys = list(dict.fromkeys([*new, *old]))
    return ", ".join(f"{k} {old.get(k, '-')} -> {new.get(k, '-')}" for k in keys if old.get(k) != new.get(k))


def compare_metric(case: str, label: str, metric: str, base: MetricBaseline, now: float,
                   strict: bool = False) -> Row:
    """Verdict of one metric: REGRESSED past the tolerance on the worse side, improved past it
    on the better side, else pass. Strict (the baseline's own platform): CHANGED past float
    noise on either side, else pass."""
    delta = now - base.value
    worse_by = -delta if metric in HIGHER_IS_BETTER else delta
    if strict:
        tol = strict_tolerance(base.value)
        if math.isnan(now) or abs(delta) > tol:
            side = "worse" if math.isnan(now) or worse_by > 0 else "better"
            note = (f"{metric} {side} by {abs(delta):.4g} (strict: float noise is {tol:.2g} on the platform that "
                    f"recorded the baseline); if the change is meant, {_update_hint(case)}")
            return Row(case=case, run=label, metric=metric, verdict=CHANGED, baseline=base.value, now=now, tol=tol,
                       note=note, excess=math.inf if math.isnan(now) else abs(delta) / tol)
        return Row(case=case, run=label, metric=metric, verdict=PASS, baseline=base.value, now=now, tol=tol,
                   excess=abs(delta) / tol)
    if math.isnan(now):
        excess = math.inf
    elif base.tol > 0:
        excess = worse_by / base.tol
    else:  # a hand-written tolerance of 0: any change is past it
        excess = math.copysign(math.inf, worse_by) if worse_by else 0.0
    if is_worse(metric, base.value, now, base.tol):
        verdict, note = REGRESSED, f"{metric} worse by {abs(delta):.4g} (tolerance {base.tol:.3g})"
    elif is_better(metric, base.value, now, base.tol):
        verdict, note = IMPROVED, f"{metric} better by {abs(delta):.4g}; {_update_hint(case)} to keep it"
    else:
        verdict, note = PASS, ""
    return Row(case=case, run=label, metric=metric, verdict=verdict, baseline=base.value, now=now,
               tol=base.tol, note=note, excess=excess)


def _compare_run(run: CaseRun, label: str, base: RunBaseline | None, strict: bool) -> list[Row]:
    case = run.case.name
    if label in run.errors:
        return [Row(case=case, run=label, metric="run", verdict=FAILED, note=run.errors[label])]
    now = run.metrics[label]
    if base is None:
        return [Row(case=case, run=label, metric="final_loss", verdict=MISSING, now=now["final_loss"],
                    note=f"no baseline for this run; {_update_hint(case)}")]
    lr, weight_decay = run.hyper[label]
    if (base.lr, base.weight_decay) != (lr, weight_decay):
        return [Row(case=case, run=label, metric="final_loss", verdict=OUTDATED, now=now["final_loss"],
                    note=f"lr/weight decay {base.lr:g}/{base.weight_decay:g} in the baseline, now "
                         f"{lr:g}/{weight_decay:g}; {_update_hint(case)}")]
    rows = []
    for metric in dict.fromkeys([*now, *base.metrics]):
        if metric not in base.metrics:
            rows.append(Row(case=case, run=label, metric=metric, verdict=MISSING, now=now[metric],
                            note=f"metric not in the baseline; {_update_hint(case)}"))
        elif metric not in now:
            rows.append(Row(case=case, run=label, metric=metric, verdict=MISSING, baseline=base.metrics[metric].value,
                            note="metric in the baseline but not measured now"))
        else:
            rows.append(compare_metric(case, label, metric, base.metrics[metric], now[metric], strict))
    return rows


def compare_case(run: CaseRun, base: CaseBaseline | None, strict: bool = False) -> tuple[list[Row], list[str]]:
    """(rows, warnings) for one case run against its baseline (None: the baseline lacks the case);
    strict: to float noise (fingerprint.py), else within the seed-spread tolerances."""
    case = run.case.name
    if base is None:
        return [Row(case=case, run=label, metric="case", verdict=MISSING,
                    note=f"case {case} is not in the baseline; {_update_hint(case)}")
                for label in run.labels], []
    setting = run.case.setting()
    if base.setting != setting:
        note = f"case changed since the baseline ({_setting_diff(base.setting, setting)}); {_update_hint(case)}"
        return [Row(case=case, run=label, metric="case", verdict=OUTDATED, note=note) for label in run.labels], []
    rows = [row for label in run.labels for row in _compare_run(run, label, base.runs.get(label), strict)]
    warnings = [f"baseline run {case} / {label} is no longer in the suite (stale; `--update` drops it)"
                for label in base.runs if label not in run.labels]
    return rows, warnings
