"""`lionsim regress`: CI convergence regression against committed baselines.

A fixed suite of small deterministic convergence cases (cases.py) trains each case's
strategies at its fixed seed, measures final and best loss, held-out loss and accuracy, the
loss at checkpoints along the curve and the Lion-family runs' gap to global Lion
(metrics.py), and compares each with `reports/baselines/regress.json` (baseline.py,
compare.py): to float noise on the platform that recorded the baseline (strict mode), else
within tolerances measured from seed-to-seed spread (spread mode; fingerprint.py,
tolerance.py). Cross-checks
(crosschecks.py) hold every run to beating the untrained model and D-Lion MaVo to staying
near global Lion, whatever the baseline says.

    result = check_suite(default_baseline_dir(), ["mlp-*"])   # the checkout's reports/baselines
    result.ok, result.failures, result.mode   # rows with case, run, metric, baseline, now, tol, verdict
    update_suite(Path("reports/baselines"))   # re-measure and rewrite the baselines
"""

from lionsim.regress.baseline import BASELINE_FILE, load_baseline
from lionsim.regress.cases import SUITE, SUITE_VERSION, Case, select_cases
from lionsim.regress.check import CheckResult, check_suite, total_runs
from lionsim.regress.report import write_junit, write_markdown
from lionsim.regress.rows import Row
from lionsim.regress.update import Change, UpdateResult, update_suite

__all__ = [
    "BASELINE_FILE",
    "SUITE",
    "SUITE_VERSION",
    "Case",
    "Change",
    "CheckResult",
    "Row",
    "UpdateResult",
    "check_suite",
    "load_baseline",
    "select_cases",
    "total_runs",
    "update_suite",
    "write_junit",
    "write_markdown",
]
