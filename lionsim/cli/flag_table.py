"""The strategies' option flags without importing the strategies: `bench --help`, `estimate
--help` and a bad value that option parsing refuses answer without torch.

Every strategy module imports torch, and the flags a strategy command takes come from every
registered strategy's Options (lionsim.strategies.core.given.flags). lionsim/data/strategy_flags.json
holds them, with a fingerprint of the sources they come from (every file of lionsim/strategies/).
It is used only while it is current (the fingerprint matches), no strategy module is imported
yet, and nothing else registers strategies (no --plugin file, no installed entry point);
otherwise the registry answers, as it always did, at the cost of importing torch. So a stale
table is never wrong, only slow (lionsim.registry_tables); tests/cli/test_quick_imports.py holds it
current. After changing a strategy or a transport, write it again, with the table of their names
(lionsim.name_table):

    python -m lionsim.cli.flag_table
"""

from __future__ import annotations

import functools
import json
import sys
from dataclasses import asdict, dataclass

from lionsim import registry_tables
from lionsim.registry_tables import PACKAGE

TABLE = PACKAGE / "data" / "strategy_flags.json"
SOURCES = PACKAGE / "strategies"
TYPES = {t.__name__: t for t in (int, float, str, bool)}


@dataclass(frozen=True, slots=True)
class FlagSpec:
    """One option of one built-in strategy, as its flag shows it (lionsim.strategies.core.form.OptionSpec's
    fields that a flag needs, without the check)."""

    strategy: str
    field: str
    flag: str
    type: type
    default: object
    help: str
    priced: str
    """What estimate prices of it (OptionRule.priced): its --help hides a flag it never reads."""

    @property
    def key(self) -> str:
        return self.flag[2:].replace("-", "_")


def fingerprint() -> str:
    """A digest of every source file of lionsim/strategies/ (names and contents)."""
    return registry_tables.fingerprint(SOURCES)


def _others_register() -> bool:
    """Whether strategies may come from elsewhere: a loaded plug-in file, an installed entry point."""
    from lionsim.plugins import LOADED

    return any(added.get("strategy") for _, added in LOADED.values()) or _installed()


def _installed() -> bool:
    """Whether an installed package announces strategies (scanned once a process: registry_tables)."""
    return registry_tables.installed("lionsim.strategies")


def usable() -> bool:
    """Whether the table gives the flags now: it is current, no strategy module is imported yet (then
    the registry is exact and costs nothing more) and nothing else registers strategies."""
    return "lionsim.strategies" not in sys.modules and cached() is not None and not _others_register()


@functools.lru_cache(maxsize=1)
def cached() -> dict[str, list[FlagSpec]] | None:
    """Config key -> the options its flag sets, from the table (None: no table, or a stale one)."""
    data = registry_tables.current(TABLE, SOURCES)
    if data is None:
        return None
    return {key: [FlagSpec(**{**s, "type": TYPES[s["type"]]}) for s in specs] for key, specs in data["flags"].items()}


def table() -> dict:
    """The table as the registry gives it now, lionsim's own strategies only (the JSON written to TABLE)."""
    from lionsim.strategies import STRATEGIES
    from lionsim.strategies.core.given import flags
    from lionsim.usercode import is_users

    out: dict[str, list[dict]] = {}
    for key, specs in flags().items():
        for s in specs:
            if not is_users(STRATEGIES.get(s.strategy)):
                out.setdefault(key, []).append({**asdict(FlagSpec(s.strategy, s.field, s.flag, s.type, s.default,
                                                                  s.help, s.priced)), "type": s.type.__name__})
    return {"fingerprint": fingerprint(), "flags": out}


if __name__ == "__main__":
    from lionsim import name_table

    TABLE.write_text(json.dumps(table(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {TABLE}")
    name_table.write()
