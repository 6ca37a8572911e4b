"""`python -m lionsim ARGS` is `lionsim ARGS`, from any directory.

`python -m` puts the current directory first on sys.path. Run from the parent of a checkout
named `lionsim`, that checkout's root becomes a namespace package `lionsim` ahead of an
editable install's import hook, and its top-level `cli.py` is taken for `lionsim.cli`
("cannot import name 'main' from partially initialized module"). This file is always the
real package's (runpy found it there), so when `lionsim` is not the package it belongs to,
the stand-in is dropped and the package is imported from beside this file.
"""

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_found = sys.modules.get("lionsim")
if _found is None or getattr(_found, "__file__", None) is None or Path(_found.__file__).resolve().parent != _HERE:
    for _name in [m for m in sys.modules if m == "lionsim" or m.startswith("lionsim.")]:
        del sys.modules[_name]
    sys.path.insert(0, str(_HERE.parent))

from lionsim.cli import main  # noqa: E402  (after the check above)

main()
