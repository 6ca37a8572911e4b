"""Commands that train nothing answer at once: they never import torch or matplotlib."""

import subprocess
import sys

import pytest

HEAVY = ("torch", "matplotlib")

PROBE = """
import sys
from lionsim.cli.app import main
try:
    main({args!r})
except SystemExit:
    pass
print("HEAVY:" + ",".join(m for m in {heavy!r} if m in sys.modules))
"""


def _heavy_after(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_import_cli_is_light():
    code = f"import sys, lionsim, lionsim.cli; print('HEAVY:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))"
    assert _heavy_after(code) == "HEAVY:"


@pytest.mark.parametrize("args", [["--version"], ["networks"], ["--help"]])
def test_quick_commands_are_light(args):
    assert _heavy_after(PROBE.format(args=args, heavy=HEAVY)) == "HEAVY:"


def test_public_api_still_importable():
    from lionsim import pack_signs, unpack_signs  # lazy: torch on first use

    assert callable(pack_signs) and callable(unpack_signs)


@pytest.mark.parametrize("package", ["lionsim", "lionsim.compute", "lionsim.estimate", "lionsim.regress",
                                     "lionsim.reports", "lionsim.sweep"])
def test_every_lazy_name_resolves(package):
    import importlib

    module = importlib.import_module(package)
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert missing == [], f"{package} lists names no submodule defines"
