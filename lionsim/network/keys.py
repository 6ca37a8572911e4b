"""Reading the tables of a profile file: every problem is one LionsimError naming the key and file.

A number out of its range is refused in the words every command uses (lionsim.ranges):
"FILE: 'inter.alpha_us' = -5 is out of range; accepted: a finite number at least 0"."""

from __future__ import annotations

import math
from typing import Any

from lionsim.errors import LionsimError
from lionsim.ranges import Range, is_number
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
    why: str = "",
) -> float:
    """`table[key]`, a finite number from `low` (above it where `open_low`) to `high`, else one line
    (refused); `default` where the key is absent (None: the key is required)."""
    accepted = Range(low, None if high == math.inf else high, above=open_low, why=why)
    name = f"{prefix}.{key}" if prefix else key
    if key not in table:
        if default is None:
            raise LionsimError(f"{source}: missing key '{name}'")
        return default
    return ranged(table, key, source, accepted, prefix=prefix)


def ranged(table: dict[str, Any], key: str, source: str, accepted: Range, *, prefix: str = "") -> float:
    """`table[key]` (present) within `accepted`, else one line naming the file, the key, the value
    and the range: "FILE: 'inter.bandwidth_GBps' = 1e+300 is out of range; accepted: ..."."""
    value = table[key]
    if not accepted(value):
        raise refused(source, f"{prefix}.{key}" if prefix else key, value, accepted)
    return float(value)


def integer(table: dict[str, Any], key: str, source: str, accepted: Range, *, default: int, prefix: str = "") -> int:
    """`table[key]` (`default` where absent), a whole number within `accepted` (whole), else one line;
    a whole float (8.0, as JSON may write it) reads as the integer."""
    if key not in table:
        return default
    value = table[key]
    if not accepted(value):
        raise refused(source, f"{prefix}.{key}" if prefix else key, value, accepted)
    return int(value)


def refused(source: str, name: str, value: object, accepted: Range) -> LionsimError:
    """The one line refusing key `name` = `value` of the file `source`: not a number, not a whole
    one where `accepted` takes whole numbers, or out of range; each with the range."""
    real = isinstance(value, (int, float)) and not isinstance(value, bool)  # inf, nan, 10**400 are numbers here
    fraction = real and accepted.whole and is_number(value) and not float(value).is_integer()
    what = "is not a number" if not real else "is not a whole number" if fraction else "is out of range"
    return LionsimError(f"{source}: '{name}' = {shown(value)} {what}; accepted: {accepted.words}")


def shown(value: object) -> str:
    """`value` as a refusal echoes it: as written, but an int past float's range by its length (its
    hundreds of digits would bury the line)."""
    if isinstance(value, int) and not isinstance(value, bool) and not is_number(value):
        return f"an integer of {len(str(abs(value)))} digits"
    return repr(value)


def string(table: dict[str, Any], key: str, source: str, *, default: str) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or not value:
        raise LionsimError(f"{source}: '{key}' = {value!r} must be a non-empty string")
    return value
