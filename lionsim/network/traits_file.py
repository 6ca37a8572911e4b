"""The [traits] of a profile file (lionsim.network.traits), and the [measured] record.

    traits = "gloo"                 # a built-in by name (`lionsim networks --traits`), or a table:
    [traits]
    name = "gloo-1gbit"             # optional; the profile's name if absent
    backend = "gloo"                # gloo | nccl | any: a run on another backend refuses it
    host_GBps = 1.0                 # optional: one rank's own throughput cap (absent: none)
    description = "..."             # optional
    model = "nccl"                  # optional: price whole-group calls by NCCL's tuning model
    [traits.slow]                   # optional: small calls' slow mode
    probability = 0.2               # chance a call of at most max_bytes is slow
    extra_us = 3500.0               # what a slow call adds, microseconds
    max_bytes = 65536
    jitter = 0.3                    # optional: a fast call's standard deviation / its time (0)
    extra_jitter = 0.5              # optional: a slow call's extra's standard deviation / extra (0)
    calm_probability = 0.1          # optional: the slow share of back-to-back calls, the band's
                                    # lower edge (absent: probability)
    [traits.staging]                # optional: a library on host memory copies every call's
    GBps = 12.6                     # buffers device -> host and back, at this rate each way
    copy_us = 10.0                  # and this much per copy (absent table: no copies)
    [traits.reduce_GBps]            # optional, per dtype: bytes combined per second
    int8 = 2.5
    [traits.ops.all_to_all]         # optional, per op (absent: no floor, full duplex; comm --fit
                                    # writes every op, a stand-in for those it did not measure)
    floor_us = 110.0                # per-call floor beyond the algorithm's alpha terms
    algorithm = "pairwise"          # optional: the algorithm the library runs (absent: the cheapest)
    duplex = [{max_bytes = 2097152, share = 1.0}, {share = 0.6, floor_us = 900.0}]
                                    # by size: the share of the link each way, a regime's own floor

    [measured]                      # optional: where a fitted profile was measured (a record:
    backend = "gloo"                # hosts, ranks per host, interface, versions, date, command)
    ops = ["all_reduce"]            # the ops measured: the others' entries are stand-ins
                                    # (lionsim.network.unmeasured)
"""

from __future__ import annotations

import math
from typing import Any

from lionsim.errors import LionsimError
from lionsim.network.calls import OPS
from lionsim.network.collectives import COLLECTIVE_ALGORITHMS
from lionsim.network.keys import no_unknown, number, string
from lionsim.network.libraries import TRAITS
from lionsim.network.traits import DTYPES, OpTraits, Regime, SlowMode, Staging, Traits

BACKENDS = ("gloo", "nccl", "any")
_KEYS = ("name", "backend", "host_GBps", "description", "model", "slow", "reduce_GBps", "ops", "staging")
_SLOW_KEYS = ("probability", "extra_us", "max_bytes", "jitter", "extra_jitter", "calm_probability", "shared_cores")
_OP_KEYS = ("floor_us", "algorithm", "duplex")


def traits_from_value(value: Any, *, source: str, default_name: str) -> Traits:
    """A built-in traits name or a [traits] table (module doc)."""
    if isinstance(value, str):
        return TRAITS.get(value)
    if not isinstance(value, dict):
        raise LionsimError(f"{source}: 'traits' must be a built-in name ({', '.join(TRAITS.names())}) or a table")
    if not value:  # an empty table would price as ideal under the profile's name: say what it takes
        raise LionsimError(
            f"{source}: [traits] is empty; accepted: a built-in name (traits = \"gloo\"), a table "
            f"with its keys ({', '.join(sorted(_KEYS))}), or no traits at all for the run's library")
    no_unknown(value, _KEYS, "traits.", source)
    backend = string(value, "backend", source, default="any")
    if backend not in BACKENDS:
        raise LionsimError(f"{source}: 'traits.backend' = {backend!r}; accepted: {', '.join(BACKENDS)}")
    try:
        return Traits(
            name=string(value, "name", source, default=default_name),
            backend=backend,
            ops=tuple((op, _op(op, entry, source)) for op, entry in _table(value, "ops", source).items()),
            reduce_GBps=_reduce(_table(value, "reduce_GBps", source), source),
            host_GBps=number(value, "host_GBps", source, low=0.0, open_low=True, prefix="traits", default=math.inf)
            if "host_GBps" in value else math.inf,
            slow=_slow(_table(value, "slow", source), source),
            staging=_staging(_table(value, "staging", source), source) if "staging" in value else None,
            description=string(value, "description", source, default="-") if "description" in value else "",
            model=(model := string(value, "model", source, default="") if "model" in value else ""),
            runs=next((t.runs for _, t in TRAITS.items() if model and t.model == model), ()),  # what the model runs
        )
    except LionsimError as e:
        raise LionsimError(e.args[0] if e.args[0].startswith(source) else f"{source}: traits: {e}") from None


