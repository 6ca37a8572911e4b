"""Finding a user's function from a spec string: `FILE.py:FUNC`, `package.module:FUNC`, or the
name of an installed entry point.

Shared by `--workload` (lionsim.workloads.plugin) and `estimate --model`
(lionsim.compute.counted). A file spec is recorded with its path made absolute
(`canonical_spec`), so a run.json, a resumed run, a sweep cell or a spawned gloo rank imports
the same file from any working directory; argv in run.json keeps what the user typed.
Every way of getting it wrong (no such file, an import that raises, no such function, not a
callable) is one LionsimError line naming the spec.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import inspect
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from lionsim.errors import LionsimError, a_type

SPEC_FORMS = "FILE.py:FUNC or package.module:FUNC"
_MODULE_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def is_spec(text: object) -> bool:
    """Whether `text` names a function (FILE.py:FUNC or module:FUNC) rather than a registry name."""
    return isinstance(text, str) and ":" in text


@dataclass(frozen=True, slots=True)
class Spec:
    """A parsed `FILE.py:FUNC` or `package.module:FUNC`."""

    target: str
    """The absolute file path (a .py file) or the dotted module path."""
    function: str
    """The function's name in it (dotted for an attribute of an attribute)."""

    @property
    def is_file(self) -> bool:
        return self.target.endswith(".py")

    @property
    def text(self) -> str:
        """The canonical spec string: the file's absolute path, or the module, then `:FUNC`."""
        return f"{self.target}:{self.function}"

    @property
    def stem(self) -> str:
        """A short name for file and cell names: `cnn_workload.make` for `/x/cnn_workload.py:make`."""
        base = Path(self.target).stem if self.is_file else self.target
        return re.sub(r"[^A-Za-z0-9._-]", "_", f"{base}.{self.function}")


def parse_spec(text: str, option: str) -> Spec:
    """`FILE.py:FUNC` (the file made absolute) or `package.module:FUNC`; `option` names the flag
    in the message. The file must exist; importing waits for `load_function`."""
    target, _, function = text.strip().rpartition(":")
    accepted = f"accepted: {SPEC_FORMS}"
    if not target or not function or not all(part.isidentifier() for part in function.split(".")):
        raise LionsimError(f"bad {option} {text!r}; {accepted}")
    if target.endswith(".py"):
        path = Path(target).expanduser()
        if not path.is_file():
            raise LionsimError(f"bad {option} {text!r}: no file {target}; {accepted}")
        return Spec(str(path.resolve()), function)
    if not _MODULE_PATH.match(target):
        raise LionsimError(f"bad {option} {text!r}: {target!r} is neither a .py file nor a module path; {accepted}")
    return Spec(target, function)


def _import_file(path: str):
    """The module of file `path`, imported once per process under a name derived from its path.
    Its folder goes on sys.path, so it can import its sibling modules as `python FILE.py` would."""
    name = "lionsim_plugin_" + re.sub(r"\W", "_", Path(path).stem) + "_" + hashlib.blake2b(
        path.encode(), digest_size=4).hexdigest()
    if name in sys.modules:
        return sys.modules[name]
    folder = str(Path(path).parent)
    if folder not in sys.path:
        sys.path.append(folder)
    module_spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module  # before running it: dataclasses and pickling look their module up
    try:
        module_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def load_function(spec: Spec, option: str) -> Callable:
    """The callable `spec` names; one LionsimError line for anything that stops that."""
    where = f"{option} {spec.text}"
    try:
        module = _import_file(spec.target) if spec.is_file else importlib.import_module(spec.target)
    except ModuleNotFoundError as e:
        if spec.is_file or not spec.target.startswith(str(e.name)):
            raise LionsimError(f"bad {where}: importing it failed: {one_line(e)}") from None
        raise LionsimError(f"bad {where}: no module {e.name!r} (not installed, or not on the path); "
                           f"accepted: {SPEC_FORMS}") from None
    except (Exception, SystemExit) as e:  # the user's module raised while being imported: its message, one line
        raise LionsimError(f"bad {where}: importing it failed: {one_line(e)}{exit_hint(e)}") from None
    found = module
    for part in spec.function.split("."):
        found = getattr(found, part, None)
        if found is None:
            defined = sorted(n for n, v in vars(module).items() if inspect.isfunction(v) and not n.startswith("_")
                             and v.__module__ == module.__name__)
            raise LionsimError(f"bad {where}: no function {spec.function!r} in it; it defines: "
                               f"{', '.join(defined) or 'no functions'}")
    if not callable(found):
        raise LionsimError(f"bad {where}: {spec.function} is {a_type(found)}, not a function")
    return found


def one_line(error: BaseException) -> str:
    """`Type: message` on one line (the first line of the message)."""
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def exit_hint(error: BaseException) -> str:
    """The advice for a user's file that exited (sys.exit, or an argparse parser reading lionsim's
    own command line) while lionsim imported or called it; "" for any other error."""
    if not isinstance(error, SystemExit):
        return ""
    return ("; lionsim imports the file and calls what it names itself, so a script's own argument parsing "
            "and sys.exit belong under `if __name__ == \"__main__\":`")


def entry_points(group: str) -> dict[str, importlib.metadata.EntryPoint]:
    """Installed entry points of `group` by name (loaded only when used)."""
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=group)}


def summary_of(function: Callable) -> str:
    """The first line of a function's docstring, or "" (the listing's one line)."""
    doc = (getattr(function, "__doc__", None) or "").strip()
    return doc.splitlines()[0].strip() if doc else ""
