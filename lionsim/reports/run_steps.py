"""How many steps a run's table title and plots say it has: the steps the bench asked for
(run.json), not a diverged run's count; where it stopped before them (run.json's status
interrupted or failed: a --resume continues it), the steps its runs ran of those and why,
"1,135 of 100,000 steps, interrupted", as `lionsim report`'s Status line says it."""

from __future__ import annotations

from typing import Iterable

from lionsim.numbers import plural
from lionsim.reports.resuming import RESUMABLE


def stopped(meta: dict | None) -> str | None:
    """Why the run stopped before the steps it asked for (run.json's status), or None."""
    status = (meta or {}).get("status")
    return status if status in RESUMABLE else None


def steps_text(counts: Iterable[int], meta: dict | None) -> str:
    """`counts`: each run's steps (steps.csv's rows a run). The steps asked for, and the steps run
    of them where the run stopped (module doc); without run.json's count, the runs' own."""
    counts = [int(n) for n in counts]
    asked = (meta or {}).get("config", {}).get("steps")
    if not isinstance(asked, int) or isinstance(asked, bool):
        return plural("/".join(map(str, dict.fromkeys(counts))), "step")
    why = stopped(meta)
    if why is None or not counts:
        return plural(asked, "step")
    low, high = min(counts), max(counts)
    ran = f"{low:,}" if low == high else f"{low:,} to {high:,}"
    return f"{ran} of {asked:,} steps{'' if low == high else ' a run'}, {why}"
