"""A run's output directory, written whole: staged beside --out, then published.

Every file of a run (CSVs, run.json, plots) is written into a hidden staging directory beside
--out (`.NAME.partial`), made (and written to once) before any work, so an --out that cannot
be written is refused up front; files are flushed as runs finish and only then moved into
--out: into an absent or empty --out as one rename (atomic); over an --out holding only lionsim's
files (a previous run's, which the command's --out check allowed: --overwrite or --resume) by
setting it aside and renaming the staged directory in its place (two renames: a process killed
in between leaves both beside --out, never a mix of two runs' files); else file by file with
os.replace (each atomic), after clearing the files lionsim wrote there before
(lionsim.reports.outdir says which files are lionsim's, and never touches any other). A failure
while writing (a full disk) leaves --out as it was and removes the staging directory; a run
that fails part way publishes what finished, marked in run.json, where
lionsim.reports.outdir.unfinished_home says: into --out, or into its `.rerun/` (`publish(into=)`:
the staged directory renamed there whole, the previous one set aside first), leaving the
results --out holds as they were. A process killed between the two renames leaves the previous
folder set aside (`.NAME.old`, `.NAME.rerun.old`) with its place empty: `put_back` moves it back
before the next command reads --out, where it would otherwise be removed by the next publish.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path
from typing import Callable, Iterator

from lionsim.errors import LionsimError
from lionsim.reports.files import WriteError, write_failed
from lionsim.reports.outdir import RERUN_DIR, clear, held


PROBE = ".lionsim-probe"


def aside(out: Path, into: Path | None = None) -> Path:
    """Where a publish sets aside the folder it replaces: --out's own (`.NAME.old`), or `into`'s
    inside it (`.NAME.rerun.old` for --out's `.rerun/`), beside --out."""
    out = Path(out)
    return out.parent / f".{out.name}{'' if into is None else Path(into).name}.old"


def put_back(out: Path, inside: tuple[str, ...] = (RERUN_DIR,)) -> list[str]:
    """Move back what a publish killed between its two renames set aside: `.NAME.old` where --out is
    gone, `.NAME.rerun.old` where --out's `.rerun/` is (`inside`: the folders in --out published
    whole); one note for each. One whose place is taken is what a completed publish was removing:
    the next publish removes it. Call holding --out's lock (lionsim.reports.out_lock)."""
    notes = []
    for left, place in set_aside(out, inside):
        try:
            os.rename(left, place)
        except OSError as e:
            raise LionsimError(f"bad --out {out}: {left} holds the files a stopped publish set aside and cannot be "
                               f"moved back to {place} ({e.strerror or e}); accepted: move it back by hand") from None
        notes.append(f"note: moved {left} back to {place}: a publish stopped between its two renames had set it "
                     "aside (the files it was publishing are not kept)")
    return notes


def set_aside(out: Path, inside: tuple[str, ...] = (RERUN_DIR,)) -> Iterator[tuple[Path, Path]]:
    """(what a stopped publish set aside, where it goes back) for each that put_back moves, --out's
    own first: each is looked at once the one before is back (a `.rerun/` goes back into an --out
    that was itself set aside)."""
    out = Path(out)
    for into in (None, *(out / name for name in inside)):
        left, place = aside(out, into), out if into is None else into
        if left.is_dir() and not place.exists() and (into is None or out.is_dir()):
            yield left, place


def put_back_awaited(out: Path, seconds: float, inside: tuple[str, ...] = (RERUN_DIR,), who: str = "this rank",
                     say: Callable[[str], None] | None = None) -> None:
    """Wait, at most `seconds`, until another process has put back what a stopped publish set aside
    beside `out` (torchrun's rank 0, which holds --out's lock): a rank that read --out before then
    would decide where the run is kept or resumed from another state than rank 0 does. What is left
    after `seconds` (rank 0 stopped first; another machine's own disk) is read as it is. A wait
    that may last the whole --timeout is not silent: `say` (None: a line on stderr) is told when
    `who` starts waiting, for what and up to how long, and when it gives up."""
    say = say or (lambda line: print(line, file=sys.stderr, flush=True))
    left = [str(p) for p, _place in set_aside(out, inside)]
    if not left or seconds <= 0:
        return
    say(f"note: {who} waits up to {seconds:g} s for rank 0 to put back {', '.join(left)} (set aside by a stopped "
        f"publish) before it reads {out}")
    deadline = time.monotonic() + seconds
    while any(set_aside(out, inside)) and time.monotonic() < deadline:
        time.sleep(0.05)
    if still := [str(p) for p, _place in set_aside(out, inside)]:
        say(f"note: {who}: {', '.join(still)} still set aside after {seconds:g} s; {out} read as it is")


class RunDir:
    """The staging directory of one run's outputs and where they are published."""

    def __init__(self, out: Path) -> None:
        self.out = Path(out)
        self.stage = self.out.parent / f".{self.out.name or 'out'}.partial"
        self._made: list[Path] = []

    def prepare(self) -> None:
        """Before any work: a fresh staging directory, written to once, or one line saying why not
        (a read-only or missing file system, no permission) with nothing left behind."""
        self.discard()  # what a killed run left
        missing = [p for p in self.stage.parents if not p.exists()]
        try:
            self.stage.mkdir(parents=True)
            self._made = missing  # deepest first: removed again if nothing is published (abandon)
            (self.stage / PROBE).write_bytes(b"")
            (self.stage / PROBE).unlink()
        except OSError as e:
            self.abandon()
            raise LionsimError(f"bad --out {self.out}: cannot write beside it ({self.stage}: {e.strerror or e}); "
                               "accepted: a directory this user may create and write") from None

    def write(self, write: Callable[[Path], list[Path]]) -> list[Path]:
        """Call `write(stage_dir)`; a full disk or any OS error becomes one LionsimError line."""
        try:
            self.stage.mkdir(parents=True, exist_ok=True)
            return write(self.stage)
        except OSError as e:
            self.discard()
            raise write_failed(self.out, e) from None
        except WriteError as e:  # a file of the run could not be written (write_atomic)
            self.discard()
            raise write_failed(self.out, e.cause) from None

    def publish(self, into: Path | None = None) -> list[Path]:
        """Move every staged file into --out (or `into`: --out's `.rerun/`, where a run that did
        not complete keeps its steps beside the results --out holds); return their final paths."""
        names = sorted(p.name for p in self.stage.iterdir()) if self.stage.is_dir() else []
        if into is not None and Path(into) != self.out:
            return self._publish_inside(Path(into), names)
        try:
            self.out.parent.mkdir(parents=True, exist_ok=True)
            if self.out.is_dir() and any(self.out.iterdir()) and self._swap():
                return [self.out / name for name in names]
            if self.out.is_dir():
                clear(self.out, held(self.out).ours)  # a previous run's files: none of this run's may mix with them
            if not self.out.exists() or (self.out.is_dir() and not any(self.out.iterdir())):
                if self.out.exists():
                    self.out.rmdir()
                os.rename(self.stage, self.out)
            else:
                for name in names:
                    if (self.out / name).is_dir() and not (self.out / name).is_symlink():
                        shutil.rmtree(self.out / name)  # os.replace cannot replace a directory that holds files
                    os.replace(self.stage / name, self.out / name)
                self.discard()
        except OSError as e:
            raise LionsimError(f"cannot publish {self.out}: {e.strerror or e}; the files are in {self.stage}") from None
        return [self.out / name for name in names]

    def _swap(self) -> bool:
        """Replace an --out that holds only lionsim's files by the staged directory in two renames
        (the old one set aside, then removed), so a process killed while publishing leaves the old
        run or the new one, never a mix; False where it cannot (other files in --out, a symlink, the
        working directory), and --out is then replaced file by file."""
        if self.out.is_symlink() or held(self.out).foreign:
            return False
        old = aside(self.out)
        shutil.rmtree(old, ignore_errors=True)
        try:
            os.rename(self.out, old)
        except OSError:
            return False
        try:
            os.rename(self.stage, self.out)
        except OSError:
            os.rename(old, self.out)
            raise
        shutil.rmtree(old, ignore_errors=True)
        return True

    def _publish_inside(self, into: Path, names: list[str]) -> list[Path]:
        """The staged directory renamed into `into` (inside --out) whole: a previous one is set aside
        beside --out first and then removed, so a process killed in between leaves one or the other;
        nothing else in --out is touched."""
        old = aside(self.out, into)
        shutil.rmtree(old, ignore_errors=True)
        try:
            if into.exists():
                os.rename(into, old)
            try:
                os.rename(self.stage, into)
            except OSError:
                if old.exists():
                    os.rename(old, into)
                raise
        except OSError as e:
            raise LionsimError(f"cannot publish {into}: {e.strerror or e}; the files are in {self.stage}") from None
        shutil.rmtree(old, ignore_errors=True)
        return [into / name for name in names]

    def discard(self) -> None:
        shutil.rmtree(self.stage, ignore_errors=True)

    def abandon(self) -> None:
        """Nothing will be published: the staging directory goes, and the parents `prepare` made."""
        self.discard()
        for parent in getattr(self, "_made", []):
            try:
                parent.rmdir()
            except OSError:
                break
