"""How a run directory that did not finish goes on, in the words the commands print when they stop
and `lionsim report` repeats in its Reproduce section (here, below both: reports is the bottom layer).

A bench whose run.json is `interrupted` or `failed` continues with the same command and --resume
(lionsim.training.resume: it keeps the finished runs and trains the rest); --overwrite would start
it over, discarding the kept steps. A sweep resumes by running the same command into the same
--out: it skips the finished cells and trains the rest (and retries the failed ones).
"""

from __future__ import annotations

RESUMABLE = ("interrupted", "failed")
"""run.json statuses a --resume continues."""
FAILED_FILE = "failed.json"
"""A sweep root's record of its failed cells (lionsim.sweep.store writes it)."""
SWEEP_RESUMES = "rerun the same command to resume"
"""What an interrupted sweep says to do (the command's line, the report's note)."""


def continues(label: str | None = None, step: int | None = None) -> str:
    """What `--resume` will do, in words: continue `label` after its finished step `step` where its
    state was kept, else train the runs that did not finish."""
    if label is not None and step is not None:
        return f"the same command with --resume continues {label} from step {step + 1}"
    return "the same command with --resume trains the runs that did not finish"


def resumable(meta: dict | None) -> bool:
    """Whether a bench's run.json says the run did not finish and --resume continues it."""
    return (meta or {}).get("status") in RESUMABLE


def bench_note(meta: dict | None) -> str | None:
    """The Reproduce section's line for a bench that did not finish (None where it finished)."""
    if not resumable(meta):
        return None
    why = "failed: run.json's error says why" if meta["status"] == "failed" else meta["status"]
    return f"The run did not finish ({why}): {continues()} (--overwrite instead starts it over, discarding the steps kept)."


def sweep_note(meta: dict | None, finished: int, failed: bool = False) -> str | None:
    """The Reproduce section's line for a sweep (sweep.json `meta`) with `finished` cells of its
    grid's, where some are left to train or `failed` (failed.json); None where every cell finished,
    and for a shard's part, whose grid count is the whole sweep's (`sweep merge` says what is missing)."""
    meta = meta or {}
    cells = meta.get("cells")
    short = isinstance(cells, int) and finished < cells
    if meta.get("shard") is not None or not (short or failed):
        return None
    done = f"{finished} of {cells} cells finished" + (", some failed" if failed else "") if short else "Some cells failed"
    again = "trains the rest" + (", the failed ones included" if failed else "") if short else "retries the failed ones"
    return f"{done}: {SWEEP_RESUMES} (into the same --out it skips the finished cells and {again})."
