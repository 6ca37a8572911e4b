"""Comparing a case run with its baseline: one row per (run, metric), with a verdict.

A baseline from another version of the suite is compared where it still fits and reported
clearly where it does not: a case or run the baseline lacks is `missing`, one defined
differently (setting, lr, weight decay) is `outdated`; both fail and ask for `--update`.
Cases and runs the baseline has but the suite no longer does are warnings.

Metrics are compared in one of three modes (fingerprint.py): strict on the platform that
recorded the baseline (equal to float noise, a change either way is CHANGED), float elsewhere
(within the float-noise tolerance, either way, else CHANGED), spread when forced or without
float tolerances (REGRESSED past the seed-spread tolerance on the worse side).

A case that pins no hyperparameters (cases.py) guards the strategies' defaults: a run whose
defaults resolved differently from the baseline's is CHANGED, whatever the mode.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

from lionsim.regress.baseline import CaseBaseline, MetricBaseline, RunBaseline, update_command
from lionsim.regress.metrics import HIGHER_IS_BETTER, is_better, is_worse, worst_reading
from lionsim.regress.fingerprint import FLOAT, SPREAD, STRICT, strict_tolerance
from lionsim.regress.rows import CHANGED, FAILED, IMPROVED, MISSING, OUTDATED, PASS, REGRESSED, UNGUARDED, Row, fmt
from lionsim.regress.runner import CaseRun


def _update_hint(case: str, baseline_dir: Path | None) -> str:
    return f"run `{update_command(baseline_dir, [case])}`"


def _setting_diff(old: dict, new: dict) -> str:
    keys = list(dict.fromkeys([*new, *old]))
    return ", ".join(f"{k} {old.get(k, '-')} -> {new.get(k, '-')}" for k in keys if old.get(k) != new.get(k))


def compare_metric(case: str, label: str, metric: str, base: MetricBaseline, now: float,
                   mode: str = SPREAD, baseline_dir: Path | None = None, worst: float | None = None) -> Row:
    """Verdict of one metric. Strict (the baseline's own platform) and float (another
    platform): CHANGED past float noise on either side, else pass. Spread: REGRESSED past the
    tolerance on the worse side, improved past it on the better side, else pass. `baseline_dir`:
    where the baseline was read, which the advice to update it names. `worst`: the worst value
    the metric can read (metrics.worst_reading); a pass whose tolerance reaches it is
    UNGUARDED, since any reading would have passed."""
    row = _judge(case, label, metric, base, now, mode, baseline_dir)
    if row.verdict != PASS or worst is None:
        return row
    higher = metric in HIGHER_IS_BETTER
    if (base.value - row.tol > worst) if higher else (base.value + row.tol < worst):
        return row
    what = "an accuracy of 0" if higher else "the untrained model's loss"
    return replace(row, verdict=UNGUARDED,
                   note=f"any reading passes: the tolerance {fmt(row.tol)} around {fmt(base.value)} reaches {what} "
                        f"({fmt(worst)}); other metrics and the cross-checks guard this run")


def _judge(case: str, label: str, metric: str, base: MetricBaseline, now: float, mode: str,
           baseline_dir: Path | None) -> Row:
    delta = now - base.value
    worse_by = -delta if metric in HIGHER_IS_BETTER else delta
    if mode in (STRICT, FLOAT):
        tol = strict_tolerance(base.value) if mode == STRICT or base.noise_tol is None else base.noise_tol
        if math.isnan(now) or abs(delta) > tol:
            side = "worse" if math.isnan(now) or worse_by > 0 else "better"
            why = ("float noise is {tol:.2g} on the platform that recorded the baseline" if mode == STRICT else
                   "float noise carries this metric {tol:.2g} here").format(tol=tol)
            note = (f"{metric} {side} by {abs(delta):.4g} ({mode}: {why}); if the change is meant, "
                    f"{_update_hint(case, baseline_dir)}")
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
        verdict, note = IMPROVED, f"{metric} better by {abs(delta):.4g}; {_update_hint(case, baseline_dir)} to keep it"
    else:
        verdict, note = PASS, ""
    return Row(case=case, run=label, metric=metric, verdict=verdict, baseline=base.value, now=now,
               tol=base.tol, note=note, excess=excess)


def _hyper_row(run: CaseRun, label: str, base: RunBaseline, now: dict, baseline_dir: Path | None) -> Row | None:
    """A run whose (lr, weight decay, betas) differ from the baseline's: OUTDATED where the case
    pins them (the case was redefined), CHANGED where they are the strategy's defaults."""
    case = run.case.name
    lr, weight_decay, betas = run.hyper[label]
    was = {"lr": base.lr, "weight decay": base.weight_decay, "betas": base.betas}
    is_ = {"lr": lr, "weight decay": weight_decay, "betas": tuple(betas)}
    differ = [f"{k} {_show(was[k])} -> {_show(is_[k])}" for k in was if was[k] is not None and was[k] != is_[k]]
    if not differ:
        return None
    if run.case.pinned:
        return Row(case=case, run=label, metric="final_loss", verdict=OUTDATED, now=now["final_loss"],
                   note=f"{', '.join(differ)} since the baseline; {_update_hint(case, baseline_dir)}")
    return Row(case=case, run=label, metric="defaults", verdict=CHANGED, now=now["final_loss"],
               baseline=math.nan, excess=math.inf,
               note=f"the strategy's default {', '.join(differ)} (for {run.case.workload}): every run at its defaults "
                    f"trains differently now; if the change is meant, {_update_hint(case, baseline_dir)}")


