"""A run's output directory, written whole: staged beside --out, then published.

Every file of a run (CSVs, run.json, plots) is written into a hidden staging directory beside
--out (`.NAME.partial`), flushed as runs finish, and only then moved into --out: into an
absent or empty --out as one rename (atomic), else file by file with os.replace (each atomic;
the previous run's files of the same names are replaced, other files are left alone). A
failure while writing (a full disk) leaves --out as it was and removes the staging directory;
a run that fails part way publishes what finished, marked in run.json.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable

from lionsim.errors import LionsimError
from lionsim.reports.files import WriteError, write_failed


class RunDir:
    """The staging directory of one run's outputs and where they are published."""

    def __init__(self, out: Path) -> None:
        self.out = Path(out)
        self.stage = self.out.parent / f".{self.out.name or 'out'}.partial"

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

    def publish(self) -> list[Path]:
        """Move every staged file into --out; return their final paths."""
        names = sorted(p.name for p in self.stage.iterdir()) if self.stage.is_dir() else []
        try:
            self.out.parent.mkdir(parents=True, exist_ok=True)
            if not self.out.exists() or (self.out.is_dir() and not any(self.out.iterdir())):
                if self.out.exists():
                    self.out.rmdir()
                os.rename(self.stage, self.out)
            else:
                for name in names:
                    os.replace(self.stage / name, self.out / name)
                self.discard()
        except OSError as e:
            raise LionsimError(f"cannot publish {self.out}: {e.strerror or e}; the files are in {self.stage}") from None
        return [self.out / name for name in names]

    def discard(self) -> None:
        shutil.rmtree(self.stage, ignore_errors=True)
