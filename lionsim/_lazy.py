"""Lazy package attributes (PEP 562): `from lionsim.pkg import name` imports the submodule
that defines `name` on first use, so a package's __init__ costs nothing until a name is used
(the quick commands, `lionsim --help`, `--version`, `networks`, never import torch)."""

from __future__ import annotations

import importlib
import types
from typing import Callable


def lazy_attributes(package: str, names: dict[str, str]) -> tuple[Callable, Callable]:
    """`__getattr__` and `__dir__` for `package`, whose `names` map each public name to the
    submodule (relative to the package, e.g. ".table") that defines it."""
    module = importlib.import_module(package)

    def __getattr__(name: str):
        sub = names.get(name)
        if sub is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(sub, package), name)
        setattr(module, name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(module)) | set(names))

    return __getattr__, __dir__


class ShadowingModule(types.ModuleType):
    """A package with a public name equal to one of its submodules (lionsim.estimate.probe,
    the function, lives in lionsim.estimate.probe, the module): importing the submodule
    binds the function, not the module, as eager `from .probe import probe` did."""

    _shadowed: tuple[str, ...] = ()

    def __setattr__(self, name: str, value) -> None:
        if name in type(self)._shadowed and isinstance(value, types.ModuleType) and hasattr(value, name):
            value = getattr(value, name)
        super().__setattr__(name, value)
