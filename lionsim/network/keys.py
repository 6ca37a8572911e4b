"""Reading the tables of a profile file: every problem is one LionsimError naming the key and file."""

from __future__ import annotations

import math
from typing import Any

from lionsim.errors import LionsimError
from lionsim.ranges import Range
from lionsim.registry import did_you_mean


def no_unknown(table: dict[str, Any], accepted: tuple[str, ...], prefix: str, source: str) -> None:
    for key in table:
        if key not in accepted:
            names = [prefix + a for a in accepted]
            raise LionsimError(f"{source}: unknown key '{prefix}{key}'; accepted: {', '.join(names)}"
                               f"{did_you_mean(prefix + str(key), names)}")


def number(
    table: dict[str, Any],
    key: str,
    source: str,
    *,
    low: float,
    open_low: bool = False,
    high: float = math.inf,
    prefix: str = "",
    default: float | None = None,
) -> float:
    name = f"{prefix}.{key}" if prefix else key
    if key not in table:
        if default is None:
            raise LionsimError(f"{source}: missing key '{name}'")
        return default
    value = table[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise LionsimError(f"{source}: '{name}' = {value!r} is not a number")
    bound = (value > low) if open_low else (value >= low)
    if not math.isfinite(value) or not bound or value > high:
        rule = f"{'>' if open_low else '>='} {low:g}" + (f" and <= {high:g}" if high != math.inf else "")
        raise LionsimError(f"{source}: '{name}' = {value!r} must be a finite number {rule}")
    return float(value)


def ranged(table: dict[str, Any], key: str, source: str, accepted: Range, *, prefix: str = "") -> float:
    """`table[key]` (present) within `accepted`, else one line naming the file, the key, the value
    and the range: "FILE: 'inter.bandwidth_GBps' = 1e+300 is out of range; accepted: ..."."""
    name = f"{prefix}.{key}" if prefix else key
    value = table[key]
    if not accepted(value):
        number_ = isinstance(value, (int, float)) and not isinstance(value, bool)  # inf and nan are numbers here
        what = "is out of range" if number_ else "is not a number"
        raise LionsimError(f"{source}: '{name}' = {value!r} {what}; accepted: {accepted.words}")
    return float(value)


def integer(table: dict[str, Any], key: str, source: str, *, default: int) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise LionsimError(f"{source}: '{key}' = {value!r} must be an integer >= 1")
    return value


def string(table: dict[str, Any], key: str, source: str, *, default: str) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or not value:
        raise LionsimError(f"{source}: '{key}' = {value!r} must be a non-empty string")
    return value
