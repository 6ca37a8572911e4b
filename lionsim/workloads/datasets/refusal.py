"""The one line a `--data` path a workload cannot read is refused with.

Every loader says it the same way: the path as given, why it cannot be read, and what this
workload reads ("bad --data PATH: WHY; accepted: WHAT"), so a user who never named a workload
(vit is bench's default) learns what --data wants.
"""

from __future__ import annotations

from pathlib import Path

from lionsim.errors import LionsimError


def bad_data(path: Path | str, why: str, accepted: str) -> LionsimError:
    """The refusal of --data `path`: `why` it cannot be read, `accepted` what the workload reads."""
    return LionsimError(f"bad --data {path}: {why}; accepted: {accepted}")
