"""The line under estimate's step table naming the fastest step priced: among the table's rows and
the hierarchical forms its caption prices (lionsim.estimate.hier_hint.faster_forms), so a form
priced only in the caption's prose (9x beside the table's best 3.6x on nodes of 8 GPUs) is not
missed. A step time, said so: convergence (steps to target) is not in it.
"""

from __future__ import annotations

import pandas as pd

from lionsim.numbers import ms_text, speedup_text

HIER_WHERE = "priced in the note on hierarchical forms, not a row"
"""Where a hier: form named is priced: true wherever the line appears (the terminal's caption, which
prints the line first, and estimate.json's notes and report.md, which list it last)."""


def fastest_line(frame: pd.DataFrame, faster: list[tuple[str, str, dict]]) -> str:
    """"Fastest step: RUN, MS ms, SPEEDUP (...)" over `frame`'s rows and `faster`'s hier:
    forms (faster_forms' (run, form, priced row): said to be priced in the caption's note on them, not
    a row); "" where fewer than two steps were priced."""
    base = frame[frame["strategy"] + "@" + frame["transport"] == frame["baseline"]].iloc[0]
    priced = [(f"{r.strategy}@{r.transport}", float(r.step_s), "") for r in frame.itertuples(index=False)]
    priced += [(hier, float(row["step_s"]), f"; {HIER_WHERE}") for _run, hier, row in faster]
    if len(priced) < 2:
        return ""
    run, step_s, where = min(priced, key=lambda p: p[1])  # the first listed of equal steps
    return (f"Fastest step: {run}, {ms_text(step_s * 1e3)} ms, {speedup_text(float(base['step_s']) / step_s)} "
            f"(a step time, not time to target{where}).")
