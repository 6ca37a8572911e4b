"""steps.csv, summary.csv and run.json: written atomically, read back with their columns checked.

Every file is first written in full to a hidden temp file in the same directory and only then
moved over its final name with os.replace (atomic on POSIX and Windows), so an interrupted or
failing run leaves either the old file or the new one, never half of one. write_run stages all
three files before replacing any, so a failure while writing leaves the previous run intact.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, TextIO

import numpy as np
import pandas as pd

from lionsim.errors import LionsimError, a_type, json_type
from lionsim.reports.outdir import check_dir
from lionsim.reports.outdir import make_dir as _make_dir
from lionsim.reports.columns import SUMMARY_REQUIRED, STEP_COLUMNS, TEXT_COLUMNS, check_columns, run_label
from lionsim.reports.formats import write_csv

STEPS_FILE = "steps.csv"
SUMMARY_FILE = "summary.csv"
META_FILE = "run.json"
CALLS_FILE = "calls.csv"
"""Every measured collective of a run on a real backend (lionsim.training.booking.CALL_COLUMNS)."""
_PANDAS_MAJOR = int(pd.__version__.split(".")[0])


def current_umask() -> int:
    """The process's umask now (read and put back: os has no getter), which every file written
    honours, as open() does; read at each write, so a umask set after import counts."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class WriteError(LionsimError):
    """Writing an output file failed (a full disk, no permission): one line, nothing half-written."""

    def __init__(self, message: str, cause: OSError) -> None:
        super().__init__(message)
        self.cause = cause


def write_failed(path: Path, err: OSError, kept: str = "nothing was written") -> WriteError:
    """The one line for an OS error while writing `path` (ENOSPC: the disk is full)."""
    if err.errno == errno.ENOSPC:
        return WriteError(f"no space left on the device writing {path}: {kept}", err)
    return WriteError(f"cannot write {path}: {err.strerror or err}; {kept}", err)


def _stage(path: Path, write: Callable[[Any], None], binary: bool = False) -> Path:
    """Write a complete temp file next to `path` and return it; on failure remove it and fail
    with a WriteError (one line) for an OS error, or re-raise anything else."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise write_failed(path, e) from None
    try:
        os.fchmod(fd, 0o666 & ~current_umask())  # mkstemp makes 0600; a result file is as readable as any other
        with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        os.unlink(tmp)
        raise write_failed(path, e) from None
    except BaseException:
        os.unlink(tmp)
        raise
    return Path(tmp)


@dataclass(slots=True)
class _Batch:
    """What one `written_together` block has done so far."""

    staged: list[tuple[Path, Path]] = field(default_factory=list)
    """(temp file, final name) of each write_atomic."""
    made: list[Path] = field(default_factory=list)
    """Folders make_dir created, each before its parents."""


_TOGETHER: list[_Batch] = []
"""Open `written_together` blocks, innermost last."""


@contextmanager
def written_together() -> Iterator[None]:
    """Every write_atomic inside the block is staged, and the files replace their final names
    only when the block ends without an error: a command's files appear together or not at all
    (a full disk while drawing the fifth plot leaves the directory as it was), and the folders
    make_dir created for them go again (as an --out's parents do: lionsim.reports.publish).
    Nested blocks join the outermost."""
    batch = _Batch()
    _TOGETHER.append(batch)
    try:
        yield
    except BaseException:
        for tmp, _ in batch.staged:
            tmp.unlink(missing_ok=True)
        for folder in batch.made:  # deepest first; one holding what was not staged here stays
            with suppress(OSError):
                folder.rmdir()
        raise
    finally:
        _TOGETHER.pop()
    if _TOGETHER:
        _TOGETHER[-1].staged.extend(batch.staged)
        _TOGETHER[-1].made[:0] = batch.made  # deeper folders first
        return
    for tmp, final in batch.staged:
        os.replace(tmp, final)


def make_dir(path: Path) -> Path:
    """mkdir -p, failing with one line where the directory cannot be made (outdir.make_dir); inside
    a `written_together` block, the folders it created are removed if the block fails."""
    path = Path(path)
    missing = [p for p in (path, *path.parents) if not p.exists()]
    _make_dir(path)
    if _TOGETHER:
        _TOGETHER[-1].made[:0] = missing
    return path


def write_atomic(path: Path, write: Callable[[Any], None], binary: bool = False) -> Path:
    """Write one file atomically: `write(f)` fills a temp file (text, or bytes) that then replaces
    `path` (at the end of the enclosing `written_together` block, if any)."""
    path = Path(path)
    tmp = _stage(path, write, binary)
    if _TOGETHER:
        _TOGETHER[-1].staged.append((tmp, path))
    else:
        os.replace(tmp, path)
    return path


def _json_default(obj: Any) -> Any:
    """JSON for the non-JSON types a run's configuration holds (paths, numpy scalars)."""
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"run.json cannot hold {a_type(obj)}: {obj!r}")


