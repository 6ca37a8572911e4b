"""One writer per --out: an advisory lock (fcntl.flock) on `.NAME.lock` beside it.

The process that prepares and publishes an --out (a bench's, on gloo/nccl its parent or
torchrun's rank 0; a sweep's; an estimate's) holds the lock for its whole run, so a second
command into the same --out is refused in one line before it touches anything: its staging
would delete the first one's (lionsim.reports.publish.RunDir.prepare), its checks would read a
folder being replaced. The OS lets go of the lock when its holder dies, so a killed run leaves
no stale lock; the file holds the holder's pid, which the refusal names. A holder that ends
removes the file; one killed (kill -9) leaves it, with a dead pid, until the next command into
that --out takes the lock and removes it at its own end (docs/outputs.md). A file system that
takes no locks runs unguarded, as before.
"""

from __future__ import annotations

import errno
import fcntl
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from lionsim.errors import LionsimError

UNLOCKABLE = (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL)
"""flock's errors where the file system takes no locks (some network and FUSE mounts)."""


def lock_path(out: Path) -> Path:
    """`.NAME.lock` beside --out, named as its staging directory is (`.NAME.partial`), of the absolute
    path: `o`, `./o` and `/abs/o` are one folder, and `--out .` is locked beside the folder, not in it
    (where it would be a file lionsim did not write)."""
    out = Path(os.path.abspath(out))
    return out.parent / f".{out.name or 'out'}.lock"


class OutLock:
    """The lock of one --out, taken by `acquire` and let go by `release`."""

    def __init__(self, out: Path, option: str = "--out") -> None:
        self.out, self.option = Path(out), option
        self.path = lock_path(out)
        self._fd: int | None = None
        self._made: list[Path] = []

    def acquire(self) -> None:
        """Hold the lock, or raise one line naming the folder and the holder's pid."""
        self._made = [p for p in self.path.parents if not p.exists()]  # deepest first: removed again on release
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            for _ in range(100):  # a holder letting go unlinks the file: lock the one the path names
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
                if not self._lock(fd):
                    return
                if _same_file(fd, self.path):
                    os.ftruncate(fd, 0)
                    os.write(fd, f"{os.getpid()}\n".encode())
                    self._fd = fd
                    return
                os.close(fd)
        except OSError as e:
            self._remove_made()
            raise LionsimError(f"bad {self.option} {self.out}: cannot write beside it ({self.path}: "
                               f"{e.strerror or e}); accepted: a directory this user may create and write") from None
        # Every try locked a file another process had just let go and unlinked: others keep taking
        # and releasing it, so it is not this one's to write (refused, never run unguarded).
        self._remove_made()
        raise LionsimError(self._busy(None))

    def _lock(self, fd: int) -> bool:
        """Lock `fd`; False where the file system takes none (fd closed); one line if another holds it."""
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _holder(fd)
            os.close(fd)
            self._remove_made()
            raise LionsimError(self._busy(pid)) from None
        except OSError as e:
            if e.errno not in UNLOCKABLE:
                os.close(fd)
                raise
            os.close(fd)
            self.path.unlink(missing_ok=True)
            return False
        return True

    def _busy(self, pid: int | None) -> str:
        who = f"another lionsim process (pid {pid})" if pid else "another lionsim process"
        # an --out can be another folder; a DIR to report or plot, or a ROOT to merge, is this one
        other = f", or choose another {self.option}" if self.option.startswith("--") else ""
        return f"{self.option} {self.out} is being written by {who}; wait for it to end{other}"

    def release(self) -> None:
        """Let go: the file removed while still held (so nobody locks a file about to go), then closed."""
        if self._fd is None:
            return
        self.path.unlink(missing_ok=True)
        os.close(self._fd)
        self._fd = None
        self._remove_made()

    def _remove_made(self) -> None:
        for parent in self._made:
            try:
                parent.rmdir()
            except OSError:
                break
        self._made = []


@contextmanager
def holding(out: Path, take: bool = True, option: str = "--out") -> Iterator[None]:
    """The lock of `out` held while the block runs (`take` False: not this process's to take, e.g.
    a launcher's rank other than 0, which writes nothing there)."""
    if not take:
        yield
        return
    lock = OutLock(out, option)
    lock.acquire()
    try:
        yield
    finally:
        lock.release()


def _same_file(fd: int, path: Path) -> bool:
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino)


def _holder(fd: int) -> int | None:
    """The pid the holder wrote (None while it has not yet, or an unreadable file)."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
