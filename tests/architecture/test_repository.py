"""The repository's own files: what .gitignore keeps names paths that exist."""

from __future__ import annotations

from tests.helpers import REPO


def test_gitignore_exceptions_name_existing_paths():
    for line in (REPO / ".gitignore").read_text().splitlines():
        if line.startswith("!"):
            assert (REPO / line[1:].rstrip("/")).exists(), line