def _ordered_steps(steps: pd.DataFrame) -> pd.DataFrame:
    """The contract columns first, in STEP_COLUMNS order, then any extras as given."""
    extras = [c for c in steps.columns if c not in STEP_COLUMNS]
    return steps[STEP_COLUMNS + extras]


def write_run(out_dir: Path, steps: pd.DataFrame, summary: pd.DataFrame, meta: dict) -> list[Path]:
    """Write steps.csv, summary.csv and run.json into out_dir (created); return their paths."""
    out_dir = Path(out_dir)
    check_columns(steps, STEP_COLUMNS, "steps")
    check_columns(summary, SUMMARY_REQUIRED, "summary")
    make_dir(out_dir)
    # float_format=None writes repr(float): the shortest text that reads back to the same double.
    writers: dict[str, Callable[[TextIO], None]] = {
        STEPS_FILE: lambda f: write_csv(f, _ordered_steps(steps)),
        SUMMARY_FILE: lambda f: write_csv(f, summary),
        META_FILE: lambda f: f.write(json.dumps(meta, indent=2, default=_json_default) + "\n"),
    }
    with written_together():
        return [write_atomic(out_dir / name, write) for name, write in writers.items()]


def _one_line(err: Exception) -> str:
    return " ".join(str(err).split())


def read_csv(path: Path, required: list[str], fix: str | None = None) -> pd.DataFrame:
    """Read a lionsim CSV exactly (round-trip floats, names kept as text); bad files fail in one line.
    `fix`: what the user does about a bad file, ending every such line (None: a truncated file's
    says to rerun the command that wrote it, the others say nothing)."""
    tail = f"; {fix}" if fix else ""
    text_dtypes = {c: str for c in [*TEXT_COLUMNS, "run", "baseline"]}  # absent ones are ignored
    # pandas 3 parses floats exactly by default and deprecates the option; pandas 2 needs it.
    exact = {"float_precision": "round_trip"} if _PANDAS_MAJOR < 3 else {}
    try:
        # Only empty cells are missing: a workload or network called "NA" or "null" stays text.
        df = pd.read_csv(path, dtype=text_dtypes, keep_default_na=False, na_values=[""], **exact)
    except FileNotFoundError:
        raise LionsimError(f"{path} not found{tail}") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError) as e:
        raise LionsimError(f"malformed CSV {path}: {_one_line(e)}{tail}") from None
    if _truncated(path):
        raise LionsimError(f"{path} is truncated or corrupt: its last line is incomplete (lionsim ends every CSV "
                           f"with a newline); {fix or 'rerun the command that wrote it'}")
    try:
        check_columns(df, required, str(path))
    except LionsimError as e:
        if not fix:
            raise
        raise LionsimError(f"{e}{tail}") from None
    return df


def _truncated(path: Path) -> bool:
    """A non-empty file whose last byte is not a newline was cut short (a full disk, a copy
    stopped part way): every CSV lionsim writes ends with one."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            if f.tell() == 0:
                return False
            f.seek(-1, os.SEEK_END)
            return f.read(1) not in (b"\n", b"\r")
    except OSError:
        return False


def read_json(path: Path) -> Any:
    """A JSON file lionsim wrote (run.json, sweep.json); unreadable or malformed is one line."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise LionsimError(f"malformed JSON in {path}: {_one_line(e)}") from None


def load_run(out_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame | None, dict | None]:
    """Read a finished run: (steps, summary or None if absent, meta or None if absent).

    A missing directory or steps.csv, a malformed file, missing columns, or a summary whose
    runs differ from the steps' runs fail with a LionsimError.
    """
    out_dir = Path(out_dir)
    check_dir(out_dir, "a `lionsim bench --out` directory", "run directory")
    steps_path = out_dir / STEPS_FILE
    if not steps_path.is_file():
        raise LionsimError(f"{steps_path} not found; a run directory holds {STEPS_FILE}, {SUMMARY_FILE}, {META_FILE}")
    steps = read_csv(steps_path, STEP_COLUMNS)

    summary = None
    summary_path = out_dir / SUMMARY_FILE
    if summary_path.is_file():
        summary = read_csv(summary_path, SUMMARY_REQUIRED)
        step_runs = list(dict.fromkeys(map(run_label, steps["strategy"], steps["transport"])))
        summary_runs = list(map(run_label, summary["strategy"], summary["transport"]))
        if summary_runs != step_runs:
            raise LionsimError(
                f"{summary_path} lists runs {', '.join(summary_runs)} but {STEPS_FILE} has {', '.join(step_runs)}"
            )

    meta = None
    meta_path = out_dir / META_FILE
    if meta_path.is_file():
        meta = read_json(meta_path)
        if not isinstance(meta, dict):
            raise LionsimError(f"{meta_path} holds {json_type(meta)}; expected an object")
    return steps, summary, meta
