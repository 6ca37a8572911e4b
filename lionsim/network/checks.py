"""Number checks shared by the network model's dataclasses (links, traits, profiles)."""

from __future__ import annotations

import math

from lionsim.errors import LionsimError


def check_number(name: str, value: object, *, low: float, low_open: bool, high: float = math.inf) -> None:
    """Fail with a LionsimError naming `name` unless value is a finite real within the bounds."""
    ok = (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and (value > low if low_open else value >= low)
        and value <= high
    )
    if not ok:
        bound = f"> {low:g}" if low_open else f">= {low:g}"
        if high != math.inf:
            bound += f" and <= {high:g}"
        raise LionsimError(f"{name} = {value!r} is not a finite number {bound}")
