"""The line under estimate's step table naming the fastest step priced: among the table's rows and
the hierarchical forms its caption prices (lionsim.estimate.hier_hint.faster_forms), so a form
priced only in the caption's prose (9x beside the table's best 3.6x on nodes of 8 GPUs) is not
missed. A step time, said so: convergence (steps to target) is not in it.

Memory first: the line names the fastest run that fits on its worker (each priced row's
`memory_fits`, lionsim.estimate.memory; a hier: form's row is priced as the table prices a run, so
it holds its flat form's weights and state), and says in the same line where a faster run does
not fit, or where none does. Ties are the project's (lionsim.numbers.TIE): every run within TIE of
the least step is named, bit-identical ones too, and where the baseline is among them no run is
faster than it by more than the margin, so there is no line.
"""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd

from lionsim.estimate.memory import worker_text
from lionsim.reports.columns import label_name, rounds_of
from lionsim.numbers import TIE, ms_text, speedup_text

HIER_WHERE = "priced in the note on hierarchical forms, not a row"
"""Where a hier: form named is priced: true wherever the line appears (the terminal's caption, which
prints the line first, and estimate.json's notes and report.md, which list it last)."""


class Priced(NamedTuple):
    """One step priced: the run (strategy@transport), its step, whether it is a hier: form of the
    caption (not a row), its row (for memory)."""

    run: str
    step_s: float
    hier: bool
    row: dict


def fits(row: dict) -> bool:
    """Whether a priced row fits on its worker (`memory_fits`; a bool, or its text read back from a
    CSV); True where the row has no memory figure."""
    value = row.get("memory_fits", True)
    return str(value) != "False"


def _named(group: list[Priced], rounds: dict[str, int]) -> str:
    """The runs of a tie group (TIE), in the order listed, named as the table names them (H too)."""
    runs = ", ".join(label_name(p.run, rounds) for p in group)
    return runs if len(group) == 1 else f"{runs} (tied within {TIE:.1%})"


def _over_text(p: Priced, base: dict, rounds: dict[str, int]) -> str:
    """The clause on a run that steps faster than the one named but does not fit on its worker."""
    return (f"{label_name(p.run, rounds)} steps faster ({ms_text(p.step_s * 1e3)} ms, "
            f"{speedup_text(float(base['step_s']) / p.step_s)}) but does not fit on {worker_text(p.row)}")


def fastest_line(frame: pd.DataFrame, faster: list[tuple[str, str, dict]]) -> str:
    """"Fastest step: RUN, MS ms, SPEEDUP (...)" over `frame`'s rows and `faster`'s hier:
    forms (faster_forms' (run, form, priced row)), by the module doc's rules; "" where fewer than
    two steps were priced or the baseline ties the fastest."""
    baseline = str(frame["baseline"].iloc[0])
    rows = frame.to_dict("records")
    base = next(row for row in rows if f"{row['strategy']}@{row['transport']}" == baseline)
    priced = [Priced(f"{row['strategy']}@{row['transport']}", float(row["step_s"]), False, row) for row in rows]
    priced += [Priced(hier, float(row["step_s"]), True, row) for _run, hier, row in faster]
    if len(priced) < 2:
        return ""
    fitting = [p for p in priced if fits(p.row)]
    pool = fitting or priced  # none fits: the fastest of all, said so
    best = min(p.step_s for p in pool)
    group = [p for p in pool if p.step_s <= best * (1 + TIE)]  # listed order; bit-identical steps tie
    over = [p for p in priced if not fits(p.row) and p.step_s < best * (1 - TIE)]  # faster, and does not fit
    rounds = rounds_of(frame)
    faster_over = "" if not over or not fitting else _over_text(min(over, key=lambda p: p.step_s), base, rounds)
    if any(p.run == baseline and not p.hier for p in group):  # none faster than the baseline by more than TIE
        return (f"Fastest step: none that fits is faster than the baseline ({baseline}) by more than {TIE:.1%}; "
                f"{faster_over}.") if faster_over else ""
    where = ["a step time, not time to target"]
    hiers = [p.run for p in group if p.hier]
    if hiers:
        where.append(HIER_WHERE if len(group) == 1 else f"{', '.join(hiers)} {HIER_WHERE}")
    if not fitting:
        where.append(f"no run fits on {worker_text(group[0].row)} unsharded")
    elif faster_over:
        where.append(faster_over)
    return (f"Fastest step: {_named(group, rounds)}, {ms_text(best * 1e3)} ms, "
            f"{speedup_text(float(base['step_s']) / best)} ({'; '.join(where)}).")
