"""A case's baseline from its runs: the value at the fixed seed, the seed spread and its
tolerance, and the float-noise change and its tolerance (tolerance.py)."""

from __future__ import annotations

from lionsim.regress.baseline import CaseBaseline, MetricBaseline, RunBaseline
from lionsim.regress.runner import CaseRun
from lionsim.regress.tolerance import float_tolerance, rms_change, spread, tolerance


def calibrate(runs: list[CaseRun], noisy: list[CaseRun] = ()) -> CaseBaseline:
    """A case's baseline from its run at the fixed seed (runs[0]), at calibration seeds (the
    spread) and at the fixed seed with float noise (`noisy`: the float tolerances).

    Every run must have finished on every seed and draw with finite metrics (the caller checks).
    """
    checked = runs[0]
    case_runs = {}
    for label in checked.labels:
        metrics = {}
        for metric, value in checked.metrics[label].items():
            sd = spread([r.metrics[label][metric] for r in runs])
            rms = rms_change([r.metrics[label][metric] for r in noisy], value) if noisy else None
            metrics[metric] = MetricBaseline(value=value, sd=sd, tol=tolerance(metric, sd), noise_rms=rms,
                                             noise_tol=None if rms is None else float_tolerance(metric, rms))
        lr, weight_decay, betas = checked.hyper[label]
        case_runs[label] = RunBaseline(lr=lr, weight_decay=weight_decay, metrics=metrics, betas=tuple(betas))
    return CaseBaseline(setting=checked.case.setting(), seeds=[r.seed for r in runs],
                        untrained_eval_loss=checked.untrained_eval_loss, runs=case_runs, noise_draws=len(noisy))
