"""A Network as a profile file (`--network FILE.toml` reads it back): the writer `comm --fit` uses.

The standard library reads TOML but does not write it; a profile holds only strings,
integers, floats, tables and arrays of small tables, which this module writes. Floats are
written with repr, so a profile read back prices exactly as the Network it came from.
"""

from __future__ import annotations

import json
import math
from typing import Any

from lionsim.errors import a_type
from lionsim.network.link import Network


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"a profile cannot hold {v!r}")
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a valid TOML basic string
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[\n" + "".join(f"  {_value(x)},\n" for x in v) + "]"
    raise TypeError(f"a profile cannot hold {a_type(v)}")


def _table(name: str, table: dict[str, Any]) -> list[str]:
    lines = [f"[{name}]"]
    lines += [f"{k} = {_value(v)}" for k, v in table.items()]
    return lines + [""]


def profile_toml(network: Network, comment: str = "") -> str:
    """The TOML text of `network` (Network.to_dict), with `comment` lines on top."""
    data = network.to_dict()
    lines = [f"# {line}" for line in comment.splitlines()]
    lines += [f"{k} = {_value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    lines.append("")
    for key in ("inter", "intra"):
        if key in data:
            lines += _table(key, data[key])
    traits = data.get("traits")
    if traits is not None:
        lines += _table("traits", {k: v for k, v in traits.items() if not isinstance(v, dict)})
        for key in ("slow", "reduce_GBps"):
            if key in traits:
                lines += _table(f"traits.{key}", traits[key])
        for op, entry in traits.get("ops", {}).items():
            lines += _table(f"traits.ops.{op}", entry)
    if "measured" in data:
        lines += _table("measured", data["measured"])
    return "\n".join(lines)
