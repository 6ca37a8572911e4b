"""Errors raised by the user's own code during a run, told apart from lionsim's own bugs.

A bench runs code it did not write: a workload of the user's (`--workload FILE.py:FUNC`, its
model, loss, metric and data), a plug-in strategy or transport (`--plugin FILE.py`, an entry
point). An error raised there is the user's to fix: one line naming the run and the step, exit
code EXIT_CODE (3), and the finished runs kept as an interrupted bench keeps them. An error
raised by lionsim's own code is a bug of lionsim and keeps its traceback (exit 1).

Which is which, decided on the exception (`blame`):

1. A check of what user code returned (a plug-in's Payload, a transport's aggregate:
   lionsim.transports.checks) raises UserCodeError itself.
2. Everything lionsim does with a user's workload during a step (the model's forward and
   backward, the loss function, the metric on the held-out set) runs inside `user_code(...)`:
   whatever it raises is the user's, even where the frames are torch's (an
   `nn.CrossEntropyLoss()` given a label out of range fails inside torch).
3. Otherwise the traceback decides. Library frames (the standard library, torch, numpy, and a
   torch mode's forwarding frame such as lionsim's kernel counter) are passed over: they only say
   what was called. The innermost frame left is the code that made
   the failing call: under the lionsim package it is lionsim's (a bug, even when torch raised),
   anywhere else (a plug-in file, a package of the user's, a model library such as timm) the
   user's. An error from torch.distributed is a collective that failed (a peer died): never the
   user's, whoever issued the collective.
"""

from __future__ import annotations

import functools
import sysconfig
import traceback
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from lionsim.plugin_load import one_line

EXIT_CODE = 3
"""`lionsim bench`'s exit code for an error in the user's code during a run."""

_LIONSIM = Path(__file__).resolve().parent
_MARK = "_lionsim_user_code"
"""The attribute `user_code` sets on an exception: what raised it (its `what`)."""


class UserCodeError(Exception):
    """An error in the user's code during a run: `str()` is its one line for the user."""


def _libraries() -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """(folders of library files, folders inside them that are not): the standard library, torch
    and numpy; the site-packages folders inside the standard library's are not."""
    paths = sysconfig.get_paths()
    roots = [Path(paths["stdlib"]).resolve()]
    for name in ("torch", "numpy"):
        try:
            module = __import__(name)
        except ImportError:
            continue
        roots.append(Path(module.__file__).resolve().parent)
    return tuple(roots), tuple({Path(paths["purelib"]).resolve(), Path(paths["platlib"]).resolve()})


FORWARDING = frozenset({"__torch_dispatch__", "__torch_function__"})
"""Frames of a torch mode that only forward each call (lionsim's kernel counter, torch's FLOP
counter): passed over as library frames, so the code that made the call still decides."""


@functools.lru_cache(maxsize=None)
def _owner(filename: str) -> str:
    """"lionsim", "library" or "user" for the file of a frame."""
    if filename.startswith("<"):  # <frozen importlib._bootstrap>, <string>: the interpreter's own
        return "library"
    path = Path(filename).resolve()
    if path.is_relative_to(_LIONSIM):
        return "lionsim"
    roots, sites = _libraries()
    if path.is_relative_to(roots[0]) and not any(path.is_relative_to(s) for s in sites):
        return "library"  # the standard library (but the packages installed inside it)
    return "library" if any(path.is_relative_to(r) for r in roots[1:]) else "user"


@contextmanager
def user_code(what: str) -> Iterator[None]:
    """Whatever the block raises (but a stop or an exit) is the user's code's: `what` names it
    ("the workload"). The exception goes on unchanged, marked for `blame`."""
    try:
        yield
    except Exception as e:
        if not hasattr(e, _MARK):
            try:
                setattr(e, _MARK, what)
            except AttributeError:  # an exception type that takes no attributes: frames decide
                pass
        raise


def _shown(filename: str) -> str:
    """A frame's file as the line shows it: relative to the working directory when inside it."""
    path = Path(filename)
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return filename


def blame(error: BaseException, names: dict[str, str] | None = None) -> str | None:
    """The one line for an error in the user's code (what raised what, and where), or None when it
    is lionsim's own (or a collective's). `names` maps a file to what it holds ("the strategy
    randomk-ef"), to name the culprit; other user files are "your code"."""
    if isinstance(error, UserCodeError):
        return str(error)
    frames = traceback.extract_tb(error.__traceback__)
    if any("torch/distributed" in Path(f.filename).as_posix() for f in frames):
        return None  # a collective failed: a peer rank died or stopped answering
    owners = [(f, "library" if f.name in FORWARDING else _owner(f.filename)) for f in frames]
    users = [f for f, owner in owners if owner == "user"]
    what = getattr(error, _MARK, None)
    if what is None:
        deciding = next((owner for _, owner in reversed(owners) if owner != "library"), "lionsim")
        if deciding != "lionsim":
            what = (names or {}).get(str(Path(users[-1].filename).resolve()), "your code")
    if what is None:
        return None
    where = f" ({_shown(users[-1].filename)}, line {users[-1].lineno})" if users else ""
    return f"{what} raised {one_line(error)}{where}"


def file_of(cls: type) -> str | None:
    """The resolved source file of a class (None: built in, or none to find)."""
    import inspect

    try:
        return str(Path(inspect.getfile(cls)).resolve())
    except (TypeError, OSError):
        return None


def is_users(cls: type) -> bool:
    """Whether a class is the user's (a plug-in's), not lionsim's own."""
    module = cls.__module__ or ""
    return not (module == "lionsim" or module.startswith("lionsim."))


def kept_line(line: str, kept: str | None, command: str = "the same command with --resume") -> str:
    """`line` with what a bench that stopped on it kept (`kept`: its finished steps and where, in
    words; None where none had finished) and the `command` that goes on once the code is fixed."""
    if kept is None:
        return f"{line}; no results were written"
    return f"{line}; {kept}; once it is fixed, {command} trains the runs that did not finish"
