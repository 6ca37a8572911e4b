"""`--network PRESET|FILE`: presets by name, or a TOML/JSON profile file (SPEC "Network profile files").

    name = "mycluster"          # optional; the file's stem if absent
    workers_per_node = 8        # optional; 1 (flat) if absent
    oversubscription = 2.0      # optional; divides the inter-node bandwidth (>= 1)
    ps_servers = 2              # optional; parameter servers for ps_push / ps_pull
    [inter]                     # required: the link between nodes, per node
    alpha_us = 25.0             # per-message latency, microseconds (>= 0)
    bandwidth_GBps = 1.17       # achieved bandwidth per direction, 1e9 bytes/s (> 0)
    efficiency = 1.0            # optional multiplier on bandwidth, in (0, 1]
    reduce_GBps = 10.0          # optional: bytes combined per second in reductions (gamma = 1/it)
    [intra]                     # the link inside a node, per worker: optional in a flat profile,
                                # required when workers_per_node > 1 (no default: NVLink, PCIe
                                # and a shared NIC differ 10-100x; an error names the fix)
    alpha_us = 1.0
    bandwidth_GBps = 360.0
    [collectives.all_reduce]    # optional, per collective: its own links by size regime
    algorithm = "ring"          # optional; the formula the links are parameters of (fitted.py)
    fitted_workers = 2          # optional; the N it was fitted at (a record)
    regimes = [{max_bytes = 1048576, alpha_us = 300.0, bandwidth_GBps = 1.2},
               {alpha_us = 90.0, bandwidth_GBps = 2.4}]

A [collectives.OP] entry prices every call of OP (see lionsim.network.fitted); `lionsim comm
--fit` writes them. Profiles without one are priced by the links and topology alone.

JSON files hold the same object. Every problem (unknown or missing key, wrong type,
NaN, non-positive bandwidth) is a LionsimError naming the key and the file.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from lionsim.errors import LionsimError
from lionsim.network.collectives import COLLECTIVE_ALGORITHMS
from lionsim.network.fitted import FIT_ALGORITHMS, FittedCollective, Regime
from lionsim.network.link import Link, Network
from lionsim.network.presets import NETWORKS
from lionsim.registry import did_you_mean

_LINK_KEYS = {"alpha_us": True, "bandwidth_GBps": True, "efficiency": False, "reduce_GBps": False}
"""Link keys -> required?"""
_TOP_KEYS = ("name", "description", "workers_per_node", "oversubscription", "ps_servers", "inter", "intra",
             "collectives")
_FITTED_KEYS = ("algorithm", "fitted_workers", "regimes")
_REGIME_KEYS = ("max_bytes", "alpha_us", "bandwidth_GBps")


def canonical_network(spec: str | os.PathLike[str]) -> str:
    """A preset name in its listed spelling (`10GbE` -> `10gbe`); anything else (a profile file
    path, or an unknown name, which load_network rejects) as given."""
    text = os.fspath(spec)
    return NETWORKS.canonical(text) if text in NETWORKS else text


def load_network(spec: str | os.PathLike[str]) -> Network:
    """A preset by name, or a `.toml` / `.json` profile file."""
    text = os.fspath(spec)
    if text in NETWORKS:
        return NETWORKS.get(text)
    suffix = Path(text).suffix.lower()
    if suffix not in (".toml", ".json"):
        raise LionsimError(
            f"unknown network {text!r}; choose a preset ({', '.join(NETWORKS.names())}) "
            f"or a .toml/.json profile file{did_you_mean(text, NETWORKS.names())}"
        )
    path = Path(text)
    return network_from_dict(_read(path), source=str(path), default_name=path.stem)


def _read(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise LionsimError(f"network profile not found: {path}") from None
    except OSError as e:
        raise LionsimError(f"cannot read network profile {path}: {e.strerror}") from None
    if path.suffix.lower() == ".toml":
        import tomllib

        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise LionsimError(f"malformed TOML in {path}: {e}") from None
    else:
        try:
            data = json.loads(raw.decode("utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise LionsimError(f"malformed JSON in {path}: {e}") from None
    if not isinstance(data, dict):
        raise LionsimError(f"{path}: a network profile must be a table/object at the top level")
    return data


def network_from_dict(data: dict[str, Any], *, source: str, default_name: str) -> Network:
    """Validate a profile's data (from a file, or `Network.to_dict()`) and build the Network."""
    _no_unknown(data, _TOP_KEYS, "", source)
    if "inter" not in data:
        raise LionsimError(f"{source}: missing key 'inter' (the [inter] link table)")
    inter = _link(data["inter"], "inter", source)
    intra = _link(data["intra"], "intra", source) if "intra" in data else None
    workers_per_node = _integer(data, "workers_per_node", source, default=1)
    if workers_per_node > 1 and intra is None:  # no default: NVLink, PCIe and a shared NIC differ 10-100x
        raise LionsimError(
            f"{source}: workers_per_node = {workers_per_node} needs an [intra] link table (alpha_us, bandwidth_GBps: "
            "the link between workers of one node); [intra] is optional only in a flat profile (workers_per_node = "
            "1). For NVLink copy a preset's: `lionsim networks` (nvlink4: 1 us, 380 GB/s)")
    name = _string(data, "name", source, default=default_name)
    try:
        return Network(
            name=name,
            inter=inter,
            intra=intra,
            workers_per_node=workers_per_node,
            oversubscription=_number(data, "oversubscription", source, low=1.0, default=1.0),
            ps_servers=_integer(data, "ps_servers", source, default=1),
            description=_string(data, "description", source, default=f"profile {source}"),
            collectives=_collectives(data.get("collectives", {}), source),
        )
    except LionsimError as e:  # a cross-field rule of Network: add the file
        raise LionsimError(f"{source}: {e}") from None


