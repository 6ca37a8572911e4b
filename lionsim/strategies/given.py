"""Options a bench or estimate gives, checked against the strategies it runs (apart from
options.py, which the strategies themselves import)."""

from __future__ import annotations

from lionsim.errors import LionsimError
from lionsim.strategies.base import STRATEGIES
from lionsim.strategies.options import RULES, check_option, flag


def check_given(cfg, strategies: list) -> None:
    """Every option `cfg` gives (not None) is valid and read by at least one of `strategies` (the
    classes of a bench's runs): one line naming the flag otherwise, before anything runs."""
    for name in RULES:
        value = getattr(cfg, name, None)
        if value is None:
            continue
        check_option(name, value)
        if not any(name in cls.options for cls in strategies):
            users = [n for n, cls in STRATEGIES.items() if name in cls.options]
            raise LionsimError(f"{flag(name)} {value} applies to {', '.join(users)} and no run is one of them")
