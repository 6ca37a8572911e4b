"""The built-in strategies' and transports' names, and which transports each strategy can use,
without importing them: bench, estimate and sweep refuse an unknown strategy or transport, or a
pair that cannot work, before torch loads (about 4 s), in the line the registries give.

lionsim/data/run_names.json records them, with a fingerprint of lionsim/strategies/ and
lionsim/transports/ (lionsim.registry_tables). check_runs applies lionsim.runs's rules to it, so
its refusals are the registries' own words, while it is current, neither registry is imported
yet (then they are exact and cost nothing more) and nothing else registers (no plug-in file
loaded, no installed entry point of lionsim.strategies or lionsim.transports); otherwise, and for
a name it holds no record of (hier: before a name that is not a built-in transport), it leaves
the names to the registries, which check them once torch has loaded, as they always did.
tests/cli/test_quick_names.py holds it current. After changing a strategy or a transport:

    python -m lionsim.cli.flag_table   (writes this table too)
"""

from __future__ import annotations

import functools
import json
import sys
from dataclasses import dataclass

from lionsim import registry_tables
from lionsim.errors import LionsimError
from lionsim.registry import Registry, match_name
from lionsim.registry_tables import PACKAGE
from lionsim.runs import Names, parse_runs

TABLE = PACKAGE / "data" / "run_names.json"
SOURCES = (PACKAGE / "strategies", PACKAGE / "transports")
GROUPS = ("lionsim.strategies", "lionsim.transports")
"""The entry point groups installed plug-ins register strategies and transports under."""


@dataclass(frozen=True, slots=True)
class StrategyRecord:
    """What lionsim.runs reads of a strategy class, as the table records it."""

    name: str
    payload_kind: str
    default_transport: str
    usable: tuple[str, ...]
    """Every transport it can use: the registered ones, then those made from a prefix (hier:T)."""
    known_as: tuple[str, ...] = ()
    """Strategy.known_as: the names an unknown one is matched against for its suggestion."""


@dataclass(frozen=True, slots=True)
class TransportRecord:
    name: str


class Unrecorded(Exception):
    """A name made from a prefix that the table holds no outcome for: the registry decides."""


def fingerprint() -> str:
    return registry_tables.fingerprint(*SOURCES)


def table() -> dict:
    """The table as the registries give it now, lionsim's own strategies and transports only (the
    JSON written to TABLE): for each prefix, what it makes of each transport (the made name, or the
    registry's refusal)."""
    from lionsim.strategies import STRATEGIES, can_use
    from lionsim.transports import TRANSPORTS
    from lionsim.usercode import is_users

    transports = [name for name, cls in TRANSPORTS.items() if not is_users(cls)]
    made: dict[str, dict[str, dict[str, str]]] = {}
    for prefix in TRANSPORTS.prefixes():
        made[prefix] = {}
        for inner in transports:
            try:
                made[prefix][inner] = {"name": TRANSPORTS.canonical(prefix + inner)}
            except LionsimError as e:
                made[prefix][inner] = {"refusal": str(e)}
    every = transports + [o["name"] for outcomes in made.values() for o in outcomes.values() if "name" in o]
    strategies = {name: {"payload_kind": cls.payload_kind, "default_transport": cls.default_transport,
                         "usable": [t for t in every if can_use(cls, t)], "known_as": list(cls.known_as)}
                  for name, cls in STRATEGIES.items() if not is_users(cls)}
    from lionsim.transports.hierarchy import UNCARRIED

    return {"fingerprint": fingerprint(), "strategies": strategies, "transports": transports, "made": made,
            "uncarried": dict(UNCARRIED)}


def names_from(data: dict) -> Names:
    """lionsim.runs's Names read from a table (table()'s dict): registries of the records, so an
    unknown name is refused by the registry's own code, with its list and nearest names."""
    strategies: Registry[StrategyRecord] = Registry("strategy", plugins=True)  # as STRATEGIES refuses
    for name, s in data["strategies"].items():
        strategies.add(name, StrategyRecord(name, s["payload_kind"], s["default_transport"], tuple(s["usable"]),
                                            tuple(s.get("known_as", ()))))
    transports: Registry[TransportRecord] = Registry("transport", plugins=True)
    for name in data["transports"]:
        transports.add(name, TransportRecord(name))
    for prefix, outcomes in data["made"].items():
        transports.prefix(prefix, functools.partial(_made, outcomes))

    def valid_transports(strategy: StrategyRecord) -> list[str]:
        return [t for t in data["transports"] if t in strategy.usable]

    return Names(strategies, transports, lambda strategy, transport: transport in strategy.usable, valid_transports,
                 data.get("uncarried", {}))


def _made(outcomes: dict[str, dict[str, str]], inner: str) -> tuple[str, TransportRecord]:
    """A prefix's maker over its recorded outcomes: a built-in transport (any case) -> the made
    name, or the registry's refusal; anything else is the registry's to decide (Unrecorded)."""
    found = match_name(inner, outcomes)
    if found is None:
        raise Unrecorded(inner)
    outcome = outcomes[found]
    if "refusal" in outcome:
        raise LionsimError(outcome["refusal"])
    return outcome["name"], TransportRecord(outcome["name"])


@functools.lru_cache(maxsize=1)
def _cached() -> Names | None:
    data = registry_tables.current(TABLE, *SOURCES)
    return None if data is None else names_from(data)


def _installed() -> bool:
    """Whether an installed package announces strategies or transports (scanned once a process)."""
    return registry_tables.installed(*GROUPS)


def _others_register() -> bool:
    """Whether names may come from elsewhere: a loaded plug-in file (whatever it registered: a
    transport may carry a built-in strategy's payload), an installed entry point."""
    from lionsim.plugins import LOADED

    return bool(LOADED) or _installed()


def table_names() -> Names | None:
    """The table's Names while it gives every name (module doc); None: ask the registries."""
    if "lionsim.strategies" in sys.modules or "lionsim.transports" in sys.modules or _others_register():
        return None
    return _cached()


def check_runs(specs: list[str], transport: str | None = None, source: str | None = None) -> None:
    """Refuse, before torch loads, what lionsim.runs.parse_runs refuses in `specs` and `transport`
    (its arguments), in its words, where the table answers for every name; else nothing: the
    registries check the names later."""
    names = table_names()
    if names is None:
        return
    try:
        parse_runs(list(specs), transport, source, names)
    except Unrecorded:
        return


def write() -> None:
    TABLE.write_text(json.dumps(table(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {TABLE}")


if __name__ == "__main__":
    write()
