"""Number checks shared by the network model's dataclasses (links, traits, profiles)."""

from __future__ import annotations

import math

from lionsim.errors import LionsimError
from lionsim.ranges import Range


def check_number(name: str, value: object, *, low: float, low_open: bool, high: float = math.inf) -> None:
    """Fail with a LionsimError naming `name` unless value is a finite real within the bounds, the
    range in the words every command uses (lionsim.ranges)."""
    accepted = Range(low, None if high == math.inf else high, above=low_open)
    if not accepted(value):
        raise LionsimError(f"{name} = {value!r} is out of range; accepted: {accepted.words}")
