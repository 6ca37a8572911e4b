"""Where a check writes its --junit and --report files: refused in one line before any run, as
bench refuses an --out it cannot write, so that no training is thrown away for a bad path.

No torch here: the command checks its outputs before the suite's runs import it."""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path

from lionsim.errors import LionsimError
from lionsim.reports.outdir import check_out_dir

ACCEPTED = "accepted: a file path in a directory this user may create and write"


def check_outputs(outputs: dict[str, Path | None]) -> None:
    """{option: path or None}: each path refused in one line naming its option where it is a
    directory or its folder cannot be made and written (tried now, and what was made removed
    again), and two options naming one file (one would overwrite the other)."""
    given = {option: Path(path) for option, path in outputs.items() if path is not None}
    for option, path in given.items():
        if path.is_dir():
            raise LionsimError(f"bad {option} {path}: it is a directory; accepted: a file path")
        check_out_dir(path.parent, option)  # a file or read-only folder on the way: named precisely
        _probe(path, option)
    seen: dict[Path, str] = {}
    for option, path in given.items():
        same = seen.setdefault(path.resolve(), option)
        if same != option:
            raise LionsimError(f"bad {same} {given[same]} and {option} {path}: the same file, one would overwrite "
                               "the other; accepted: two different paths")


def check_folder(folder: Path, option: str) -> None:
    """A folder a command will write into (`--update`'s baselines), refused in one line naming
    `option` and the folder as given, before any run."""
    check_out_dir(folder, option)
    _probe(Path(folder) / ".probe", option, shown=folder)


def _probe(path: Path, option: str, shown: Path | None = None) -> None:
    """Make `path`'s folder and a file in it, then remove both: what the permission bits cannot
    tell (root in /proc, a read-only mount) fails here, not after the runs."""
    folder = path.parent
    made = [p for p in (folder, *folder.parents)  # deepest first; `x/..` is x's parent, not one made
            if not p.exists() and p.name != ".."]
    probe = folder / f".{path.name}.probe"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        if shown is not None:
            raise LionsimError(f"bad {option} {shown}: cannot write in it ({e.strerror or e}); "
                               "accepted: a directory this user may create and write") from None
        raise LionsimError(f"bad {option} {path}: cannot write beside it ({folder}: {e.strerror or e}); "
                           f"{ACCEPTED}") from None
    finally:
        for p in made:
            with suppress(OSError):
                p.rmdir()