def _show(value) -> str:
    return ",".join(f"{v:g}" for v in value) if isinstance(value, tuple) else f"{value:g}"


def _compare_run(run: CaseRun, label: str, base: RunBaseline | None, mode: str,
                 baseline_dir: Path | None) -> list[Row]:
    case = run.case.name
    if label in run.errors:
        return [Row(case=case, run=label, metric="run", verdict=FAILED, note=run.errors[label])]
    now = run.metrics[label]
    if base is None:
        return [Row(case=case, run=label, metric="final_loss", verdict=MISSING, now=now["final_loss"],
                    note=f"no baseline for this run; {_update_hint(case, baseline_dir)}")]
    hyper = _hyper_row(run, label, base, now, baseline_dir)
    if hyper is not None and hyper.verdict == OUTDATED:
        return [hyper]
    rows = []
    for metric in dict.fromkeys([*now, *base.metrics]):
        if metric not in base.metrics:
            rows.append(Row(case=case, run=label, metric=metric, verdict=MISSING, now=now[metric],
                            note=f"metric not in the baseline; {_update_hint(case, baseline_dir)}"))
        elif metric not in now:
            rows.append(Row(case=case, run=label, metric=metric, verdict=MISSING, baseline=base.metrics[metric].value,
                            note="metric in the baseline but not measured now"))
        else:
            rows.append(compare_metric(case, label, metric, base.metrics[metric], now[metric], mode,
                                       baseline_dir, worst_reading(metric, run.untrained_eval_loss)))
    return ([hyper] if hyper is not None else []) + rows


def missing_case(case: str, labels: list[str], baseline_dir: Path | None = None) -> list[Row]:
    """The rows of a case the baseline lacks: each of its runs `missing` (nothing to train for)."""
    return [Row(case=case, run=label, metric="case", verdict=MISSING,
                note=f"case {case} is not in the baseline; {_update_hint(case, baseline_dir)}") for label in labels]


def compare_case(run: CaseRun, base: CaseBaseline | None, mode: str = SPREAD,
                 baseline_dir: Path | None = None) -> tuple[list[Row], list[str]]:
    """(rows, warnings) for one case run against its baseline (None: the baseline lacks the case),
    in `mode` (strict, float or spread: fingerprint.py); `baseline_dir`: where the baseline was
    read, which every piece of advice to update it names."""
    case = run.case.name
    if base is None:
        return missing_case(case, run.labels, baseline_dir), []
    setting = run.case.setting()
    if base.setting != setting:
        note = f"case changed since the baseline ({_setting_diff(base.setting, setting)}); {_update_hint(case, baseline_dir)}"
        return [Row(case=case, run=label, metric="case", verdict=OUTDATED, note=note) for label in run.labels], []
    rows = [row for label in run.labels for row in _compare_run(run, label, base.runs.get(label), mode, baseline_dir)]
    warnings = [f"baseline run {case} / {label} is no longer in the suite (stale; `{update_command(baseline_dir, [case])}` drops it)"
                for label in base.runs if label not in run.labels]
    return rows, warnings
