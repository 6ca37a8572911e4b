"""The caption's line where a run exchanged per bucket (or tensor) during backward steps slower than
the same run exchanging once after backward.

Per bucket each exchange pays a call's latency at a smaller call's rate: NCCL's tuning model runs a
25 MB all-reduce over sockets as a tree at less bandwidth than one 1.4 GB call after backward gets
as a ring (lionsim.network.nccl), and published sweeps of real NCCL there are if anything slower.
Where backward is too short to hide the difference (a large model on a slow link), the step per
bucket is the slower one, and every speedup against it grows with it. Per bucket is what DDP runs,
so the table keeps it; this line names each such run with both steps, the second priced by the
table's own machinery (the same run under --overlap none), and says what changes it.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from lionsim.estimate.config import Resolved
from lionsim.estimate.table import estimate_rows
from lionsim.numbers import TIE, ms_text
from lionsim.schedules import AFTER_BACKWARD


def after_backward_steps(r: Resolved, frame: pd.DataFrame, memo: dict | None = None) -> dict[str, float]:
    """{run: its step after backward} for each run of `frame` (an estimate on `r`) exchanged per
    bucket or tensor whose step, priced again under --overlap none, is shorter by more than TIE;
    `memo`: the estimate's (lionsim.estimate.table.estimate_rows), so no question is asked twice."""
    during = {f"{row.strategy}@{row.transport}": row.step_s for row in frame.itertuples(index=False)
              if row.overlap != AFTER_BACKWARD}
    if not during:
        return {}
    runs = [run for run in r.runs if run.label in during]
    after = dataclasses.replace(r, runs=runs, overlap=dataclasses.replace(r.overlap, mode="none"), baseline=None,
                                convergence=None, run_steps=None, run_tokens=None)
    priced = {f"{row['strategy']}@{row['transport']}": row["step_s"]
              for row in estimate_rows(after, r.workers, r.network, memo)}
    return {run: priced[run] for run, step in during.items() if priced[run] < step * (1 - TIE)}


def slower_line(r: Resolved, frame: pd.DataFrame, memo: dict | None = None) -> str:
    """The caption's sentence on the runs after_backward_steps names: each with its step as priced
    and after backward, why, and what changes it; "" where none is slower."""
    slower = after_backward_steps(r, frame, memo)
    if not slower:
        return ""
    rows = {f"{row.strategy}@{row.transport}": row for row in frame.itertuples(index=False)}
    said = "; ".join(f"{run} {ms_text(rows[run].step_s * 1e3)} ms per {rows[run].overlap.removesuffix('s')}, "
                     f"{ms_text(step * 1e3)} ms after backward" for run, step in slower.items())
    nccl = all(rows[run].library == "nccl" for run in slower)
    cause = ("each exchange pays a call's latency at a smaller call's rate"
             + (" (NCCL's model gives a mid-size call less bandwidth than one large call)" if nccl else ""))
    bucketed = any(rows[run].overlap == "buckets" for run in slower)
    cause += "" if bucketed else " and each codec kernel runs once a tensor"  # --overlap tensors
    fix = ("A larger --bucket-mb sends fewer, larger calls, but hides less behind backward; --overlap"
           if bucketed else "--overlap")
    ratios = ", ".join(f"{rows[run].step_s / step:.2f}x for {run}" for run, step in slower.items())
    return (f"Per bucket or tensor {cause}, more than backward hides here: {said} (so a speedup against such a "
            f"step is larger than against one exchange after backward by that ratio: {ratios}). {fix} none prices "
            "one exchange after backward.")
