"""How lionsim starts: bare `lionsim`, `python -m lionsim`, the top-level help."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.helpers import REPO
from tests.helpers.cli import run_cli


def test_bare_lionsim_prints_help_and_exits_2(capsys):
    code, out, err = run_cli([], capsys)
    assert code == 2 and "Usage: lionsim" in err and "Commands" in err


def test_python_m_lionsim_runs_from_the_parent_of_a_checkout_named_lionsim(tmp_path):
    (tmp_path / "lionsim").symlink_to(REPO, target_is_directory=True)  # a clone named lionsim, with its cli.py
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, str(REPO / "tests" / "helpers" / "editable_like.py"), str(REPO), "networks"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "1gbe" in done.stdout, done.stderr


def test_the_top_level_help_is_the_packages_description_and_names_more_than_lion(capsys):
    import tomllib

    description = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["description"]
    code, out, _ = run_cli(["--help"], capsys)
    text = " ".join(out.split())
    assert code == 0 and description in text
    assert all(method in description for method in ("Distributed Lion", "PowerSGD", "DiLoCo", "Muon"))
