"""Lazy package attributes (PEP 562): `from lionsim.pkg import name` imports the submodule
that defines `name` on first use, so a package's __init__ costs nothing until a name is used.

Only packages that a path which must stay light imports use it: `import lionsim`, the quick
commands (`lionsim --help`, `--version`, `networks`: lionsim, backends, compute, estimate,
regress, reports), a bench's checks of its plain values (steptime) and the sweep's parent before
it starts its workers (sweep); they never import torch or matplotlib. Every other package imports its names plainly."""

from __future__ import annotations

import importlib
import types
from typing import Callable


def lazy_exports(package: str, exports: dict[str, str]) -> tuple[Callable, Callable, list[str]]:
    """`__getattr__`, `__dir__` and `__all__` for `package`, whose `exports` map each submodule
    (relative to the package, ".table", or absolute) to the public names it defines, separated by
    spaces. A name's submodule is imported when the name is first asked for, and the name is then
    bound on the package (the next lookup is a plain attribute)."""
    module = importlib.import_module(package)
    where = {name: sub for sub, names in exports.items() for name in names.split()}

    def __getattr__(name: str):
        sub = where.get(name)
        if sub is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(sub, package), name)
        setattr(module, name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(module)) | set(where))

    return __getattr__, __dir__, sorted(where)


class ShadowingModule(types.ModuleType):
    """A package with a public name equal to one of its submodules (lionsim.estimate.probe,
    the function, lives in lionsim.estimate.probe, the module): importing the submodule
    binds the function, not the module, as eager `from .probe import probe` did."""

    _shadowed: tuple[str, ...] = ()

    def __setattr__(self, name: str, value) -> None:
        if name in type(self)._shadowed and isinstance(value, types.ModuleType) and hasattr(value, name):
            value = getattr(value, name)
        super().__setattr__(name, value)
