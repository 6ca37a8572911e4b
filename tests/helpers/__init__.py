"""What tests share besides fixtures (those are in tests/conftest.py): the checkout's root, the
in-process CLI (cli.py), real gloo ranks (spawned.py, gloo_pool.py) and small builders."""

import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
"""The lionsim checkout the tests run from (README.md, docs/, examples/, reports/baselines/)."""


def write_plugin(tmp_path: Path, body: str, name: str = "mine.py") -> Path:
    """A user's Python file `name` in tmp_path holding `body` (dedented)."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path
