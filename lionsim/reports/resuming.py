"""How a run directory that did not finish goes on, in the words the commands print when they stop
and `lionsim report` repeats in its Reproduce section (here, below both: reports is the bottom layer).

A bench whose run.json is `interrupted` or `failed` continues with the same command and --resume
(lionsim.training.resume: it keeps the finished runs and trains the rest); --overwrite would start
it over, discarding the kept steps. A bench that was to replace the results --out holds keeps its
steps in --out's `.rerun/` instead, and says that --out still holds them (`Unfinished`). A sweep
resumes by running the same command into the same --out: it skips the finished cells and trains
the rest (and retries the failed ones).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

RESUMABLE = ("interrupted", "failed")
"""run.json statuses a --resume continues."""
FAILED_FILE = "failed.json"
"""A sweep root's record of its failed cells (lionsim.sweep.store writes it)."""
SWEEP_RESUMES = "rerun the same command to resume"
"""What an interrupted sweep says to do (the command's line, the report's note)."""


SAME_COMMAND = "the same command with --resume"
"""How a bench that did not finish goes on, in words (with --resume in place of an --overwrite)."""


def continues(label: str | None = None, step: int | None = None, command: str = SAME_COMMAND) -> str:
    """What `--resume` will do, in words: continue `label` after its finished step `step` where its
    state was kept, else train the runs that did not finish."""
    if label is not None and step is not None:
        return f"{command} continues {label} from step {step + 1}"
    return f"{command} trains the runs that did not finish"


@dataclass(frozen=True, slots=True)
class Unfinished:
    """Where a bench that stops before it completes keeps its finished steps
    (lionsim.reports.outdir.unfinished_home, decided before it trains), and the words that say so."""

    out: Path
    home: Path
    """--out itself, or its `.rerun/` where --out holds results this run was to replace."""
    resumed: bool = False
    """This session continued the run in `home` (--resume): the states saved there are its own."""
    flag: str | None = None
    """--overwrite or --overwrite-sweep where given: --resume takes its place in the same command."""

    def kept(self, steps: int | None = None) -> str:
        """`N finished steps kept in HOME`, and where that is a `.rerun/`, that --out is as it was."""
        where = f"{'' if steps is None else f'{steps} '}finished steps kept in {self.home}"
        if Path(self.home) == Path(self.out):
            return where
        return f"{where} ({self.out} still holds its previous results: only a run that completes replaces them)"

    @property
    def command(self) -> str:
        """The command that continues it."""
        return SAME_COMMAND + (f" in place of {self.flag}" if self.flag and not self.resumed else "")


def report_removed(path: Path, described: str = "the sweep before this run") -> str:
    """The line a sweep (a rerun that changed its results) or a bench's --resume says on stderr when
    it removes the report.md `lionsim report` wrote at `path`, which `described` what is now replaced."""
    return f"removed {path}: it described {described}; `lionsim report {Path(path).parent}` writes it again"


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
