"""Cross-checks that catch a wrong algorithm even when the baseline was written from it.

On the held-out loss at the end of each run (eval_loss), with U the untrained model's:

- check:beats-untrained: every run gets its eval_loss at least LEARN_FRACTION below U:
  eval_loss <= (1 - LEARN_FRACTION) * U.
- check:mavo-vs-lion: every dlion-mavo run (any transport) keeps at least (1 - slack) of
  global Lion's loss reduction on the same seed, slack being the case's `mavo_slack` (0.2
  on i.i.d. data, 0.6 under label skew; see cases.py):
  eval_loss(mavo) <= eval_loss(lion) + slack * (U - eval_loss(lion)).
  Distributed Lion's claim is that the vote costs little against Lion (Liu et al. 2024);
  a flipped vote or a transport that corrupts a chunk loses far more than that.

The margins are stated, not fitted; they were checked against seeds 0-4 of every case
(`--update` warns when a calibration seed fails one: the margin has become tight).
"""

from __future__ import annotations

from lionsim.regress.rows import CROSS_CHECK_PREFIX, FAILED, PASS, Row
from lionsim.regress.runner import CaseRun

LEARN_FRACTION = 0.2
"""Every run must end at least this fraction below the untrained model's held-out loss
(the worst run of seeds 0-4 ended at 0.69 of it)."""

BEATS_UNTRAINED = CROSS_CHECK_PREFIX + "beats-untrained"
MAVO_VS_LION = CROSS_CHECK_PREFIX + "mavo-vs-lion"


def _row(run: CaseRun, label: str, name: str, reference: float, now: float, margin: float,
         limit: float, what: str) -> Row:
    ok = now <= limit
    note = f"eval_loss {now:.4f} {'<=' if ok else '>'} {limit:.4f} ({what})"
    return Row(case=run.case.name, run=label, metric=name, verdict=PASS if ok else FAILED,
               baseline=reference, now=now, tol=margin, note=note)


def cross_checks(run: CaseRun) -> list[Row]:
    """The cross-check rows of one case run (runs that did not finish are skipped: they failed)."""
    untrained = run.untrained_eval_loss
    rows = []
    for label in run.labels:
        if label not in run.metrics:
            continue
        margin = LEARN_FRACTION * untrained
        rows.append(_row(run, label, BEATS_UNTRAINED, untrained, run.metrics[label]["eval_loss"], margin,
                         untrained - margin, f"untrained {untrained:.4f} - {LEARN_FRACTION:g} of it"))
    lion = next((lb for lb in run.labels if lb.partition("@")[0] == run.case.reference), None)
    if lion is None or lion not in run.metrics:
        return rows
    lion_loss = run.metrics[lion]["eval_loss"]
    for label in run.labels:
        if label.partition("@")[0] in run.case.checked and label in run.metrics:
            slack = run.case.mavo_slack
            margin = slack * (untrained - lion_loss)
            rows.append(_row(run, label, MAVO_VS_LION, lion_loss, run.metrics[label]["eval_loss"], margin,
                             lion_loss + margin, f"{lion} {lion_loss:.4f} + {slack:g} of its gain"))
    return rows
