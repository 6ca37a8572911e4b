"""`lionsim regress`: CI convergence regression against committed baselines.

A fixed suite of small deterministic convergence cases (cases.py) trains each case's
strategies at its fixed seed, measures final and best loss, held-out loss and accuracy, the
loss at checkpoints along the curve and the Lion-family runs' gap to global Lion
(metrics.py), and compares each with `reports/baselines/regress.json` (baseline.py,
compare.py): to float noise on the platform that recorded the baseline (strict mode), else
within what float-level noise carries each metric through its case, measured at --update
(float mode; noise.py), or, forced, within the seed-to-seed spread (spread mode;
fingerprint.py, tolerance.py). Cross-checks
(crosschecks.py) hold every run to beating the untrained model and D-Lion MaVo to staying
near global Lion, whatever the baseline says.

    result = check_suite(default_baseline_dir(), ["mlp-*"])   # the checkout's reports/baselines
    result.ok, result.failures, result.mode   # rows with case, run, metric, baseline, now, tol, verdict
    update_suite(Path("reports/baselines"))   # re-measure and rewrite the baselines
"""

from lionsim._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    ".baseline": "BASELINE_FILE load_baseline",
    ".cases": "SUITE SUITE_VERSION Case select_cases",
    ".check": "CheckResult check_suite total_runs",
    ".report": "write_junit write_markdown",
    ".rows": "Row",
    ".update": "Change UpdateResult update_suite",
})