def _link(table: Any, where: str, source: str) -> Link:
    if not isinstance(table, dict):
        raise LionsimError(f"{source}: '{where}' must be a table of {', '.join(_LINK_KEYS)}")
    _no_unknown(table, tuple(_LINK_KEYS), f"{where}.", source)
    for key, required in _LINK_KEYS.items():
        if required and key not in table:
            raise LionsimError(f"{source}: missing key '{where}.{key}'")
    reduce = table.get("reduce_GBps")
    return Link.from_units(
        alpha_us=_number(table, "alpha_us", source, low=0.0, prefix=where),
        bandwidth_GBps=_number(table, "bandwidth_GBps", source, low=0.0, open_low=True, prefix=where),
        efficiency=_number(table, "efficiency", source, low=0.0, open_low=True, high=1.0, prefix=where, default=1.0),
        reduce_GBps=None
        if reduce is None
        else _number(table, "reduce_GBps", source, low=0.0, open_low=True, prefix=where),
    )


def _collectives(table: Any, source: str) -> tuple[FittedCollective, ...]:
    if not isinstance(table, dict):
        raise LionsimError(f"{source}: 'collectives' must be a table of [collectives.OP] tables")
    _no_unknown(table, tuple(FIT_ALGORITHMS), "collectives.", source)
    return tuple(_fitted(op, entry, f"collectives.{op}", source) for op, entry in table.items())


def _fitted(op: str, entry: Any, where: str, source: str) -> FittedCollective:
    if not isinstance(entry, dict):
        raise LionsimError(f"{source}: '{where}' must be a table of {', '.join(_FITTED_KEYS)}")
    _no_unknown(entry, _FITTED_KEYS, f"{where}.", source)
    algorithm = _string(entry, "algorithm", source, default=FIT_ALGORITHMS[op])
    if algorithm not in COLLECTIVE_ALGORITHMS or op not in COLLECTIVE_ALGORITHMS.get(algorithm).ops:
        raise LionsimError(f"{source}: '{where}.algorithm' = {algorithm!r} does not implement {op}; "
                           f"accepted: {', '.join(n for n, a in COLLECTIVE_ALGORITHMS.items() if op in a.ops)}")
    regimes = entry.get("regimes")
    if not isinstance(regimes, list) or not regimes:
        raise LionsimError(f"{source}: '{where}.regimes' must be a non-empty array of tables")
    parsed = []
    for i, regime in enumerate(regimes):
        at = f"{where}.regimes[{i}]"
        if not isinstance(regime, dict):
            raise LionsimError(f"{source}: '{at}' must be a table of {', '.join(_REGIME_KEYS)}")
        _no_unknown(regime, _REGIME_KEYS, f"{at}.", source)
        last = i == len(regimes) - 1
        if last == ("max_bytes" in regime):
            raise LionsimError(f"{source}: '{at}': every regime but the last needs max_bytes, the last none")
        link = Link.from_units(alpha_us=_number(regime, "alpha_us", source, low=0.0, prefix=at),
                               bandwidth_GBps=_number(regime, "bandwidth_GBps", source, low=0.0, open_low=True,
                                                      prefix=at))
        bound = math.inf if last else _number(regime, "max_bytes", source, low=1.0, prefix=at)
        parsed.append(Regime(max_bytes=bound, link=link))
    workers = entry.get("fitted_workers")
    if workers is not None:
        workers = _integer(entry, "fitted_workers", source, default=1)
    try:
        return FittedCollective(op=op, algorithm=algorithm, regimes=tuple(parsed), fitted_workers=workers)
    except LionsimError as e:
        raise LionsimError(f"{source}: {e}") from None


def _no_unknown(table: dict[str, Any], accepted: tuple[str, ...], prefix: str, source: str) -> None:
    for key in table:
        if key not in accepted:
            raise LionsimError(
                f"{source}: unknown key '{prefix}{key}'; accepted: {', '.join(prefix + a for a in accepted)}"
            )


def _number(
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


def _integer(table: dict[str, Any], key: str, source: str, *, default: int) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise LionsimError(f"{source}: '{key}' = {value!r} must be an integer >= 1")
    return value


def _string(table: dict[str, Any], key: str, source: str, *, default: str) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or not value:
        raise LionsimError(f"{source}: '{key}' = {value!r} must be a non-empty string")
    return value
