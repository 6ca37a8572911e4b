"""What an --out directory already holds, and whether a command may write there.

A command writes into an absent or empty --out. A directory holding lionsim's results of
another run (or of this one: a complete run is never replaced without a word) is refused with
one line saying what is there, unless `--overwrite`, which clears that run's files when the
new results are published: only a run that completes replaces them. A bench that stops before
it completes (interrupted, failed) over such a directory keeps its finished steps in its
`.rerun/` (`unfinished_home`), a whole run directory of its own, so the results --out held stay
whole. A sweep root (its cells are hours of training) is replaced only with `--overwrite-sweep`.
A directory holding anything lionsim did not write is refused even then: lionsim never deletes a
user's files. `bench --resume` continues the unfinished run it holds instead, its `.rerun/`
where there is one (`resumed_from`; lionsim.training.resume).

No pandas here: a command checks its --out (check_out_dir) before anything heavy loads.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from lionsim.errors import LionsimError
from lionsim.numbers import plural

REPORT_FILE = "report.md"
"""What `lionsim report DIR` writes (lionsim.reports.markdown)."""
RESULT_NAMES = ("steps.csv", "summary.csv", "run.json", REPORT_FILE, "estimate.csv", "sweep.csv", "crossover.csv",
                "to_target_crossover.csv",
                "comm.csv", "sweep.json", "sweep_steps.csv", "sweep_summary.csv", "*.png", "*.svg", "cells",
                ".resume", ".rerun", ".*.tmp", "calls.csv", "calibration.toml", "calibration.csv", "failed.json", "parts",
                "trace.json", "estimate.json")
"""Names lionsim writes into an --out (plots by extension)."""
RERUN_DIR = ".rerun"
"""Inside an --out holding results: the finished steps of a bench that was to replace them and
stopped before it completed (its CSVs, run.json and `.resume/`), where `--resume` continues it."""


KINDS = {  # kind: the files that mark it, in the order lionsim.reports.plots.redraw.detect_kind tries them
    "sweep": ("sweep_summary.csv", "sweep_steps.csv"),
    "estimate-sweep": ("sweep.csv", "crossover.csv"),
    "run": ("steps.csv",),
    "comm": ("comm.csv",),
    "estimate": ("estimate.csv",),
}
"""The kinds of --out directory `lionsim plot` redraws, by the files that mark them."""
PLOT_DIRS = "; ".join(f"{kind}: {' + '.join(files)}" for kind, files in KINDS.items())
"""The files that mark each kind `lionsim plot DIR` redraws, for its messages."""
PLOT_ACCEPTS = f"a directory holding {PLOT_DIRS}"
"""What `lionsim plot DIR` accepts, for its messages."""
REPORT_ACCEPTS = "a `lionsim bench`, `lionsim sweep` or `lionsim estimate` --out directory"
"""What `lionsim report DIR` accepts, for its messages."""


def check_dir(path: Path, accepted: str, name: str = "DIR") -> None:
    """A directory a command reads (plot's and report's DIR, a run's): refused in one line naming
    `name`, the path and what is `accepted` when it is a file or absent, before anything heavy loads."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise LionsimError(f"bad {name} {path}: it is a file; accepted: {accepted}")
    if not path.is_dir():
        raise LionsimError(f"bad {name} {path}: it does not exist; accepted: {accepted}")


def plot_kind(path: Path) -> str:
    """The kind of directory `lionsim plot` redraws `path` as (KINDS), by the files present; fails in
    one line where it holds none, or part of one, before pandas and matplotlib load."""
    path = Path(path)
    check_dir(path, PLOT_ACCEPTS)
    for kind, files in KINDS.items():
        present = [f for f in files if (path / f).is_file()]
        if present and len(present) < len(files):
            missing = [f for f in files if f not in present]
            raise LionsimError(f"{path} has {', '.join(present)} but not {', '.join(missing)}: an incomplete {kind}")
        if present:
            return kind
    raise LionsimError(f"{path} holds no plottable CSV; expected {PLOT_DIRS}")


REPORTED = ("sweep_summary.csv", "steps.csv", "sweep.csv", "estimate.csv")
"""The files `lionsim report` tells a directory's kind by (lionsim.reports.markdown.write_report)."""


def check_reportable(path: Path) -> None:
    """`lionsim report DIR`: DIR holds one of REPORTED, else one line, before pandas loads."""
    path = Path(path)
    check_dir(path, REPORT_ACCEPTS)
    if not any((path / name).is_file() for name in REPORTED):
        raise LionsimError(f"{path} holds neither steps.csv (a bench run), sweep_summary.csv (a sweep), "
                           "sweep.csv (an estimate sweep) nor estimate.csv (an estimate); `lionsim report` needs "
                           "one of them (summary.csv and run.json are read when present)")


def check_out_dir(path: Path, option: str = "--out") -> None:
    """Fail now, before any work and without creating anything, unless `path` is (or can be
    created as) a directory we may write into: its nearest existing ancestor must be one."""
    path = Path(path)
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise LionsimError(f"bad {option} {path}: {probe} is not a directory; accepted: a writable directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise LionsimError(f"bad {option} {path}: {probe} is not writable; accepted: a writable directory")


def make_dir(path: Path) -> Path:
    """mkdir -p, failing with one line (LionsimError) where the directory cannot be made."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise LionsimError(f"cannot create directory {path}: {e.strerror or e}") from None
    return path


@dataclass(slots=True)
class Held:
    """What a directory holds."""

    kind: str
    """absent | empty | bench | sweep | estimate | comm | files (lionsim's plots alone) | foreign."""
    ours: list[Path] = field(default_factory=list)
    """Entries lionsim wrote."""
    foreign: list[Path] = field(default_factory=list)
    """Entries it did not."""
    meta: dict | None = None
    """A bench run's run.json (None if unreadable or absent)."""

    def describe(self, out: Path) -> str:
        if self.kind == "bench":
            m = self.meta or {}
            cfg = m.get("config", {})
            runs, status, steps = len(m.get("runs", [])), str(m.get("status", "finished")), cfg.get("steps", "?")
            article = "an" if status[:1] in "aeiou" else "a"  # an interrupted, a failed
            return (f"{out} holds {article} {status} bench run ({cfg.get('workload', '?')}, "
                    f"{plural(runs, 'run')}, {plural(steps, 'step')})")
        if self.kind == "sweep":
            cells = len([p for p in (out / "cells").iterdir() if not p.name.startswith(".")]) if (out / "cells").is_dir() else 0
            return f"{out} is a sweep root ({cells} cells)"
        if self.kind in ("estimate", "comm"):
            return f"{out} holds a `lionsim {self.kind}` output"
        return f"{out} holds lionsim's files ({', '.join(p.name for p in self.ours[:3])})"


def _ours(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in RESULT_NAMES)


def held(out: Path) -> Held:
    """Classify `out` (a path that may not exist)."""
    out = Path(out)
    if not out.exists():
        return Held("absent")
    if not out.is_dir():
        raise LionsimError(f"bad --out {out}: it is a file; accepted: a directory")
    entries = sorted(out.iterdir())
    if not entries:
        return Held("empty")
    ours = [p for p in entries if _ours(p.name)]
    foreign = [p for p in entries if not _ours(p.name)]
    names = {p.name for p in ours}
    meta = None
    if "sweep.json" in names:
        kind = "sweep"
    elif "run.json" in names or "steps.csv" in names:
        kind = "bench"
        try:
            meta = json.loads((out / "run.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            meta = None
    elif "estimate.csv" in names or "sweep.csv" in names or "estimate.json" in names:
        kind = "estimate"
    elif "comm.csv" in names:
        kind = "comm"
    else:
        kind = "files" if ours else "foreign"
    return Held(kind, ours, foreign, meta if isinstance(meta, dict) else None)


def claim_out(out: Path, overwrite: bool = False, overwrite_sweep: bool = False, resume: bool = False) -> Held:
    """Fail (one line, nothing written) unless this command may write into `out`; return what
    it holds (the caller clears `ours` on publishing when overwriting)."""
    out = Path(out)
    what = held(out)
    if what.kind in ("absent", "empty"):
        return what
    if what.foreign:
        names = ", ".join(p.name + ("/" if p.is_dir() else "") for p in what.foreign[:3])
        more = f" and {len(what.foreign) - 3} more" if len(what.foreign) > 3 else ""
        raise LionsimError(f"--out {out} holds files lionsim did not write ({names}{more}); lionsim never deletes "
                           "them: choose another --out (a new or empty directory)")
    if resume:
        return what
    if what.kind == "sweep" and not overwrite_sweep:
        hint = "--overwrite-sweep replaces it" if overwrite else "pass --overwrite-sweep to replace it"
        raise LionsimError(f"{what.describe(out)}; --overwrite never clears a sweep: {hint} "
                           "(its cells too), or choose another --out")
    if overwrite or overwrite_sweep:
        return what
    hint = "pass --overwrite to replace it"
    if resumed_from(out) != out:
        hint = (f"an unfinished rerun is kept in {out / RERUN_DIR}: pass --resume to continue it (same options), "
                "--overwrite to start another")
    elif what.kind == "bench" and (what.meta or {}).get("status") in ("interrupted", "failed"):
        hint = "pass --resume to continue it (same options), --overwrite to replace it"
    raise LionsimError(f"{what.describe(out)}; {hint}, or choose another --out")


def resumed_from(out: Path) -> Path:
    """Where the run `bench --resume` continues lives: the unfinished rerun kept in --out's
    `.rerun/` where there is one (it is newer than what --out holds), else --out itself."""
    rerun = Path(out) / RERUN_DIR
    return rerun if (rerun / "run.json").is_file() else Path(out)


def unfinished_home(out: Path, resume: bool) -> Path:
    """Where a bench that stops before it completes publishes its finished steps: where the run it
    continues lives (--resume), else --out where that holds nothing, else --out's `.rerun/`: the
    results --out holds are replaced only by a run that completes. Decided before anything trains."""
    if resume:
        return resumed_from(out)
    return Path(out) if held(out).kind in ("absent", "empty") else Path(out) / RERUN_DIR


def clear(out: Path, entries: list[Path]) -> None:
    """Remove the entries lionsim wrote (a previous run's files) from `out`."""
    for path in entries:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
