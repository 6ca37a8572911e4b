"""`python -m lionsim ARGS` as an editable install runs it (tests/cli/test_entry.py):

    python tests/helpers/editable_like.py REPO ARGS...

pip's editable install imports lionsim through a meta-path finder that comes after Python's
PathFinder, so a folder named `lionsim` in the current directory (sys.path[0] under -m) is
found first, as a namespace package. This script puts such a finder for REPO/lionsim right
after PathFinder (ahead of any real editable hook) and runs the package as `-m` does."""
import runpy
import sys
from importlib.util import spec_from_file_location
from pathlib import Path

REPO = Path(sys.argv[1])

class Finder:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "lionsim" and not name.startswith("lionsim."):
            return None
        base = REPO.joinpath(*name.split("."))
        if (base / "__init__.py").is_file():
            return spec_from_file_location(name, base / "__init__.py", submodule_search_locations=[str(base)])
        if base.with_suffix(".py").is_file():
            return spec_from_file_location(name, base.with_suffix(".py"))
        return None

from importlib.machinery import PathFinder

sys.meta_path.insert(sys.meta_path.index(PathFinder) + 1, Finder)  # ahead of a real editable hook
sys.path.insert(0, "")
sys.argv = ["lionsim", *sys.argv[2:]]
runpy.run_module("lionsim", run_name="__main__", alter_sys=True)