def _table(value: dict, key: str, source: str) -> dict:
    table = value.get(key, {})
    if not isinstance(table, dict):
        raise LionsimError(f"{source}: 'traits.{key}' must be a table")
    return table


def _op(op: str, entry: Any, source: str) -> OpTraits:
    where = f"traits.ops.{op}"
    if op not in OPS:
        raise LionsimError(f"{source}: unknown op '{where}'; accepted: {', '.join(OPS)}")
    if not isinstance(entry, dict):
        raise LionsimError(f"{source}: '{where}' must be a table of {', '.join(_OP_KEYS)}")
    no_unknown(entry, _OP_KEYS, f"{where}.", source)
    regimes = entry.get("duplex", [{"share": 1.0}])
    if not isinstance(regimes, list) or not regimes or not all(isinstance(r, dict) for r in regimes):
        raise LionsimError(f"{source}: '{where}.duplex' must be a non-empty array of {{max_bytes, share, floor_us}} "
                           "tables")
    duplex = []
    for i, regime in enumerate(regimes):
        at = f"{where}.duplex[{i}]"
        no_unknown(regime, ("max_bytes", "share", "floor_us"), f"{at}.", source)
        last = i == len(regimes) - 1
        if last == ("max_bytes" in regime):
            raise LionsimError(f"{source}: '{at}': every duplex regime but the last needs max_bytes, the last none")
        bound = math.inf if last else number(regime, "max_bytes", source, low=1.0, prefix=at)
        floor = number(regime, "floor_us", source, low=0.0, prefix=at) / 1e6 if "floor_us" in regime else None
        duplex.append(Regime(bound, number(regime, "share", source, low=0.0, open_low=True, prefix=at), floor))
    algorithm = string(entry, "algorithm", source, default="-") if "algorithm" in entry else ""
    if algorithm and (algorithm not in COLLECTIVE_ALGORITHMS or op not in COLLECTIVE_ALGORITHMS.get(algorithm).ops):
        accepted = ", ".join(n for n, a in COLLECTIVE_ALGORITHMS.items() if op in a.ops)
        raise LionsimError(f"{source}: '{where}.algorithm' = {algorithm!r} does not run {op}; accepted: {accepted}")
    return OpTraits(floor_s=number(entry, "floor_us", source, low=0.0, prefix=where, default=0.0) / 1e6,
                    algorithm=algorithm, duplex=tuple(duplex))


def _reduce(table: dict, source: str) -> tuple[tuple[str, float], ...]:
    no_unknown(table, DTYPES, "traits.reduce_GBps.", source)
    return tuple((d, number(table, d, source, low=0.0, open_low=True, prefix="traits.reduce_GBps")) for d in table)


def _slow(table: dict, source: str) -> SlowMode:
    no_unknown(table, _SLOW_KEYS, "traits.slow.", source)
    if not table:
        return SlowMode()
    return SlowMode(probability=number(table, "probability", source, low=0.0, high=1.0, prefix="traits.slow"),
                    extra_s=number(table, "extra_us", source, low=0.0, prefix="traits.slow") / 1e6,
                    max_bytes=number(table, "max_bytes", source, low=0.0, prefix="traits.slow"),
                    jitter=number(table, "jitter", source, low=0.0, prefix="traits.slow", default=0.0),
                    extra_jitter=number(table, "extra_jitter", source, low=0.0, prefix="traits.slow", default=0.0),
                    calm_probability=(number(table, "calm_probability", source, low=0.0, high=1.0, prefix="traits.slow")
                                      if "calm_probability" in table else None),
                    shared_cores=_flag(table, "shared_cores", source))


def _flag(table: dict, key: str, source: str) -> bool:
    """`table[key]`, TOML's true or false (absent: false), else one line naming it."""
    value = table.get(key, False)
    if not isinstance(value, bool):
        raise LionsimError(f"{source}: 'traits.slow.{key}' = {value!r} is not a boolean; accepted: true or false")
    return value


def _staging(table: dict, source: str) -> Staging:
    no_unknown(table, ("GBps", "copy_us"), "traits.staging.", source)
    return Staging(GBps=number(table, "GBps", source, low=0.0, open_low=True, prefix="traits.staging"),
                   copy_s=number(table, "copy_us", source, low=0.0, prefix="traits.staging", default=0.0) / 1e6)


def measured_record(value: Any, source: str) -> dict[str, Any]:
    """[measured]: a table of scalars and arrays, kept as written."""
    if not isinstance(value, dict):
        raise LionsimError(f"{source}: 'measured' must be a table (where the profile was measured)")
    for key, what in (("ops", "the ops measured"), ("stand_ins", "the ops priced by the measured ops' floor")):
        ops = value.get(key, [])  # read back: which ops the fit measured, which it stood in for (unmeasured.py)
        if not isinstance(ops, list) or not all(isinstance(op, str) and op in OPS for op in ops):
            raise LionsimError(f"{source}: 'measured.{key}' = {ops!r}; accepted: an array of {what} "
                               f"({', '.join(OPS)})")
    return dict(value)
