"""The line an interruption says when it stops a command before the command wrote anything (while
lionsim loads, plans or prices, or a bench before its first new step): no results were written,
and what `--out` holds, which is what it held (docs/outputs.md, "A run's files are safe").

A command names its --out (`watch`) once it has checked it; what --out holds is read when the
interruption comes, so the line says what is there then: nothing, a bench's finished steps that
`--resume` continues, or the results a run with --overwrite was to replace. Once the command has
published its files (`published`), an interruption (while the tables print) says they are there.
"""

from __future__ import annotations

from pathlib import Path

_WATCHED: list[tuple[Path, bool, bool]] = []
"""This command's --out, whether it resumes the run there and whether this command's results are
published there (one entry at most)."""


def watch(out: Path | None, resume: bool = False) -> None:
    """The --out an interruption of this command describes (None: it writes no --out)."""
    _WATCHED[:] = [] if out is None else [(Path(out), resume, False)]


def published(out: Path | None) -> None:
    """This command's results are in `out` now (None: it wrote none): an interruption says so."""
    _WATCHED[:] = [] if out is None else [(Path(out), False, True)]


def forget() -> None:
    """A new command line: no --out yet (main runs commands one after another in one process)."""
    _WATCHED.clear()


def interrupted_line(how: str = "interrupted") -> str:
    """`how`: no results were written, and what the watched --out holds; or, once they were
    published, that --out holds them (module doc)."""
    from lionsim.errors import LionsimError
    from lionsim.reports.outdir import held, resumed_from
    from lionsim.reports.resuming import continues

    nothing = f"{how}: no results were written"
    if not _WATCHED:
        return nothing
    out, resume, written = _WATCHED[0]
    if written:
        return f"{how} after the results were written: {out} holds this command's results"
    try:
        kind = held(out).kind
    except LionsimError:  # --out is a file: refused before anything runs, nothing to describe
        return nothing
    if kind in ("absent", "empty"):
        return nothing
    home = resumed_from(out)
    steps = _rows(home / "steps.csv") if resume else 0
    if steps:
        return (f"{how} before any new step: {home} is as it was ({steps:,} finished steps kept); "
                f"{continues()}")
    return f"{nothing}; {out} " + ("is as it was" if kind == "foreign" else "still holds its previous results")


def _rows(path: Path) -> int:
    """Data rows of a CSV (0 if it is absent or unreadable)."""
    try:
        with open(path, "rb") as f:
            return max(0, sum(1 for _ in f) - 1)
    except OSError:
        return 0
